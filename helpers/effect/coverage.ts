// Whether a window's counts are whole: the samples Prometheus holds for a family's series, slot by
// slot (`last_over_time(x[slot])`), say the scrape interval, the gaps, and the resets. A gap of
// more than a few scrape intervals makes the window inconclusive, with one exception: the arm's
// own restart (the engine going down for the deploy and coming back with its counters at zero),
// which increase() accounts for as it accounts for any reset.
import type { Matrix } from './query.ts'
import type { Window } from './windows.ts'

/** How far from the arm a restart may lie and still be the deploy's (the engine loads for minutes). */
export const RESTART_ALLOWANCE_MS = 15 * 60_000
/** A gap is more than this many scrape intervals. */
export const GAP_INTERVALS = 5

export interface Gap {
  fromMs: number
  toMs: number
  /** The counter came back lower: the process restarted. */
  reset: boolean
  /** The arm's own restart, accounted for. */
  arm: boolean
}

export interface Coverage {
  /** The scrape interval, as the median spacing of the samples (never finer than the slot). */
  intervalMs: number | null
  /** The longest spacing of samples that is still not a gap. */
  gapLimitMs: number | null
  samples: number
  /** Resets summed over the series. */
  resets: number
  /** Restarts the samples show besides the arm's own: the most resets of any one series, the arm's restart not counted. */
  restarts: number
  gaps: Gap[]
  /** Values that are not finite. */
  odd: number
}

function median(xs: number[]): number | null {
  if (xs.length === 0) return null
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}

/**
 * The samples of a slot answer, once each: Prometheus 2 selects a range closed at both ends, so a
 * sample exactly on a slot's edge is the last of two slots; the second, one slot later with the
 * same value, is the same sample.
 */
export function distinctSamples(matrix: Matrix, slotMs: number): Matrix {
  return matrix.map((s) => ({
    metric: s.metric,
    values: s.values.filter(
      (p, k) =>
        k === 0 ||
        !(
          p.t - s.values[k - 1]!.t <= slotMs &&
          (p.value === s.values[k - 1]!.value || (Number.isNaN(p.value) && Number.isNaN(s.values[k - 1]!.value)))
        ),
    ),
  }))
}

/** The coverage of one window; `armMs` tolerates the arm's restart at the after window's start and the before window's end. */
export function coverage(answer: Matrix, window: Window, armMs: number | null): Coverage {
  const matrix = distinctSamples(answer, window.slotMs)
  const spacings: number[] = []
  for (const s of matrix) for (let k = 1; k < s.values.length; k++) spacings.push(s.values[k]!.t - s.values[k - 1]!.t)
  const step = median(spacings)
  const intervalMs = step === null ? null : Math.max(step, window.slotMs)
  const gapLimitMs = intervalMs === null ? null : Math.max(GAP_INTERVALS * intervalMs, 3 * window.slotMs)
  const near = (t: number) => armMs !== null && Math.abs(t - armMs) <= RESTART_ALLOWANCE_MS
  const gaps: Gap[] = []
  let samples = 0
  let resets = 0
  let restarts = 0
  let odd = 0
  for (const s of matrix) {
    const vs = s.values
    samples += vs.length
    let own = 0
    odd += vs.filter((p) => !Number.isFinite(p.value)).length
    for (let k = 1; k < vs.length; k++) {
      const reset = vs[k]!.value < vs[k - 1]!.value
      if (reset) resets++
      let arm = false
      if (gapLimitMs !== null && vs[k]!.t - vs[k - 1]!.t > gapLimitMs) {
        const fromMs = vs[k - 1]!.t
        const toMs = vs[k]!.t - window.slotMs
        arm = reset && (near(fromMs) || near(toMs) || (armMs !== null && fromMs <= armMs && toMs >= armMs))
        gaps.push({ fromMs, toMs, reset, arm })
      }
      if (reset && !arm) own++
    }
    restarts = Math.max(restarts, own)
    if (gapLimitMs === null || vs.length === 0) continue
    const first = vs[0]!.t - window.slotMs
    const last = vs.at(-1)!.t
    // An engine that comes up after the arm, or went down for the deploy just before it.
    if (first - window.startMs > gapLimitMs)
      gaps.push({
        fromMs: window.startMs,
        toMs: first,
        reset: false,
        arm: window.role === 'after' && near(first) && armMs === window.startMs,
      })
    if (window.endMs - last > gapLimitMs)
      gaps.push({ fromMs: last, toMs: window.endMs, reset: false, arm: window.role === 'before' && near(last) && armMs === window.endMs })
  }
  return { intervalMs, gapLimitMs, samples, resets, restarts, gaps, odd }
}

/**
 * The engine's restart just before a verify run (the process the run proved): the end of the
 * last gap, or the last reset, among the window's samples, or its first sample when the engine
 * exported nothing before it for longer than a gap. Null when the samples show none.
 */
export function lastRestart(answer: Matrix, window: Window): number | null {
  const cov = coverage(answer, window, null)
  const matrix = distinctSamples(answer, window.slotMs)
  let at: number | null = null
  for (const s of matrix) {
    const first = s.values[0]
    if (
      first &&
      cov.gapLimitMs !== null &&
      first.t - window.slotMs - window.startMs > cov.gapLimitMs &&
      (at === null || first.t - window.slotMs > at)
    )
      at = first.t - window.slotMs
    for (let k = 1; k < s.values.length; k++) {
      const a = s.values[k - 1]!
      const b = s.values[k]!
      const gap = cov.gapLimitMs !== null && b.t - a.t > cov.gapLimitMs
      if ((b.value < a.value || gap) && (at === null || b.t - window.slotMs > at)) at = b.t - window.slotMs
    }
  }
  return at
}
