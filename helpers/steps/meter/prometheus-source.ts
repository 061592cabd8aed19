// The knob's meter read through a central Prometheus' HTTP API (`--prometheus-url`) instead of
// the engine's own /metrics. Pure and standalone: the HTTP exchange is an injected function, so
// the seam (record/replay) can be wired in later. Two queries per poll, both at one evaluation
// time: an instant query (what Prometheus holds as current: a stale series is not there) and the
// raw samples over the watch window (resets, movement, how many scrapes happened). The meter's
// name is asked for under any prefix, so the prefix trap (`vllm:` latency vs `radiance:` cadence)
// shows from the same answers. Absent is not zero, and only said after two scrapes of the target.

/** The HTTP exchange: GET `url`, the status and the body text. Rejects when nothing answered. */
export type PromFetch = (url: string) => Promise<{ status: number; body: string }>

export interface LabelMatcher {
  name: string
  op: '=' | '!=' | '=~' | '!~'
  value: string
}

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
  /** Scrape interval of the target's job, when known (see scrapeIntervalFromConfig). */
  scrapeIntervalMs?: number
  fetch: PromFetch
}

export type SeriesRole = 'meter' | 'meter-other-prefix' | 'traffic' | 'up'

export interface PromSample {
  /** Milliseconds since the epoch, as Prometheus stamped the scrape. */
  t: number
  /** NaN, +Inf and -Inf kept. */
  value: number
  /** The value string as Prometheus sent it. */
  raw: string
}

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
  /** Times a sample was below the one before it (a counter reset: a restart). */
  resets: number
  /** Sum of the rises across the window, a reset counting from zero (no extrapolation); NaN when a sample is not finite. */
  increase: number
}

/** present: current in Prometheus; stale: samples in the window, none current; absent: ≥ 2 scrapes and none; pending: too few scrapes to say. */
export type Presence = 'present' | 'stale' | 'absent' | 'pending'

export interface PromReading {
  /** Evaluation time of both queries, ms. */
  at: number
  selector: string
  /** The PromQL sent, in order. */
  queries: readonly string[]
  series: readonly SeriesReading[]
  /** The meter under its own name, for the served model's series when the model is known. */
  meter: Presence
  /** Scrapes in the window (`up` samples) and successful ones (`up` == 1), of the target scraped least when the selector takes several; null when no `up` matches the selector. */
  scrapes: { seen: number; up: number; lastAt: number | null } | null
  /** Sorted distinct prefixes before ':' of every returned series name ('' for none). */
  prefixes: readonly string[]
  /** Resets seen on the meter's series in the window. */
  resets: number
  /** Distinct `instance` labels of the returned series: more than one means the selector takes several targets. */
  instances: readonly string[]
}

export type PromFailureKind = 'bad-input' | 'unreachable' | 'http-status' | 'not-json' | 'error-response' | 'bad-shape'

export interface PromFailure {
  kind: PromFailureKind
  code: string
  what: string
  where: string
  next: string
}

export type PromResult = { ok: true; reading: PromReading } | { ok: false; failure: PromFailure }

export class PromSourceError extends Error {
  readonly failure: PromFailure
  constructor(failure: PromFailure) {
    super(`${failure.what} (${failure.where}); next: ${failure.next}`)
    this.failure = failure
  }
}

const fail = (kind: PromFailureKind, what: string, where: string, next: string): PromFailure => ({
  kind,
  code: `ARMPROOF_PROM_${kind.toUpperCase().replace('-', '_')}`,
  what,
  where,
  next,
})

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/

