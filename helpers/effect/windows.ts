// The windows compared. The before window ends at the arm and the after window starts there; the
// baseline the after window is judged against is, by default, the same hours of another day
// (like hours): an after window in the busy hours is slower than a whole-day average for reasons
// that are not the knob. Each window is cut into equal chunks (an hour, or a sixth of a short
// window): the units the judgement pairs (chunk i after the arm with chunk i of like hours) and
// the range of every increase().
import { formatDuration } from '../config/duration.ts'

export const HOUR_MS = 3_600_000
export const DAY_MS = 24 * HOUR_MS
export const WEEK_MS = 7 * DAY_MS

/** `like-hours`: the week before when Prometheus holds it, else the day before. */
export const BASELINE_OPTIONS = ['like-hours', 'before', 'yesterday', 'last-week'] as const
export type BaselineOption = (typeof BASELINE_OPTIONS)[number]
export type BaselineKind = Exclude<BaselineOption, 'like-hours'>

/** Prometheus refuses a range query of more than 11,000 points per series; armproof stays under this. */
export const MAX_POINTS = 10_000
/** At least this many chunks per window, so the paired test has hours enough to tell their spread. */
export const MIN_CHUNKS = 6
/** At most this many (a month of hours); a longer window takes longer chunks. */
export const MAX_CHUNKS = 720

export type WindowRole = 'before' | 'after' | 'baseline'

export interface Window {
  role: WindowRole
  startMs: number
  /** start + chunks × chunkMs (a remainder of under `chunks` ms is dropped). */
  endMs: number
  chunkMs: number
  chunks: number
  /** The slot of the coverage query (gaps, resets, the scrape interval): whole seconds, ≤ MAX_POINTS per window. */
  slotMs: number
}

export function windowOf(role: WindowRole, startMs: number, lengthMs: number): Window {
  const chunks = Math.min(MAX_CHUNKS, Math.max(MIN_CHUNKS, Math.ceil(lengthMs / HOUR_MS)))
  const chunkMs = Math.floor(lengthMs / chunks)
  const slotMs = Math.max(1000, Math.ceil(lengthMs / MAX_POINTS / 1000) * 1000)
  return { role, startMs, endMs: startMs + chunks * chunkMs, chunkMs, chunks, slotMs }
}

export const SHIFT_MS: Readonly<Record<Exclude<BaselineKind, 'before'>, number>> = { yesterday: DAY_MS, 'last-week': WEEK_MS }

/** The after window moved back a day or a week: the same hours of another day. */
export function likeHours(after: Window, kind: Exclude<BaselineKind, 'before'>): Window {
  return { ...after, role: 'baseline', startMs: after.startMs - SHIFT_MS[kind], endMs: after.endMs - SHIFT_MS[kind] }
}

export interface WindowPlan {
  armMs: number
  before: Window
  after: Window
  /** The baselines to try, in order (like hours: last week, then yesterday); the first the data holds is used. */
  candidates: BaselineKind[]
}

/** The windows of an arm, or the one-line problem (exit 2): an after window not over yet, a baseline that would overlap the arm. */
export function planWindows(input: {
  armMs: number
  beforeMs: number
  afterMs: number
  baseline: BaselineOption
  nowMs: number
}): { plan: WindowPlan } | { problem: string } {
  const { armMs, beforeMs, afterMs, baseline, nowMs } = input
  const before = windowOf('before', armMs - beforeMs, beforeMs)
  // The before window ends exactly at the arm: its chunks are laid back from there.
  const shiftedBefore = { ...before, startMs: armMs - (before.endMs - before.startMs), endMs: armMs }
  const after = windowOf('after', armMs, afterMs)
  if (after.endMs > nowMs) {
    return {
      problem: `--after: the after window ends at ${iso(after.endMs)}, ${formatDuration(after.endMs - nowMs)} from now; judge it after that, or pass a shorter --after (e.g. --after ${shortest(nowMs - armMs)})`,
    }
  }
  const fits = (kind: Exclude<BaselineKind, 'before'>) => afterMs <= SHIFT_MS[kind]
  let candidates: BaselineKind[]
  if (baseline === 'like-hours') {
    candidates = (['last-week', 'yesterday'] as const).filter(fits)
    if (candidates.length === 0)
      return {
        problem: `--after: ${formatDuration(afterMs)} is longer than a week, so no like hours of another day precede the arm; pass --baseline before`,
      }
  } else if (baseline !== 'before' && !fits(baseline)) {
    return {
      problem: `--baseline ${baseline}: the after window (${formatDuration(afterMs)}) is longer than ${baseline === 'yesterday' ? 'a day' : 'a week'}, so its baseline would reach past the arm; pass a shorter --after or another --baseline`,
    }
  } else candidates = [baseline]
  return { plan: { armMs, before: shiftedBefore, after, candidates } }
}

export const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.000Z$/, 'Z')

/** A duration an operator would type, rounded down to whole minutes (at least 1m). */
function shortest(ms: number): string {
  const m = Math.max(1, Math.floor(ms / 60_000))
  return m >= 60 && m % 60 === 0 ? `${m / 60}h` : m >= 60 ? `${Math.floor(m / 60)}h${m % 60}m` : `${m}m`
}
