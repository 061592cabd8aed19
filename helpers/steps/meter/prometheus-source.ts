// The knob's meter read through a central Prometheus' HTTP API (`--prometheus-url`) instead of
// the engine's own /metrics. It only reads: the HTTP exchange is an injected function (the HTTP
// seam, so record and replay see it), every answer is validated (helpers/prom/answer.ts), and the
// selector is rendered from parsed matchers (helpers/prom/query.ts). Two queries per poll: the raw
// samples over the watch window (the meter, the traffic, `up` and the process start time of every
// scrape), and the metadata of the scrape targets the matchers select (how many targets, the
// meter family's type). The meter's name is asked for under any prefix, so the prefix trap
// (`vllm:` latency vs `radiance:` cadence) shows from the same answers. What the samples mean is
// the ladder's (./ladder.ts, through ./from-prometheus.ts).
// The options are checked by ./prom-options.ts, the queries sent by ./prom-ask.ts.
import type { PromFailure } from '../../prom/answer.ts'
import { buildQueries, type LabelMatcher } from '../../prom/query.ts'
import { checkPromOptions, type PromSourceOptions } from './prom-options.ts'
import { askPoll, askTieHistory } from './prom-ask.ts'
import type { TieHistory } from './prom-tie-read.ts'
import { readingOf, type PromReading } from './prom-reading.ts'

export type PromResult = { ok: true; reading: PromReading } | { ok: false; failure: PromFailure }

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
    /** The series tie's reads over [fromMs, nowMs] (./prom-tie-read.ts): two requests, not counted as a poll's. */
    history: (fromMs: number, nowMs: number): Promise<TieHistory> =>
      tieHistory(base, matchers, options.meterName, options.trafficNames, fromMs, nowMs, options.fetch),
  }
}

export type PromSource = ReturnType<typeof createPromSource>

/** The tie's history through `fetch`, a failure said as the tie's. */
export async function tieHistory(
  base: URL,
  matchers: readonly LabelMatcher[],
  meterName: string,
  trafficNames: readonly string[],
  fromMs: number,
  nowMs: number,
  fetch: PromSourceOptions['fetch'],
): Promise<TieHistory> {
  const r = await askTieHistory(base, matchers, meterName, trafficNames, fromMs, nowMs, fetch)
  if (!r.ok)
    return { ok: false, observed: `the target's history could not be read: ${r.failure.what} (${r.failure.where})`, next: r.failure.next }
  return { ok: true, data: r.data, targets: r.targets, fromMs, nowMs }
}