/** A PromQL double-quoted string literal for any text: the value can never end the string early. */
export function promString(value: string): string {
  let out = '"'
  for (const ch of value) {
    const c = ch.codePointAt(0)!
    if (ch === '\\') out += '\\\\'
    else if (ch === '"') out += '\\"'
    else if (ch === '\n') out += '\\n'
    else if (ch === '\r') out += '\\r'
    else if (ch === '\t') out += '\\t'
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`
    else out += ch
  }
  return `${out}"`
}

export function renderMatchers(matchers: readonly LabelMatcher[]): string {
  return `{${matchers.map((m) => `${m.name}${m.op}${promString(m.value)}`).join(',')}}`
}

const ESCAPES: Readonly<Record<string, string>> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', '"': '"', "'": "'" }

/**
 * Parses a `--prometheus-match` selector: `{name op "value", …}`, label matchers only (no metric
 * name, no __name__: the meter source sets those). Returns the matchers or why not.
 */
export function parseMatch(text: string): { matchers: LabelMatcher[] } | { error: string } {
  const s = text.trim()
  if (!s.startsWith('{') || !s.endsWith('}')) return { error: 'a selector is label matchers in braces, e.g. {job="radiance",instance="gpu-7:8000"}' }
  let i = 1
  const end = s.length - 1
  const matchers: LabelMatcher[] = []
  const ws = (): void => {
    while (i < end && /\s/.test(s[i]!)) i++
  }
  while (true) {
    ws()
    if (i >= end) break
    const name = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(s.slice(i))?.[0]
    if (!name) return { error: `a label name expected at character ${i + 1}` }
    if (name === '__name__') return { error: 'the selector may not name the metric (__name__): armproof asks for the meter and traffic names itself' }
    i += name.length
    ws()
    const op = (['=~', '!~', '!=', '='] as const).find((o) => s.startsWith(o, i))
    if (!op) return { error: `an operator (=, !=, =~, !~) expected after ${name}` }
    i += op.length
    ws()
    const quote = s[i]
    if (quote !== '"' && quote !== "'" && quote !== '`') return { error: `a quoted value expected after ${name}${op}` }
    i++
    let value = ''
    while (true) {
      if (i >= end) return { error: `the value of ${name} is not closed` }
      const ch = s[i]!
      if (ch === quote) break
      if (ch === '\n' && quote !== '`') return { error: `the value of ${name} holds a raw newline` }
      if (ch === '\\' && quote !== '`') {
        const e = s[i + 1]
        const hex = e === 'x' ? /^[0-9a-fA-F]{2}/.exec(s.slice(i + 2, i + 4))?.[0] : undefined
        if (hex) {
          value += String.fromCharCode(parseInt(hex, 16))
          i += 4
          continue
        }
        if (e === undefined || ESCAPES[e] === undefined) return { error: `the value of ${name} has an escape armproof does not accept (\\${e ?? ''})` }
        value += ESCAPES[e]
        i += 2
        continue
      }
      value += ch
      i++
    }
    i++
    matchers.push({ name, op, value })
    ws()
    if (i < end && s[i] !== ',') return { error: `a comma expected after the value of ${name}` }
    if (i < end) i++
  }
  if (matchers.length === 0) return { error: 'an empty selector would take every target\'s series: name at least one label, e.g. instance' }
  if (!matchers.some((m) => m.op === '=' && m.value !== '')) return { error: 'at least one matcher must be label="value" with a value, or the selector may take another target\'s series' }
  return { matchers }
}

/** The default `--prometheus-match`: `{instance="<host:port of --base-url>"}` (the scheme's default port spelled out). */
export function defaultMatch(baseUrl: string): LabelMatcher[] {
  const u = new URL(baseUrl)
  const port = u.port || (u.protocol === 'https:' ? '443' : '80')
  return [{ name: 'instance', op: '=', value: `${u.hostname}:${port}` }]
}

const regexQuote = (name: string): string => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** The meter's name after its prefix (`radiance:engine_steps_held_total` → `engine_steps_held_total`). */
const baseName = (name: string): string => name.slice(name.lastIndexOf(':') + 1)

/** The two queries of one poll, for a window of `windowS` seconds. */
export function buildQueries(matchers: readonly LabelMatcher[], meterName: string, trafficNames: readonly string[], windowS: number): { selector: string; instant: string; range: string } {
  const names = [`(?:[a-zA-Z_][a-zA-Z0-9_]*:)?${regexQuote(baseName(meterName))}`, ...trafficNames.map(regexQuote), 'up']
  const selector = renderMatchers([{ name: '__name__', op: '=~', value: names.join('|') }, ...matchers])
  return { selector, instant: selector, range: `${selector}[${Math.max(1, Math.ceil(windowS))}s]` }
}

type Vector = Array<{ metric: Record<string, string>; value: PromSample }>
type Matrix = Array<{ metric: Record<string, string>; values: PromSample[] }>

const VALUE = /^(?:NaN|[+-]?Inf|[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)$/

function sample(x: unknown, where: string): PromSample | string {
  if (!Array.isArray(x) || x.length !== 2) return `${where}: a sample is [time, "value"]`
  const [t, v] = x as [unknown, unknown]
  if (typeof t !== 'number' || !Number.isFinite(t)) return `${where}: the sample time is not a finite number`
  if (typeof v !== 'string' || !VALUE.test(v)) return `${where}: the sample value ${JSON.stringify(v)} is not a Prometheus float string`
  const value = v === 'NaN' ? NaN : /Inf$/.test(v) ? (v.startsWith('-') ? -Infinity : Infinity) : Number(v)
  return { t: Math.round(t * 1000), value, raw: v }
}

function metric(x: unknown, where: string): Record<string, string> | string {
  if (!x || typeof x !== 'object' || Array.isArray(x)) return `${where}: metric is not an object`
  for (const [k, v] of Object.entries(x)) {
    if (!(k === '__name__' || LABEL_NAME.test(k)) || typeof v !== 'string') return `${where}: label ${JSON.stringify(k)} is not name → string`
  }
  const name = (x as Record<string, string>).__name__
  if (name === undefined || !METRIC_NAME.test(name)) return `${where}: a series without a valid __name__`
  return x as Record<string, string>
}

const labelKey = (m: Record<string, string>): string => JSON.stringify(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : 1)))

