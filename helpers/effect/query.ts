// Range queries (`/api/v1/query_range`) through the HTTP seam, so --mode record and replay see
// every one. This module is the range query's own: the meter source (helpers/steps/meter/
// prometheus-source.ts) asks for raw samples only, and its validator (helpers/prom/answer.ts) requires a
// __name__ on every series, which PromQL's functions (increase, last_over_time) drop. The checks
// are the same kind: HTTP status, JSON, status success, resultType matrix, every sample a finite
// time and a Prometheus float string, times rising, no series twice. A query that would ask for
// more points per series than Prometheus serves (11,000) is a bug here, never sent.
import type { HttpClient } from '../seams/http.ts'
import { HttpError } from '../seams/http.ts'
import type { PromFailure, PromSample } from '../prom/answer.ts'
import { MAX_POINTS } from './windows.ts'

export interface RangeQuery {
  expr: string
  /** The first evaluation time (ms). */
  startMs: number
  /** The last evaluation time at most (ms). */
  endMs: number
  stepMs: number
}

export type Matrix = Array<{ metric: Record<string, string>; values: PromSample[] }>

/** `operator`: the operator's to fix (a name that does not resolve, TLS, 401/403/404): exit 2, not inconclusive. */
export type RangeAnswer = { ok: true; data: Matrix; url: string } | { ok: false; failure: PromFailure; operator: boolean }

const seconds = (ms: number): string => (ms / 1000).toFixed(3).replace(/\.?0+$/, '')

/** The URL of a range query under Prometheus' base URL (a path prefix is kept). */
export function rangeUrl(base: string, q: RangeQuery): string {
  const points = Math.floor((q.endMs - q.startMs) / q.stepMs) + 1
  if (points > MAX_POINTS + 1 || q.stepMs <= 0 || q.endMs < q.startMs)
    throw new Error(
      `armproof effect: a range query of ${points} points (step ${q.stepMs} ms) is not asked: Prometheus serves at most 11,000 per series`,
    )
  const u = new URL(base)
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/api/v1/query_range`
  u.search = ''
  u.searchParams.set('query', q.expr)
  u.searchParams.set('start', seconds(q.startMs))
  u.searchParams.set('end', seconds(q.endMs))
  u.searchParams.set('step', seconds(q.stepMs))
  return u.toString()
}

/** How long one query may take; Prometheus' own default query timeout is 2 minutes. */
export const QUERY_TIMEOUT_MS = 120_000

export async function queryRange(http: HttpClient, base: string, q: RangeQuery): Promise<RangeAnswer> {
  const url = rangeUrl(base, q)
  const where = `GET ${url}`
  let res
  try {
    res = await http.request({
      method: 'GET',
      url,
      headers: { accept: 'application/json' },
      timeoutMs: QUERY_TIMEOUT_MS,
      maxBodyBytes: 64 * 1024 * 1024,
    })
  } catch (error) {
    if (!(error instanceof HttpError)) throw error
    const operator = error.failure === 'dns' || error.failure === 'tls'
    return {
      ok: false,
      operator,
      failure: {
        kind: 'unreachable',
        code: 'ARMPROOF_PROM_UNREACHABLE',
        what: `Prometheus did not answer: ${error.message}`,
        where,
        next: operator
          ? 'check the host name and the certificate of --prometheus-url (--ca-file for an internal CA)'
          : 'check --prometheus-url is reachable from here (Prometheus up, firewall), then run again',
      },
    }
  }
  const parsed = parseMatrix(res, where)
  return parsed.ok ? { ok: true, data: parsed.data as Matrix, url } : { ...parsed, operator: [401, 403, 404].includes(res.status) }
}

const VALUE = /^(?:NaN|[+-]?Inf|[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)$/
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/

function failure(kind: PromFailure['kind'], what: string, where: string, next: string): { ok: false; failure: PromFailure } {
  return { ok: false, failure: { kind, code: `ARMPROOF_PROM_${kind.toUpperCase().replace('-', '_')}`, what, where, next } }
}

/** A query_range answer, checked whole; the first problem otherwise. */
export function parseMatrix(
  res: { status: number; body: string },
  where: string,
): { ok: true; data: Matrix } | { ok: false; failure: PromFailure } {
  let json: { status?: unknown; errorType?: unknown; error?: unknown; data?: { resultType?: unknown; result?: unknown } }
  try {
    json = JSON.parse(res.body) as typeof json
  } catch {
    const head = res.body.slice(0, 120).replace(/\s+/g, ' ')
    return failure(
      res.status === 200 ? 'not-json' : 'http-status',
      `Prometheus answered HTTP ${res.status} with a body that is not JSON: ${head}`,
      where,
      "check --prometheus-url points at the Prometheus server itself (its API lives at /api/v1), not a proxy's login page",
    )
  }
  if (json?.status === 'error')
    return failure(
      'error-response',
      `Prometheus refused the query (HTTP ${res.status}, ${String(json.errorType ?? 'no errorType')}): ${String(json.error ?? 'no error text').slice(0, 300)}`,
      where,
      'a timeout or a limit means a Prometheus under load: run again, or judge shorter windows',
    )
  const bad = (why: string) =>
    failure(
      'bad-shape',
      `Prometheus' answer is not the API's shape: ${why}`,
      where,
      'check --prometheus-url reaches a Prometheus-compatible API (2.x /api/v1)',
    )
  if (res.status !== 200)
    return failure(
      'http-status',
      `Prometheus answered HTTP ${res.status}`,
      where,
      'check --prometheus-url and that Prometheus is up, then run again',
    )
  if (json?.status !== 'success' || !json.data || json.data.resultType !== 'matrix' || !Array.isArray(json.data.result))
    return bad('not a success with a matrix result')
  const seen = new Set<string>()
  const out: Matrix = []
  for (const [n, r] of (json.data.result as Array<{ metric?: unknown; values?: unknown }>).entries()) {
    const metric = r?.metric
    if (
      !metric ||
      typeof metric !== 'object' ||
      Array.isArray(metric) ||
      Object.entries(metric).some(([k, v]) => !(k === '__name__' || LABEL.test(k)) || typeof v !== 'string')
    )
      return bad(`result[${n}].metric is not labels`)
    const key = JSON.stringify(Object.entries(metric).sort(([a], [b]) => (a < b ? -1 : 1)))
    if (seen.has(key)) return bad(`result[${n}]: the same series twice`)
    seen.add(key)
    if (!Array.isArray(r.values)) return bad(`result[${n}].values is not a list`)
    const values: PromSample[] = []
    for (const x of r.values as unknown[]) {
      const [t, v] = Array.isArray(x) ? (x as [unknown, unknown]) : [undefined, undefined]
      if (typeof t !== 'number' || !Number.isFinite(t) || typeof v !== 'string' || !VALUE.test(v))
        return bad(`result[${n}]: a sample is not [time, "value"]`)
      const value = v === 'NaN' ? NaN : /Inf$/.test(v) ? (v.startsWith('-') ? -Infinity : Infinity) : Number(v)
      const ms = Math.round(t * 1000)
      if (values.length && ms <= values.at(-1)!.t) return bad(`result[${n}]: sample times do not rise`)
      values.push({ t: ms, value, raw: v })
    }
    out.push({ metric: metric as Record<string, string>, values })
  }
  return { ok: true, data: out }
}
