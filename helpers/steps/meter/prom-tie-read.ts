// The series tie's reads (./prom-tie.ts judges them): once per meter step, when Prometheus holds no
// process_start_time_seconds of the target, the target's history from before the pid started and
// Prometheus' active targets (./prom-ask.ts askTieHistory); on every poll after, that history with
// the poll's newer samples, so a break during the watch unties the series too.
import { labelKey, type Matrix } from '../../prom/answer.ts'
import { defaultMatch } from '../../prom/query.ts'
import type { ActiveTarget } from '../../prom/targets.ts'
import type { EngineProcess } from '../context.ts'
import { HOW } from './bind.ts'
import type { PromReading } from './prom-reading.ts'
import { LOOKBACK_BEFORE_S, MAX_AGE_S, seriesTie, type Tie, type TieSeries } from './prom-tie.ts'

export type TieHistory =
  | { ok: true; data: Matrix; targets: ActiveTarget[] | 'unsupported'; fromMs: number; nowMs: number }
  | { ok: false; observed: string; next: string }

/** The tie's evidence: its verdict, what it read, and the two queries it sent. */
export type TieRecord = { tied: boolean; said: string; queries: number; evidence?: unknown }

/** Whether the tie is needed: a pid whose start is known, and no process_start_time_seconds in Prometheus' answer. */
export const needsTie = (engine: EngineProcess | undefined, r: PromReading): engine is EngineProcess & { startTimeSeconds: number } =>
  engine !== undefined && engine.startTimeSeconds !== null && !r.series.some((s) => s.role === 'process')

/** The window the history is read over: from LOOKBACK_BEFORE_S before the pid's start; null when the pid is older than MAX_AGE_S. */
export function historyWindow(startS: number, nowMs: number): { fromMs: number } | null {
  if (nowMs - startS * 1000 > MAX_AGE_S * 1000) return null
  return { fromMs: Math.floor((startS - LOOKBACK_BEFORE_S) * 1000) }
}

const isCounter = (name: string) => name !== 'up' && name.endsWith('_total')

/** The tie of the poll's series to the pid, from the history and the poll's own newer samples. */
export function tieNow(engine: EngineProcess & { startTimeSeconds: number }, baseUrl: string, history: TieHistory, r: PromReading): Tie {
  if (!history.ok) return { tied: false, observed: history.observed, next: history.next }
  const merged = new Map<string, TieSeries>()
  for (const s of history.data) {
    const { __name__: name, ...labels } = s.metric
    merged.set(labelKey(s.metric), { name: name!, labels, samples: s.values })
  }
  for (const s of r.series) {
    const key = labelKey({ __name__: s.name, ...s.labels })
    const old = merged.get(key)
    const newer = s.samples.filter((p) => p.t > history.nowMs)
    merged.set(key, { name: s.name, labels: s.labels, samples: [...(old?.samples ?? []), ...newer] })
  }
  const all = [...merged.values()]
  let endpoint = ''
  try {
    endpoint = defaultMatch(baseUrl)[0]!.value
  } catch {
    // no base URL (a replay without one): the endpoint matches no target
  }
  return seriesTie({
    pid: engine.pid,
    startS: engine.startTimeSeconds,
    resolutionS: engine.startTimeResolution,
    listenerTied: engine.listenerTied,
    foundHow: HOW[engine.foundBy],
    endpoint,
    ups: all.filter((s) => s.name === 'up'),
    counters: all.filter((s) => isCounter(s.name)),
    targets: history.targets,
    fromMs: history.fromMs,
  })
}

/** What the report keeps of a tie. */
export function tieRecord(tie: Tie, queries: number): TieRecord {
  return tie.tied ? { tied: true, said: tie.said, queries, evidence: tie.evidence } : { tied: false, said: tie.observed, queries }
}