/** Validates an API answer: HTTP status, JSON, status success, the expected resultType, every sample. */
export function parseApiAnswer(res: { status: number; body: string }, expect: 'vector' | 'matrix', where: string): { ok: true; data: Vector | Matrix } | { ok: false; failure: PromFailure } {
  let json: unknown
  try {
    json = JSON.parse(res.body)
  } catch {
    const head = res.body.slice(0, 120).replace(/\s+/g, ' ')
    if (res.status !== 200) return { ok: false, failure: fail('http-status', `Prometheus answered HTTP ${res.status}: ${head}`, where, 'check --prometheus-url points at the Prometheus server itself (not a proxy or login page), then run again') }
    return { ok: false, failure: fail('not-json', `Prometheus answered HTTP 200 with a body that is not JSON: ${head}`, where, 'check --prometheus-url points at the Prometheus server itself (the API lives at /api/v1/query)') }
  }
  const o = json as { status?: unknown; errorType?: unknown; error?: unknown; data?: { resultType?: unknown; result?: unknown } }
  if (o?.status === 'error') {
    return { ok: false, failure: fail('error-response', `Prometheus refused the query (HTTP ${res.status}, ${String(o.errorType ?? 'no errorType')}): ${String(o.error ?? 'no error text').slice(0, 300)}`, where, 'check --prometheus-match is a valid selector; a timeout means a Prometheus under load: run again') }
  }
  const bad = (why: string) => ({ ok: false as const, failure: fail('bad-shape', `Prometheus' answer is not the API's shape: ${why}`, where, 'check --prometheus-url reaches a Prometheus-compatible API (2.x /api/v1)') })
  if (res.status !== 200) return { ok: false, failure: fail('http-status', `Prometheus answered HTTP ${res.status} without an error body`, where, 'check --prometheus-url and that Prometheus is up, then run again') }
  if (o?.status !== 'success') return bad(`status is ${JSON.stringify(o?.status)}, not "success"`)
  if (!o.data || typeof o.data !== 'object') return bad('no data object')
  if (o.data.resultType !== expect) return bad(`resultType is ${JSON.stringify(o.data.resultType)}, expected "${expect}"`)
  if (!Array.isArray(o.data.result)) return bad('data.result is not an array')
  const seen = new Set<string>()
  const out: Array<{ metric: Record<string, string>; value?: PromSample; values?: PromSample[] }> = []
  for (const [n, r] of (o.data.result as unknown[]).entries()) {
    const at = `result[${n}]`
    const m = metric((r as { metric?: unknown })?.metric, at)
    if (typeof m === 'string') return bad(m)
    const key = labelKey(m)
    if (seen.has(key)) return bad(`${at}: the same series twice`)
    seen.add(key)
    if (expect === 'vector') {
      const s = sample((r as { value?: unknown }).value, at)
      if (typeof s === 'string') return bad(s)
      out.push({ metric: m, value: s })
    } else {
      const raw = (r as { values?: unknown }).values
      if (!Array.isArray(raw)) return bad(`${at}: values is not an array`)
      const values: PromSample[] = []
      for (const [k, x] of raw.entries()) {
        const s = sample(x, `${at}.values[${k}]`)
        if (typeof s === 'string') return bad(s)
        if (values.length && s.t <= values[values.length - 1]!.t) return bad(`${at}: sample times do not rise`)
        values.push(s)
      }
      out.push({ metric: m, values })
    }
  }
  return { ok: true, data: out as Vector | Matrix }
}

