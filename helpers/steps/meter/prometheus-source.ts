// The knob's meter read through a central Prometheus' HTTP API (`--prometheus-url`) instead of
// the engine's own /metrics. It only reads: the HTTP exchange is an injected function (the HTTP
// seam, so record and replay see it), every answer is validated (./prom-answer.ts), and the
// selector is rendered from parsed matchers (./prom-query.ts). Two queries per poll: the raw
// samples over the watch window (the meter, the traffic, `up` and the process start time of every
// scrape), and the metadata of the scrape targets the matchers select (how many targets, the
// meter family's type). The meter's name is asked for under any prefix, so the prefix trap
// (`vllm:` latency vs `radiance:` cadence) shows from the same answers. What the samples mean is
// the ladder's (./ladder.ts, through ./from-prometheus.ts).
import { fail, labelKey, parseApiAnswer, parseTargetsMetadata, type Matrix, type PromFailure, type PromSample, type TargetMetadata } from './prom-answer.ts'
import { buildQueries, defaultMatch, METRIC_NAME, parseMatch, PROCESS_START, renderMatchers, type LabelMatcher } from './prom-query.ts'

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
  /** Distinct `instance` labels of the returned series (evidence; the targets are counted in `targets`). */
  instances: readonly string[]
  /** The scrape targets the selector takes, one entry per target (two with one label set are two entries): from the `up` series, and the targets' metadata. */
  targets: readonly string[]
  /** The type the targets' metadata gives the meter's family (a family declared without a sample yet is listed too). */
  meterFamily?: string
  /** The targets' metadata was read, or the API has no such endpoint. */
  metadata: 'read' | 'unsupported'
  /** The range query's warnings (e.g. a partial response): such an answer proves no absence. */
  warnings: readonly string[]
}

export type PromResult = { ok: true; reading: PromReading } | { ok: false; failure: PromFailure }

export class PromSourceError extends Error {
  readonly failure: PromFailure
  constructor(failure: PromFailure) {
    super(`${failure.what} (${failure.where}); next: ${failure.next}`)
    this.failure = failure
  }
}

/**
 * One entry per scrape target: the label sets of the `up` series, each counted as often as the
 * targets' metadata lists one family for it (targets relabelled to one label set are still two
 * targets: Prometheus scrapes both, into one series).
 */
function targetsOf(ups: readonly SeriesReading[], entries: readonly TargetMetadata[]): string[] {
  const count = new Map<string, number>()
  for (const u of ups) count.set(renderMatchers(labelsOf(u.labels)), 1)
  const per = new Map<string, number>()
  for (const e of entries) {
    const key = `${renderMatchers(labelsOf(e.target))} ${e.metric}`
    per.set(key, (per.get(key) ?? 0) + 1)
  }
  for (const [key, n] of per) {
    const target = key.slice(0, key.lastIndexOf(' '))
    count.set(target, Math.max(count.get(target) ?? 0, n))
  }
  return [...count].sort(([a], [b]) => (a < b ? -1 : 1)).flatMap(([t, n]) => Array.from({ length: n }, () => t))
}

const labelsOf = (labels: Readonly<Record<string, string>>) => Object.keys(labels).sort().map((name) => ({ name, op: '=' as const, value: labels[name]! }))

function roleOf(name: string, meterName: string, trafficNames: readonly string[]): SeriesRole {
  if (name === meterName) return 'meter'
  if (trafficNames.includes(name)) return 'traffic'
  if (name === 'up') return 'up'
  if (name === PROCESS_START) return 'process'
  return 'meter-other-prefix'
}

/**
 * A meter source: `poll(sinceMs, nowMs)` reads the meter and traffic series with exactly two
 * requests, the raw samples covering [sinceMs, nowMs] and the targets' metadata. Bad options throw a PromSourceError
 * (kind bad-input: the operator's to fix); everything Prometheus answers comes back as a result.
 */
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

/** What one poll's two answers held: the raw samples, and the targets' metadata (or that the API has none). */
export interface PollAnswer {
  data: Matrix
  warnings: string[]
  entries: TargetMetadata[] | 'unsupported'
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

/** A target's scrape interval from its `up` samples: the median time between two; null with fewer than two. */
export function scrapeIntervalOf(samples: readonly PromSample[]): number | null {
  const gaps = samples.slice(1).map((p, i) => p.t - samples[i]!.t).sort((a, b) => a - b)
  return gaps.length === 0 ? null : gaps[gaps.length >> 1]!
}

/** What Prometheus answered for one target, read: its series by role, its scrapes and targets (the fleet's answer, cut to the target, is read the same way). */
export function readingOf(answer: PollAnswer, options: Pick<PromSourceOptions, 'meterName' | 'trafficNames' | 'model'>, matchers: readonly LabelMatcher[], sinceMs: number, nowMs: number): PromReading {
  const q = buildQueries(matchers, options.meterName, options.trafficNames, (nowMs - sinceMs) / 1000)
  const series = new Map<string, SeriesReading>()
  for (const r of answer.data) {
    const { __name__: name, ...labels } = r.metric
    const served = labels.model_name === undefined || options.model === undefined ? undefined : labels.model_name === options.model
    series.set(labelKey(r.metric), { name: name!, labels, role: roleOf(name!, options.meterName, options.trafficNames), servedModel: served, samples: r.values })
  }
  const all = [...series.values()].sort((a, b) => (a.name === b.name ? (labelKey(a.labels) < labelKey(b.labels) ? -1 : 1) : a.name < b.name ? -1 : 1))
  const ups = all.filter((s) => s.role === 'up')
  // Scrapes per target (`up` series): the fewest counts, so one target's scrapes never stand in for another's.
  const perTarget = ups.map((s) => s.samples.filter((p) => p.t >= sinceMs))
  const scrapes = perTarget.length
    ? {
        seen: Math.min(...perTarget.map((ps) => ps.length)),
        up: Math.min(...perTarget.map((ps) => ps.filter((p) => p.value === 1).length)),
        lastAt: perTarget.reduce<number | null>((m, ps) => ps.reduce<number | null>((n, p) => (n === null || p.t > n ? p.t : n), m), null),
      }
    : null
  const entries = answer.entries === 'unsupported' ? [] : answer.entries
  const family = [options.meterName, options.meterName.replace(/_total$/, '')]
  const declared = entries.find((e) => family.includes(e.metric))?.type
  return {
    at: nowMs,
    selector: q.selector,
    queries: [q.range, `targets/metadata ${q.targets}`],
    series: all,
    scrapes,
    prefixes: [...new Set(all.map((s) => (s.name.includes(':') ? s.name.slice(0, s.name.indexOf(':')) : '')))].sort(),
    instances: [...new Set(all.flatMap((s) => (s.labels.instance === undefined ? [] : [s.labels.instance])))].sort(),
    targets: targetsOf(ups, entries),
    ...(declared !== undefined ? { meterFamily: declared } : {}),
    metadata: answer.entries === 'unsupported' ? 'unsupported' : 'read',
    warnings: answer.warnings,
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
