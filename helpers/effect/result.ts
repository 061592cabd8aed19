// The effect as data: what `--out` writes, what the table, the summary, the pictures and the vault
// line are made from. Numbers that are not finite (a shift from zero) are null in the JSON, with
// the reason in words beside them.
import type { BaselineKind } from './windows.ts'
import type { Direction } from './metrics.ts'
import type { MetricVerdict, ShiftState, TestInfo } from './judge.ts'
import type { NotJudged } from './metrics.ts'

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
  /** The confidence interval of `relative` (the test's level: 90%, the two one-sided tests of equivalence). */
  low: number | null
  high: number | null
  /** The interval in the metric's unit (after − baseline): what is said from a baseline of zero. */
  absoluteLow: number
  absoluteHigh: number
  /** The paired t test's two-sided p of no shift (Welch's, unpaired, with --baseline before). */
  p: number
  df: number
  /** Hour pairs (paired) or the fewer chunks of the two windows (unpaired) the shift is estimated from. */
  chunks: number
  /** The practical band, relative (±): within it is no change; null from a baseline of zero (then `floor`, absolute). */
  band: number | null
  /** The smallest shift (relative) this run finds at p < 0.01 with 80% power; null from a baseline of zero. */
  detectable: number | null
  significant: boolean
  practical: boolean
  /** up/down: significant and past the band; within: the whole interval inside the band; unclear: neither. */
  state: ShiftState
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
  test: TestInfo | null
  /**
   * The power said aloud: per statistic, the smallest shift (relative; `absolute` in the unit where the
   * baseline is zero) this run could have detected, from so many chunks of `chunkS` seconds and so many
   * observations (requests, steps) a window.
   */
  power: {
    detectable: Record<string, number | null>
    absolute: Record<string, number | null>
    chunks: number
    chunkS: number
    baseline: number
    after: number
  } | null
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
  /** The engine profile the series were named by, and what its engine cannot be judged by. */
  engine: {
    name: string
    notJudged: NotJudged[]
    /** Said when no real build's captured output backs the profile's names (helpers/profiles/verified.ts). */
    unverified?: string
  }
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

export function overall(all: readonly MetricResult[]): { verdict: EffectVerdict; exitCode: number } {
  // what the engine does not export leaves the verdict alone
  const metrics = all.filter((m) => m.verdict !== 'not exported')
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