/** Resets and the rise across raw samples, as Prometheus counts them (a drop restarts from zero). */
export function counterWalk(samples: readonly PromSample[]): { resets: number; increase: number } {
  let resets = 0
  let increase = 0
  for (let k = 1; k < samples.length; k++) {
    const a = samples[k - 1]!.value
    const b = samples[k]!.value
    if (!Number.isFinite(a) || !Number.isFinite(b)) increase = NaN
    else if (b < a) {
      resets++
      increase += b
    } else increase += b - a
  }
  return { resets, increase }
}

function roleOf(name: string, meterName: string, trafficNames: readonly string[]): SeriesRole {
  if (name === meterName) return 'meter'
  if (trafficNames.includes(name)) return 'traffic'
  if (name === 'up') return 'up'
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
        s = { name: name!, labels, role: roleOf(name!, options.meterName, options.trafficNames), servedModel: served, current: null, samples: [], resets: 0, increase: 0 }
        series.set(key, s)
      }
      return s
    }
    for (const r of window.data as Matrix) Object.assign(entry(r.metric), { samples: r.values }, counterWalk(r.values))
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
    const meters = all.filter((s) => s.role === 'meter' && s.servedModel !== false)
    let meter: Presence
    if (meters.some((s) => s.current)) meter = 'present'
    else if (meters.some((s) => s.samples.length)) meter = 'stale'
    // Without `up` in the selector, time stands in for scrapes, and only once the selector
    // matches something (a selector that matches nothing says nothing about the meter).
    else if (scrapes ? scrapes.up >= 2 : all.length > 0 && options.scrapeIntervalMs !== undefined && nowMs - sinceMs >= 2 * options.scrapeIntervalMs) meter = 'absent'
    else meter = 'pending'
    return {
      ok: true,
      reading: {
        at: nowMs,
        selector: q.selector,
        queries: [q.instant, q.range],
        series: all,
        meter,
        scrapes,
        prefixes: [...new Set(all.map((s) => (s.name.includes(':') ? s.name.slice(0, s.name.indexOf(':')) : '')))].sort(),
        resets: meters.reduce((n, s) => n + s.resets, 0),
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

/** A Prometheus duration (`1s`, `1m30s`, `250ms`, `1h`) in ms; undefined when not one. */
export function parsePromDuration(text: string): number | undefined {
  const units: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, y: 31_536_000_000 }
  const re = /(\d+)(ms|s|m|h|d|w|y)/y
  let ms = 0
  let i = 0
  if (!text) return undefined
  while (i < text.length) {
    re.lastIndex = i
    const m = re.exec(text)
    if (!m) return undefined
    ms += Number(m[1]) * units[m[2]!]!
    i = re.lastIndex
  }
  return ms
}

/**
 * The scrape interval of `job` (or the global one) from the YAML that /api/v1/status/config
 * returns: Prometheus writes it normalised, every job with its own `scrape_interval:`.
 */
export function scrapeIntervalFromConfig(yaml: string, job?: string): number | undefined {
  const lines = yaml.split('\n')
  let global: number | undefined
  let current: string | undefined
  let section = ''
  for (const line of lines) {
    const top = /^([A-Za-z_][^:]*):/.exec(line)
    if (top) {
      section = top[1]!
      current = undefined
      continue
    }
    const jobLine = /^- job_name: (.*)$/.exec(line) ?? /^ {2}- job_name: (.*)$/.exec(line)
    if (section === 'scrape_configs' && jobLine) {
      current = jobLine[1]!.replace(/^["']|["']$/g, '')
      continue
    }
    const iv = /^ {2}(?: {2})?scrape_interval: (\S+)$/.exec(line)
    if (!iv) continue
    if (section === 'global') global = parsePromDuration(iv[1]!)
    else if (section === 'scrape_configs' && job !== undefined && current === job) return parsePromDuration(iv[1]!)
  }
  return global
}
