// The comparison the judgement rests on: one number per chunk (an hour's p50, p95 or rate) in the
// after window against the same chunk of the baseline, the like hours of another day: hour i after
// the arm paired with hour i of the baseline, so that the daily pattern (busy hours slower than
// quiet ones) cancels inside each pair instead of drowning the shift between them. The pairs'
// differences (of logs, or of values) are combined by Student's paired t: their mean is the shift,
// its t interval the shift's confidence interval, and the spread of the differences is what the
// hours themselves say about how much like hours differ, sampling noise and day-to-day wobble
// together. A baseline that is not like hours (the whole before window) has no pairs: Welch's t
// over the chunks of both windows then, which keeps the hour as the unit but not the pairing.
import { tQuantile, tTwoSided } from './student.ts'

export interface Comparison {
  method: 'paired' | 'unpaired'
  /** Pairs used (paired), or the chunks of each window used (unpaired). */
  n: number
  nAfter: number
  nBaseline: number
  /** Mean difference after − baseline on the comparison's scale (logs or values). */
  estimate: number
  se: number
  df: number
  /** The `level` interval of the estimate. */
  low: number
  high: number
  /** Two-sided p of "no difference". */
  p: number
  /** The smallest true difference a test at `alpha` finds with probability `power`, from this spread and these chunks. */
  detectable: number
}

export interface CompareOptions {
  level: number
  alpha: number
  power: number
}

/** At least this many pairs (or chunks a window, unpaired): below it no spread can be told. */
export const MIN_PAIRS = 3

function finish(
  method: Comparison['method'],
  counts: { n: number; nAfter: number; nBaseline: number },
  estimate: number,
  se: number,
  df: number,
  o: CompareOptions,
): Comparison {
  const half = se * tQuantile(1 - (1 - o.level) / 2, df)
  const t = se > 0 ? estimate / se : estimate === 0 ? 0 : Math.sign(estimate) * Infinity
  const p = se > 0 ? tTwoSided(t, df) : estimate === 0 ? 1 : 0
  const detectable = se * (tQuantile(1 - o.alpha / 2, df) + tQuantile(o.power, df))
  return { method, ...counts, estimate, se, df, low: estimate - half, high: estimate + half, p, detectable }
}

/**
 * Paired: `after[i]` with `baseline[i]`, the pairs where both are finite. Null with fewer than
 * MIN_PAIRS of them.
 */
export function pairedComparison(after: readonly number[], baseline: readonly number[], o: CompareOptions): Comparison | null {
  const d: number[] = []
  for (let i = 0; i < Math.min(after.length, baseline.length); i++) {
    const x = after[i]! - baseline[i]!
    if (Number.isFinite(after[i]!) && Number.isFinite(baseline[i]!)) d.push(x)
  }
  const n = d.length
  const count = (xs: readonly number[]) => xs.filter(Number.isFinite).length
  if (n < MIN_PAIRS) return null
  const mean = d.reduce((a, x) => a + x, 0) / n
  const variance = d.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1)
  return finish('paired', { n, nAfter: count(after), nBaseline: count(baseline) }, mean, Math.sqrt(variance / n), n - 1, o)
}

/** Unpaired (Welch): the finite values of each window. Null with fewer than MIN_PAIRS in either. */
export function unpairedComparison(after: readonly number[], baseline: readonly number[], o: CompareOptions): Comparison | null {
  const a = after.filter(Number.isFinite)
  const b = baseline.filter(Number.isFinite)
  if (a.length < MIN_PAIRS || b.length < MIN_PAIRS) return null
  const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length
  const varOf = (xs: readonly number[], m: number) => xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1)
  const [ma, mb] = [mean(a), mean(b)]
  const [va, vb] = [varOf(a, ma) / a.length, varOf(b, mb) / b.length]
  const se = Math.sqrt(va + vb)
  // Welch–Satterthwaite; two constant windows have no spread to take degrees from
  const df = va + vb > 0 ? (va + vb) ** 2 / (va ** 2 / (a.length - 1) + vb ** 2 / (b.length - 1)) : a.length + b.length - 2
  return finish('unpaired', { n: Math.min(a.length, b.length), nAfter: a.length, nBaseline: b.length }, ma - mb, se, df, o)
}
