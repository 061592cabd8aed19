// The effect as data: what `--out` writes, what the table, the summary, the pictures and the vault
// line are made from. Numbers that are not finite (a shift from zero) are null in the JSON, with
// the reason in words beside them.
import type { BaselineKind } from './windows.ts'
import type { Direction } from './metrics.ts'
import type { MetricVerdict } from './judge.ts'

export interface WindowStats {
  from: string
  to: string
  /** Observations (a histogram), or what a ratio counts (requests, steps, the numerator of a rate). */
  count: number
  p50: number | null
  p95: number | null
  /** The quantile lies in the +Inf bucket: the value shown is the highest finite edge, the truth is above it. */
  beyond: Array<'p50' | 'p95'>
  /** A ratio's value over the whole window. */
  value: number | null
  resets: number
  /** The scrape interval the samples show, seconds. */
  intervalS: number | null
}

export interface ShiftOut {
  /** after / baseline − 1; null from a baseline of zero (see `fromZero`). */
  relative: number | null
  fromZero: boolean
  absolute: number
  low: number | null
  high: number | null
  /** The permutation test's p over the chunks. */
  p: number
  significant: boolean
  practical: boolean
}

export interface MetricResult {
  id: string
  title: string
  kind: 'histogram' | 'ratio'
  unit: string
  direction: Direction
  threshold: number
  floor: number
  /** The series read, as PromQL selectors. */
  series: string[]
  verdict: MetricVerdict
  reason: string
  next: string | null
  baseline: WindowStats | null
  before: WindowStats | null
  after: WindowStats | null
  shifts: Record<string, ShiftOut>
  test: { on: 'observations' | 'chunks'; u: number; z: number; p: number; superiority: number } | null
  /** A histogram's compared distributions: finite edges and the summed counts per window (the +Inf bucket last). */
  distribution: { edges: number[]; baseline: number[] | null; before: number[] | null; after: number[] | null } | null
  /** Restarts accounted for, and the like. */
  notes: string[]
  /** The picture beside --out, relative to it. */
  picture: string | null
}

export type EffectVerdict = 'better' | 'worse' | 'no change' | 'inconclusive'

export interface WindowOut {
  from: string
  to: string
  chunkS: number
}

export interface EffectResult {
  tool: { name: 'armproof'; version: string }
  mode: 'live' | 'record' | 'replay'
  arm: {
    svc: string
    knob: string
    value: string | null
    previous: string | null
    at: string
    /** Where the arm's time came from: --armed-at, the report's start, or the engine's restart Prometheus shows just before that start. */
    from: 'armed-at' | 'report' | 'restart'
    report: string | null
    endpoint: string | null
  }
  prometheus: { url: string; selector: string }
  windows: { before: WindowOut; after: WindowOut; baseline: WindowOut & { kind: BaselineKind; why: string } }
  metrics: MetricResult[]
  verdict: EffectVerdict
  exitCode: number
  /** The arm's record shows a second change (./second-change.ts): the verdict is inconclusive, whatever the metrics say. */
  secondChange?: { said: string; changes: Array<{ what: string; before: string; now: string }> }
  queries: number
  startedAt: string
  finishedAt: string
}

/** Exit codes of `effect` (the contract's): worse first, then inconclusive. */
export const EFFECT_EXIT = { ok: 0, worse: 1, config: 2, inconclusive: 3, unwritten: 4 } as const

export function overall(metrics: readonly MetricResult[]): { verdict: EffectVerdict; exitCode: number } {
  if (metrics.some((m) => m.verdict === 'worse')) return { verdict: 'worse', exitCode: EFFECT_EXIT.worse }
  if (metrics.length === 0 || metrics.some((m) => m.verdict === 'inconclusive'))
    return { verdict: 'inconclusive', exitCode: EFFECT_EXIT.inconclusive }
  if (metrics.some((m) => m.verdict === 'better')) return { verdict: 'better', exitCode: EFFECT_EXIT.ok }
  return { verdict: 'no change', exitCode: EFFECT_EXIT.ok }
}

/** The result as written to --out: two-space JSON, a final newline; non-finite numbers as null. */
export function resultJson(result: EffectResult): string {
  return `${JSON.stringify(result, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2)}\n`
}
