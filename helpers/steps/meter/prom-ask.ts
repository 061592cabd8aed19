// The queries of Prometheus' HTTP API the meter sends, through an injected fetch (the HTTP seam, so
// record and replay see them): one poll's two requests, and the `up` a fleet reads once. Every
// answer is validated (helpers/prom/answer.ts) before anything reads it.
import { fail, parseApiAnswer, parseTargetsMetadata, type Matrix, type PromFailure } from '../../prom/answer.ts'
import { buildQueries, renderMatchers, type LabelMatcher } from '../../prom/query.ts'
import type { PromFetch } from './prom-options.ts'
import type { PollAnswer } from './prom-reading.ts'
import { parseActiveTargets, type ActiveTarget } from '../../prom/targets.ts'

/** An API path under Prometheus' base URL (a path prefix kept), with its query parameters. */
function apiUrl(base: URL, path: string, params: Record<string, string>): string {
  const u = new URL(`${base.pathname.replace(/\/+$/, '')}${path}`, base)
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v)
  return u.toString()
}

/** One GET of the API: its answer read by `read`, or the failure of nothing answering. */
async function askOne<T>(
  fetch: PromFetch,
  url: string,
  read: (res: { status: number; body: string }, where: string) => T,
): Promise<T | { ok: false; failure: PromFailure }> {
  const where = `GET ${url}`
  let res: { status: number; body: string }
  try {
    res = await fetch(url)
  } catch (error) {
    return {
      ok: false as const,
      failure: fail(
        'unreachable',
        `Prometheus did not answer: ${error instanceof Error ? error.message : String(error)}`,
        where,
        'check --prometheus-url is reachable from here (Prometheus up, firewall), then run again',
      ),
    }
  }
  return read(res, where)
}

/** One poll's two requests for `matchers` over [sinceMs, nowMs]: the answers, validated, or the first failure. */
export async function askPoll(
  base: URL,
  matchers: readonly LabelMatcher[],
  meterName: string,
  trafficNames: readonly string[],
  sinceMs: number,
  nowMs: number,
  fetch: PromFetch,
): Promise<{ ok: true; answer: PollAnswer; queries: number } | { ok: false; failure: PromFailure; queries: number }> {
  const ask = <T>(url: string, read: (res: { status: number; body: string }, where: string) => T) => askOne(fetch, url, read)
  const q = buildQueries(matchers, meterName, trafficNames, (nowMs - sinceMs) / 1000)
  const rangeUrl = apiUrl(base, '/api/v1/query', { query: q.range, time: (nowMs / 1000).toFixed(3) })
  const targetsUrl = apiUrl(base, '/api/v1/targets/metadata', { match_target: q.targets })
  const [window, meta] = await Promise.all([ask(rangeUrl, parseApiAnswer), ask(targetsUrl, parseTargetsMetadata)])
  if (!window.ok) return { ...window, queries: 2 }
  if (!meta.ok) return { ...meta, queries: 2 }
  return { ok: true, answer: { data: window.data, warnings: window.warnings, entries: meta.entries }, queries: 2 }
}

/**
 * The `up` samples of `matchers` over the `lookbackS` seconds before `nowMs` (one instant query of a
 * range selector): what a fleet reads once to know each target's scrape interval.
 */
export async function askUp(
  base: URL,
  matchers: readonly LabelMatcher[],
  lookbackS: number,
  nowMs: number,
  fetch: PromFetch,
): Promise<Matrix | null> {
  const url = apiUrl(base, '/api/v1/query', {
    query: `${renderMatchers([{ name: '__name__', op: '=', value: 'up' }, ...matchers])}[${lookbackS}s]`,
    time: (nowMs / 1000).toFixed(3),
  })
  try {
    const r = parseApiAnswer(await fetch(url), `GET ${url}`)
    return r.ok ? r.data : null
  } catch {
    return null
  }
}

/**
 * What the series tie reads once (./prom-tie.ts): the raw samples of the poll's selector over
 * [fromMs, nowMs] (from before the pid started), and Prometheus' active targets (their labels and
 * scrape URLs). Two requests.
 */
export async function askTieHistory(
  base: URL,
  matchers: readonly LabelMatcher[],
  meterName: string,
  trafficNames: readonly string[],
  fromMs: number,
  nowMs: number,
  fetch: PromFetch,
): Promise<{ ok: true; data: Matrix; targets: ActiveTarget[] | 'unsupported' } | { ok: false; failure: PromFailure }> {
  const q = buildQueries(matchers, meterName, trafficNames, (nowMs - fromMs) / 1000)
  const rangeUrl = apiUrl(base, '/api/v1/query', { query: q.range, time: (nowMs / 1000).toFixed(3) })
  const targetsUrl = apiUrl(base, '/api/v1/targets', { state: 'active' })
  const [range, targets] = await Promise.all([askOne(fetch, rangeUrl, parseApiAnswer), askOne(fetch, targetsUrl, parseActiveTargets)])
  if (!range.ok) return range
  if (!targets.ok) return targets
  if (range.warnings.length > 0)
    return {
      ok: false,
      failure: fail(
        'bad-shape',
        `Prometheus answered the history with warnings (${range.warnings.join('; ').slice(0, 200)}): a partial answer proves no gap`,
        `GET ${rangeUrl}`,
        'fix what the warning names, then run again',
      ),
    }
  return { ok: true, data: range.data, targets: targets.targets }
}
