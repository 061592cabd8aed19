// The knob's meter read through a central Prometheus' HTTP API (`--prometheus-url`) instead of
// the engine's own /metrics. It only reads: the HTTP exchange is an injected function (the HTTP
// seam, so record and replay see it), every answer is validated (./prom-answer.ts), and the
// selector is rendered from parsed matchers (./prom-query.ts). Two queries per poll, both at one
// evaluation time: an instant query (what Prometheus holds as current) and the raw samples over
// the watch window. The meter's name is asked for under any prefix, so the prefix trap (`vllm:`
// latency vs `radiance:` cadence) shows from the same answers. What the samples mean is the
// ladder's (./ladder.ts, through ./from-prometheus.ts).
import { fail, labelKey, parseApiAnswer, type Matrix, type PromFailure, type PromSample, type Vector } from './prom-answer.ts'
import { buildQueries, defaultMatch, METRIC_NAME, parseMatch, PROCESS_START, type LabelMatcher } from './prom-query.ts'

export type { PromSample } from './prom-answer.ts'

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

export type SeriesRole = 'meter' | 'meter-other-prefix' | 'traffic' | 'up' | 'process'

export interface SeriesReading {
  name: string
  /** Every label but __name__. */
  labels: Readonly<Record<string, string>>
  role: SeriesRole
  /** model_name equals the served model; undefined when the series has no model_name or the model is unknown. */
  servedModel: boolean | undefined
  /** From the instant query; null when Prometheus holds no current sample (stale, or gone). */
  current: PromSample | null
  /** Raw samples in the window, oldest first. */
  samples: readonly PromSample[]
}

export interface PromReading {
  /** Evaluation time of both queries, ms. */
  at: number
  selector: string
  /** The PromQL sent, in order. */
  queries: readonly string[]
  series: readonly SeriesReading[]
  /** Scrapes in the window (`up` samples) and successful ones (`up` == 1), of the target scraped least when the selector takes several; null when no `up` matches the selector. */
  scrapes: { seen: number; up: number; lastAt: number | null } | null
  /** Sorted distinct prefixes before ':' of every returned series name ('' for none). */
  prefixes: readonly string[]
  /** Distinct `instance` labels of the returned series: more than one means the selector takes several targets. */
  instances: readonly string[]
}

export type PromResult = { ok: true; reading: PromReading } | { ok: false; failure: PromFailure }

export class PromSourceError extends Error {
  readonly failure: PromFailure
  constructor(failure: PromFailure) {
    super(`${failure.what} (${failure.where}); next: ${failure.next}`)
    this.failure = failure
  }
}

function roleOf(name: string, meterName: string, trafficNames: readonly string[]): SeriesRole {
  if (name === meterName) return 'meter'
  if (trafficNames.includes(name)) return 'traffic'
  if (name === 'up') return 'up'
  if (name === PROCESS_START) return 'process'
  return 'meter-other-prefix'
}

/**
 * A meter source: `poll(sinceMs, nowMs)` reads the meter and traffic series with exactly two
 * queries, the raw samples covering [sinceMs, nowMs]. Bad options throw a PromSourceError
 * (kind bad-input: the operator's to fix); everything Prometheus answers comes back as a result.
 */
export function createPromSource(options: PromSourceOptions) {
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
  const api = (query: string, timeS: number): string => {
    const u = new URL(`${base.pathname.replace(/\/+$/, '')}/api/v1/query`, base)
    u.searchParams.set('query', query)
    u.searchParams.set('time', timeS.toFixed(3))
    return u.toString()
  }
  let queriesSent = 0

  async function ask(query: string, timeS: number, expect: 'vector' | 'matrix') {
    const url = api(query, timeS)
    const where = `GET ${url}`
    queriesSent++
    let res: { status: number; body: string }
    try {
      res = await options.fetch(url)
    } catch (error) {
      return { ok: false as const, failure: fail('unreachable', `Prometheus did not answer: ${error instanceof Error ? error.message : String(error)}`, where, 'check --prometheus-url is reachable from here (Prometheus up, firewall), then run again') }
    }
    return parseApiAnswer(res, expect, where)
  }

  async function poll(sinceMs: number, nowMs: number): Promise<PromResult> {
    const windowS = (nowMs - sinceMs) / 1000
    const q = buildQueries(matchers, options.meterName, options.trafficNames, windowS)
    const timeS = nowMs / 1000
    const [now, window] = await Promise.all([ask(q.instant, timeS, 'vector'), ask(q.range, timeS, 'matrix')])
    if (!now.ok) return now
    if (!window.ok) return window
    const series = new Map<string, SeriesReading>()
    const entry = (m: Record<string, string>): SeriesReading => {
      const key = labelKey(m)
      let s = series.get(key)
      if (!s) {
        const { __name__: name, ...labels } = m
        const served = labels.model_name === undefined || options.model === undefined ? undefined : labels.model_name === options.model
        s = { name: name!, labels, role: roleOf(name!, options.meterName, options.trafficNames), servedModel: served, current: null, samples: [] }
        series.set(key, s)
      }
      return s
    }
    for (const r of window.data as Matrix) entry(r.metric).samples = r.values
    for (const r of now.data as Vector) entry(r.metric).current = r.value
    const all = [...series.values()].sort((a, b) => (a.name === b.name ? (labelKey(a.labels) < labelKey(b.labels) ? -1 : 1) : a.name < b.name ? -1 : 1))
    // Scrapes per target (`up` series): the fewest counts, so one target's scrapes never stand in for another's.
    const perTarget = all.filter((s) => s.role === 'up').map((s) => s.samples.filter((p) => p.t >= sinceMs))
    const scrapes = perTarget.length
      ? {
          seen: Math.min(...perTarget.map((ps) => ps.length)),
          up: Math.min(...perTarget.map((ps) => ps.filter((p) => p.value === 1).length)),
          lastAt: perTarget.reduce<number | null>((m, ps) => ps.reduce<number | null>((n, p) => (n === null || p.t > n ? p.t : n), m), null),
        }
      : null
    return {
      ok: true,
      reading: {
        at: nowMs,
        selector: q.selector,
        queries: [q.instant, q.range],
        series: all,
        scrapes,
        prefixes: [...new Set(all.map((s) => (s.name.includes(':') ? s.name.slice(0, s.name.indexOf(':')) : '')))].sort(),
        instances: [...new Set(all.flatMap((s) => (s.labels.instance === undefined ? [] : [s.labels.instance])))].sort(),
      },
    }
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
