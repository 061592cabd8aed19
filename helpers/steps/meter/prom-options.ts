// The options of the meter's Prometheus source checked before any query: an http(s) URL without
// credentials, metric names Prometheus can hold, the matchers parsed (helpers/prom/query.ts),
// never pasted into PromQL. A bad one is the operator's to fix (kind bad-input).
import { fail, type PromFailure } from '../../prom/answer.ts'
import { defaultMatch, METRIC_NAME, parseMatch, type LabelMatcher } from '../../prom/query.ts'

/** The HTTP exchange: GET `url`, the status and the body text. Rejects when nothing answered. */
export type PromFetch = (url: string) => Promise<{ status: number; body: string }>

export interface PromSourceOptions {
  /** Prometheus' base URL, e.g. http://prometheus:9090 (a path prefix is kept). */
  prometheusUrl: string
  /** `--prometheus-match`, e.g. `{job="radiance",instance="gpu-7:8000"}`; default from baseUrl. */
  match?: string
  /** The engine's --base-url: its host:port is the default `instance`. */
  baseUrl: string
  /** The knob's counter, full sample name, e.g. radiance:engine_steps_held_total. */
  meterName: string
  /** The request counters that decide "no traffic", e.g. vllm:request_success_total. */
  trafficNames: readonly string[]
  /** The served model (`model_name`); undefined when unknown. */
  model?: string
  fetch: PromFetch
}

export class PromSourceError extends Error {
  readonly failure: PromFailure
  constructor(failure: PromFailure) {
    super(`${failure.what} (${failure.where}); next: ${failure.next}`)
    this.failure = failure
  }
}

/** The options checked (bad ones throw a PromSourceError, kind bad-input: the operator's to fix): the API's base, the matchers. */
export function checkPromOptions(options: Omit<PromSourceOptions, 'fetch'>): { base: URL; matchers: LabelMatcher[] } {
  // Userinfo is cut from everything the source says: a password in a URL must not reach a report.
  const shown = options.prometheusUrl.replace(/\/\/[^/?#]*@/, '//***@')
  const where0 = `--prometheus-url ${shown}`
  const badInput = (what: string, next: string) => new PromSourceError(fail('bad-input', what, where0, next))
  let base: URL
  try {
    base = new URL(options.prometheusUrl)
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error('scheme')
  } catch {
    throw badInput(
      `--prometheus-url ${JSON.stringify(shown)} is not an http(s) URL`,
      "pass the Prometheus server's URL, e.g. http://prometheus:9090",
    )
  }
  if (base.username || base.password || shown !== options.prometheusUrl) {
    throw badInput(
      '--prometheus-url carries credentials (user:password@): they would end up in argv, logs and reports',
      'pass the URL without credentials; put an authenticating proxy or network policy in front of Prometheus',
    )
  }
  for (const n of [options.meterName, ...options.trafficNames]) {
    if (!METRIC_NAME.test(n))
      throw badInput(`${JSON.stringify(n)} is not a Prometheus metric name`, 'name the counter exactly as the engine exports it')
  }
  let matchers: LabelMatcher[]
  if (options.match === undefined) {
    try {
      matchers = defaultMatch(options.baseUrl)
    } catch {
      throw badInput(
        `--base-url ${JSON.stringify(options.baseUrl)} is not a URL, so no default --prometheus-match`,
        'pass --prometheus-match, e.g. {instance="gpu-7:8000"}',
      )
    }
  } else {
    const parsed = parseMatch(options.match)
    if ('error' in parsed)
      throw badInput(
        `--prometheus-match ${JSON.stringify(options.match)}: ${parsed.error}`,
        'pass label matchers in braces, e.g. {job="radiance",instance="gpu-7:8000"}',
      )
    matchers = parsed.matchers
  }
  return { base, matchers }
}
