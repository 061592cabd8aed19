// The statistics of the effect, pure: quantiles of a bucketed distribution as Prometheus'
// histogram_quantile computes them, the relative shift. The comparison of the hours is in
// compare.ts, Student's t in student.ts.

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
