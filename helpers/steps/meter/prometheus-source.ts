// The knob's meter read through a central Prometheus' HTTP API (`--prometheus-url`) instead of
// the engine's own /metrics. It only reads: the HTTP exchange is an injected function (the HTTP
// seam, so record and replay see it), every answer is validated (helpers/prom/answer.ts), and the
// selector is rendered from parsed matchers (helpers/prom/query.ts). Two queries per poll: the raw
// samples over the watch window (the meter, the traffic, `up` and the process start time of every
// scrape), and the metadata of the scrape targets the matchers select (how many targets, the
// meter family's type). The meter's name is asked for under any prefix, so the prefix trap
// (`vllm:` latency vs `radiance:` cadence) shows from the same answers. What the samples mean is
// the ladder's (./ladder.ts, through ./from-prometheus.ts).
import { fail, parseApiAnswer, parseTargetsMetadata, type Matrix, type PromFailure } from '../../prom/answer.ts'
import { buildQueries, defaultMatch, METRIC_NAME, parseMatch, renderMatchers, type LabelMatcher } from '../../prom/query.ts'

export type { PromSample } from '../../prom/answer.ts'
export { readingOf, scrapeIntervalOf, type PollAnswer, type PromReading, type SeriesReading, type SeriesRole } from './prom-reading.ts'
import type { PollAnswer, PromReading } from './prom-reading.ts'
import { readingOf } from './prom-reading.ts'

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

export type PromResult = { ok: true; reading: PromReading } | { ok: false; failure: PromFailure }

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
    throw badInput(`--prometheus-url ${JSON.stringify(shown)} is not an http(s) URL`, 'pass the Prometheus server\'s URL, e.g. http://prometheus:9090')
  }
  if (base.username || base.password || shown !== options.prometheusUrl) {
    throw badInput('--prometheus-url carries credentials (user:password@): they would end up in argv, logs and reports', 'pass the URL without credentials; put an authenticating proxy or network policy in front of Prometheus')
  }
  for (const n of [options.meterName, ...options.trafficNames]) {
    if (!METRIC_NAME.test(n)) throw badInput(`${JSON.stringify(n)} is not a Prometheus metric name`, 'name the counter exactly as the engine exports it')
  }
  let matchers: LabelMatcher[]
  if (options.match === undefined) {
    try {
      matchers = defaultMatch(options.baseUrl)
    } catch {
      throw badInput(`--base-url ${JSON.stringify(options.baseUrl)} is not a URL, so no default --prometheus-match`, 'pass --prometheus-match, e.g. {instance="gpu-7:8000"}')
    }
  } else {
    const parsed = parseMatch(options.match)
    if ('error' in parsed) throw badInput(`--prometheus-match ${JSON.stringify(options.match)}: ${parsed.error}`, 'pass label matchers in braces, e.g. {job="radiance",instance="gpu-7:8000"}')
    matchers = parsed.matchers
  }
  return { base, matchers }
}

/** One poll's two requests for `matchers` over [sinceMs, nowMs]: the answers, validated, or the first failure. */
export async function askPoll(base: URL, matchers: readonly LabelMatcher[], meterName: string, trafficNames: readonly string[], sinceMs: number, nowMs: number, fetch: PromFetch): Promise<{ ok: true; answer: PollAnswer; queries: number } | { ok: false; failure: PromFailure; queries: number }> {
  const api = (path: string, params: Record<string, string>): string => {
    const u = new URL(`${base.pathname.replace(/\/+$/, '')}${path}`, base)
    for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v)
    return u.toString()
  }
  const ask = async <T>(url: string, read: (res: { status: number; body: string }, where: string) => T): Promise<T | { ok: false; failure: PromFailure }> => {
    const where = `GET ${url}`
    let res: { status: number; body: string }
    try {
      res = await fetch(url)
    } catch (error) {
      return { ok: false as const, failure: fail('unreachable', `Prometheus did not answer: ${error instanceof Error ? error.message : String(error)}`, where, 'check --prometheus-url is reachable from here (Prometheus up, firewall), then run again') }
    }
    return read(res, where)
  }
  const q = buildQueries(matchers, meterName, trafficNames, (nowMs - sinceMs) / 1000)
  const rangeUrl = api('/api/v1/query', { query: q.range, time: (nowMs / 1000).toFixed(3) })
  const targetsUrl = api('/api/v1/targets/metadata', { match_target: q.targets })
  const [window, meta] = await Promise.all([ask(rangeUrl, parseApiAnswer), ask(targetsUrl, parseTargetsMetadata)])
  if (!window.ok) return { ...window, queries: 2 }
  if (!meta.ok) return { ...meta, queries: 2 }
  return { ok: true, answer: { data: window.data, warnings: window.warnings, entries: meta.entries }, queries: 2 }
}

/**
 * The `up` samples of `matchers` over the `lookbackS` seconds before `nowMs` (one instant query of a
 * range selector): what a fleet reads once to know each target's scrape interval.
 */
export async function askUp(base: URL, matchers: readonly LabelMatcher[], lookbackS: number, nowMs: number, fetch: PromFetch): Promise<Matrix | null> {
  const u = new URL(`${base.pathname.replace(/\/+$/, '')}/api/v1/query`, base)
  u.searchParams.set('query', `${renderMatchers([{ name: '__name__', op: '=', value: 'up' }, ...matchers])}[${lookbackS}s]`)
  u.searchParams.set('time', (nowMs / 1000).toFixed(3))
  try {
    const r = parseApiAnswer(await fetch(u.toString()), `GET ${u}`)
    return r.ok ? r.data : null
  } catch {
    return null
  }
}

/**
 * A meter source: `poll(sinceMs, nowMs)` reads the meter and traffic series with exactly two
 * requests, the raw samples covering [sinceMs, nowMs] and the targets' metadata. Bad options throw a PromSourceError
 * (kind bad-input: the operator's to fix); everything Prometheus answers comes back as a result.
 */
export function createPromSource(options: PromSourceOptions) {
  const { base, matchers } = checkPromOptions(options)
  let queriesSent = 0

  async function poll(sinceMs: number, nowMs: number): Promise<PromResult> {
    const r = await askPoll(base, matchers, options.meterName, options.trafficNames, sinceMs, nowMs, options.fetch)
    queriesSent += r.queries
    if (!r.ok) return r
    return { ok: true, reading: readingOf(r.answer, options, matchers, sinceMs, nowMs) }
  }

  return {
    matchers: matchers as readonly LabelMatcher[],
    /** The selector every poll asks for (the window is the range query's only other part). */
    selector: buildQueries(matchers, options.meterName, options.trafficNames, 1).selector,
    poll,
    /** Queries sent so far (each poll sends exactly two). */
    queries: () => queriesSent,
  }
}

export type PromSource = ReturnType<typeof createPromSource>
