// One answer of Prometheus' HTTP API, validated before anything is read from it: the HTTP status,
// JSON, `status: success`, warnings, the range query's matrix (every label and every sample:
// values are Prometheus float strings, NaN and ±Inf kept) or the targets' metadata. What fails
// comes back as a typed failure.
import { LABEL_NAME, METRIC_NAME } from './query.ts'

export interface PromSample {
  /** Milliseconds since the epoch, as Prometheus stamped the scrape. */
  t: number
  /** NaN, +Inf and -Inf kept. */
  value: number
  /** The value string as Prometheus sent it. */
  raw: string
}

export type PromFailureKind = 'bad-input' | 'unreachable' | 'http-status' | 'not-json' | 'error-response' | 'bad-shape'

export interface PromFailure {
  kind: PromFailureKind
  code: string
  what: string
  where: string
  next: string
}

export const fail = (kind: PromFailureKind, what: string, where: string, next: string): PromFailure => ({
  kind,
  code: `ARMPROOF_PROM_${kind.toUpperCase().replace('-', '_')}`,
  what,
  where,
  next,
})

export type Matrix = Array<{ metric: Record<string, string>; values: PromSample[] }>

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
    if (!(k === '__name__' || LABEL_NAME.test(k)) || typeof v !== 'string')
      return `${where}: label ${JSON.stringify(k)} is not name → string`
  }
  const name = (x as Record<string, string>).__name__
  if (name === undefined || !METRIC_NAME.test(name)) return `${where}: a series without a valid __name__`
  return x as Record<string, string>
}

export const labelKey = (m: Record<string, string>): string => JSON.stringify(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : 1)))

const isStrings = (x: unknown): x is string[] => Array.isArray(x) && x.every((w) => typeof w === 'string')

/** The JSON envelope of any API answer: HTTP status, JSON, `status: success`, and `warnings` when given. */
export function envelope(
  res: { status: number; body: string },
  where: string,
): { ok: true; data: unknown; warnings: string[] } | { ok: false; failure: PromFailure } {
  let json: unknown
  try {
    json = JSON.parse(res.body)
  } catch {
    const head = res.body.slice(0, 120).replace(/\s+/g, ' ')
    if (res.status !== 200)
      return {
        ok: false,
        failure: fail(
          'http-status',
          `Prometheus answered HTTP ${res.status}: ${head}`,
          where,
          'check --prometheus-url points at the Prometheus server itself (not a proxy or login page), then run again',
        ),
      }
    return {
      ok: false,
      failure: fail(
        'not-json',
        `Prometheus answered HTTP 200 with a body that is not JSON: ${head}`,
        where,
        'check --prometheus-url points at the Prometheus server itself (the API lives at /api/v1/query)',
      ),
    }
  }
  const o = json as { status?: unknown; errorType?: unknown; error?: unknown; data?: unknown; warnings?: unknown }
  if (o?.status === 'error') {
    return {
      ok: false,
      failure: fail(
        'error-response',
        `Prometheus refused the query (HTTP ${res.status}, ${String(o.errorType ?? 'no errorType')}): ${String(o.error ?? 'no error text').slice(0, 300)}`,
        where,
        'check --prometheus-match is a valid selector; a timeout means a Prometheus under load: run again',
      ),
    }
  }
  if (res.status !== 200)
    return {
      ok: false,
      failure: fail(
        'http-status',
        `Prometheus answered HTTP ${res.status} without an error body`,
        where,
        'check --prometheus-url and that Prometheus is up, then run again',
      ),
    }
  if (o?.status !== 'success') return badShape(`status is ${JSON.stringify(o?.status)}, not "success"`, where)
  if (o.warnings !== undefined && !isStrings(o.warnings)) return badShape('warnings is not a list of strings', where)
  return { ok: true, data: o.data, warnings: o.warnings ?? [] }
}

export const badShape = (why: string, where: string) => ({
  ok: false as const,
  failure: fail(
    'bad-shape',
    `Prometheus' answer is not the API's shape: ${why}`,
    where,
    'check --prometheus-url reaches a Prometheus-compatible API (2.x /api/v1)',
  ),
})

/**
 * Validates a range query's answer: the envelope, resultType matrix, every series once, every
 * sample a [time, "float"] with rising times. `warnings` (e.g. a partial response) are kept: such
 * an answer may lack series, so it proves no absence.
 */
export function parseApiAnswer(
  res: { status: number; body: string },
  where: string,
): { ok: true; data: Matrix; warnings: string[] } | { ok: false; failure: PromFailure } {
  const env = envelope(res, where)
  if (!env.ok) return env
  const data = env.data as { resultType?: unknown; result?: unknown } | null | undefined
  const bad = (why: string) => badShape(why, where)
  if (!data || typeof data !== 'object') return bad('no data object')
  if (data.resultType !== 'matrix') return bad(`resultType is ${JSON.stringify(data.resultType)}, expected "matrix"`)
  if (!Array.isArray(data.result)) return bad('data.result is not an array')
  const seen = new Set<string>()
  const out: Matrix = []
  for (const [n, r] of (data.result as unknown[]).entries()) {
    const at = `result[${n}]`
    const m = metric((r as { metric?: unknown })?.metric, at)
    if (typeof m === 'string') return bad(m)
    const key = labelKey(m)
    if (seen.has(key)) return bad(`${at}: the same series twice`)
    seen.add(key)
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
  return { ok: true, data: out, warnings: env.warnings }
}

/** One entry of /api/v1/targets/metadata: a family as one scrape target declares it. */
export interface TargetMetadata {
  target: Record<string, string>
  metric: string
  type: string
}

/**
 * Validates an answer of /api/v1/targets/metadata: the envelope, and every entry a target (label
 * name → string), a metric name and a type. An API that has no such endpoint answers 404:
 * `unsupported` (a Prometheus-compatible store that does not scrape), which is no failure.
 */
export function parseTargetsMetadata(
  res: { status: number; body: string },
  where: string,
): { ok: true; entries: TargetMetadata[] | 'unsupported' } | { ok: false; failure: PromFailure } {
  if (res.status === 404) return { ok: true, entries: 'unsupported' }
  const env = envelope(res, where)
  if (!env.ok) return env
  if (!Array.isArray(env.data)) return badShape('the targets metadata is not a list', where)
  const entries: TargetMetadata[] = []
  for (const [n, e] of (env.data as unknown[]).entries()) {
    const x = e as { target?: unknown; metric?: unknown; type?: unknown } | null
    const target = x?.target
    if (
      !target ||
      typeof target !== 'object' ||
      Array.isArray(target) ||
      !Object.entries(target).every(([k, v]) => LABEL_NAME.test(k) && typeof v === 'string')
    )
      return badShape(`data[${n}]: target is not label name → string`, where)
    if (typeof x.metric !== 'string' || !METRIC_NAME.test(x.metric) || typeof x.type !== 'string')
      return badShape(`data[${n}]: no metric name and type`, where)
    entries.push({ target: target as Record<string, string>, metric: x.metric, type: x.type })
  }
  return { ok: true, entries }
}
