// The statistics of the effect, pure: quantiles of a bucketed distribution as Prometheus'
// histogram_quantile computes them, the Mann-Whitney U test over observations known only by their
// bucket (every observation of one bucket ties with the others of it), the relative shift. The
// bootstrap and the permutation test over blocks are in resample.ts.

/** A bucketed distribution: finite upper edges, ascending; counts per bucket (not cumulative), one more than the edges (the +Inf bucket). */
export interface Buckets {
  edges: readonly number[]
  counts: readonly number[]
}

export function total(counts: ArrayLike<number>): number {
  let n = 0
  for (let k = 0; k < counts.length; k++) n += counts[k]!
  return n
}

/**
 * The q-quantile as histogram_quantile computes it: linear inside the bucket the rank falls in,
 * the first bucket from 0. A rank in the +Inf bucket gives the highest finite edge, marked
 * `beyond` (the true value is above it). Null when the distribution holds nothing.
 */
export function quantile(b: Buckets, q: number): { value: number; beyond: boolean } | null {
  const value = new Float64Array(1)
  const beyond = new Uint8Array(1)
  // a Float64Array as the rounds of the judge hand it: one kind of array in its loop
  if (!quantilesInto(b.edges, new Float64Array(b.counts), 0, b.counts.length, [q], value, beyond)) return null
  return { value: value[0]!, beyond: beyond[0] === 1 }
}

/**
 * Several quantiles of one distribution in one pass (`qs` ascending), as `quantile` computes each,
 * into `values` (and `beyond`: 1 where the rank is in the +Inf bucket); false when it holds
 * nothing. Only the buckets [from, to) are read: the caller knows the others are zero (a zero
 * bucket adds nothing to the total or to the count below a rank, and no rank falls in it).
 */
export function quantilesInto(
  edges: readonly number[],
  counts: Float64Array,
  from: number,
  to: number,
  qs: readonly number[],
  values: Float64Array,
  beyond: Uint8Array,
): boolean {
  let n = 0
  for (let k = from; k < to; k++) n += counts[k]!
  if (!(n > 0)) return false
  const last = edges.length > 0 ? edges[edges.length - 1]! : 0
  let i = 0
  let rank = qs[0]! * n
  let below = 0
  for (let k = from; k < to && i < qs.length; k++) {
    const c = counts[k]!
    // the rank of a higher q falls in this bucket or a later one: the pass goes on from here
    while (i < qs.length && below + c >= rank && c > 0) {
      beyond[i] = k >= edges.length ? 1 : 0
      if (k >= edges.length) values[i] = last
      else {
        const upper = edges[k]!
        const lower = k === 0 ? Math.min(0, upper) : edges[k - 1]!
        values[i] = k === 0 && upper <= 0 ? upper : lower + ((upper - lower) * (rank - below)) / c
      }
      if (++i < qs.length) rank = qs[i]! * n
    }
    below += c
  }
  for (; i < qs.length; i++) {
    values[i] = last
    beyond[i] = 1
  }
  return true
}

/** The standard normal's upper tail, P(Z > z), from erfc (Numerical Recipes' Chebyshev fit, relative error < 1.2e-7). */
export function normalTail(z: number): number {
  const x = Math.abs(z) / Math.SQRT2
  const t = 1 / (1 + 0.5 * x)
  const erfc =
    t *
    Math.exp(
      -x * x -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    )
  const upper = erfc / 2
  return z >= 0 ? upper : 1 - upper
}

export interface MannWhitney {
  /** U of the first sample: pairs (a, b) with a above b, a tie counting one half. */
  u: number
  z: number
  /** Two-sided; 1 when the samples cannot differ (all ties, or one is empty). */
  p: number
  /** U / (nA·nB): P(A > B) + ½·P(A = B); 0.5 is no shift. */
  superiority: number
}

/**
 * Mann-Whitney U for two samples given as counts on one ordered support (point k below point
 * k + 1; the observations of one point tie). Normal approximation with the tie correction of
 * the variance and a continuity correction: with the hundreds of observations the judgement
 * asks for per window, the exact distribution is not needed.
 */
export function mannWhitney(a: readonly number[], b: readonly number[]): MannWhitney {
  const nA = total(a)
  const nB = total(b)
  let u = 0
  let bBelow = 0
  let ties = 0
  for (let k = 0; k < Math.max(a.length, b.length); k++) {
    const ak = a[k] ?? 0
    const bk = b[k] ?? 0
    u += ak * (bBelow + bk / 2)
    bBelow += bk
    const t = ak + bk
    ties += t * t * t - t
  }
  const n = nA + nB
  if (nA === 0 || nB === 0 || n < 2) return { u, z: 0, p: 1, superiority: 0.5 }
  const mean = (nA * nB) / 2
  const variance = ((nA * nB) / 12) * (n + 1 - ties / (n * (n - 1)))
  if (!(variance > 0)) return { u, z: 0, p: 1, superiority: u / (nA * nB) }
  const gap = Math.max(0, Math.abs(u - mean) - 0.5)
  const z = (Math.sign(u - mean) * gap) / Math.sqrt(variance)
  return { u, z, p: Math.min(1, 2 * normalTail(Math.abs(z))), superiority: u / (nA * nB) }
}

/** Mann-Whitney U for two samples of values (ties where values are equal). */
export function mannWhitneyValues(a: readonly number[], b: readonly number[]): MannWhitney {
  const support = [...new Set([...a, ...b])].sort((x, y) => x - y)
  const index = new Map(support.map((v, i) => [v, i]))
  const countsOf = (xs: readonly number[]) => {
    const c = new Array<number>(support.length).fill(0)
    for (const x of xs) c[index.get(x)!]!++
    return c
  }
  return mannWhitney(countsOf(a), countsOf(b))
}

/** after / baseline − 1; a baseline of 0 gives 0 when both are 0, else ±Infinity. */
export function relativeShift(after: number, baseline: number): number {
  if (baseline === 0) return after === 0 ? 0 : after > 0 ? Infinity : -Infinity
  return after / baseline - 1
}
