// The statistics of the effect, pure: quantiles of a bucketed distribution as Prometheus'
// histogram_quantile computes them, the Mann-Whitney U test over observations known only by their
// bucket (every observation of one bucket ties with the others of it), and a percentile bootstrap
// over blocks (the hours of a window), which is what carries the hour-to-hour variation the
// per-observation test cannot see: observations of one busy hour are not independent.

/** A bucketed distribution: finite upper edges, ascending; counts per bucket (not cumulative), one more than the edges (the +Inf bucket). */
export interface Buckets {
  edges: readonly number[]
  counts: readonly number[]
}

export function total(counts: readonly number[]): number {
  let n = 0
  for (const c of counts) n += c
  return n
}

/**
 * The q-quantile as histogram_quantile computes it: linear inside the bucket the rank falls in,
 * the first bucket from 0. A rank in the +Inf bucket gives the highest finite edge, marked
 * `beyond` (the true value is above it). Null when the distribution holds nothing.
 */
export function quantile(b: Buckets, q: number): { value: number; beyond: boolean } | null {
  const n = total(b.counts)
  if (!(n > 0)) return null
  const rank = q * n
  let below = 0
  for (let k = 0; k < b.counts.length; k++) {
    const c = b.counts[k]!
    if (below + c >= rank && c > 0) {
      if (k >= b.edges.length) return { value: b.edges.at(-1) ?? 0, beyond: true }
      const upper = b.edges[k]!
      const lower = k === 0 ? Math.min(0, upper) : b.edges[k - 1]!
      if (k === 0 && upper <= 0) return { value: upper, beyond: false }
      return { value: lower + ((upper - lower) * (rank - below)) / c, beyond: false }
    }
    below += c
  }
  return { value: b.edges.at(-1) ?? 0, beyond: true }
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

export interface Interval {
  low: number
  high: number
}

/**
 * A percentile bootstrap over blocks: `rounds` times, nA blocks drawn with replacement from
 * the first sample's and nB from the second's; `stats` of each draw (several at once); the
 * central `level` interval of each statistic.
 */
export function bootstrap(
  nA: number,
  nB: number,
  stats: (ia: readonly number[], ib: readonly number[]) => readonly number[],
  options: { rounds: number; level: number; random: () => number },
): Interval[] {
  const draws: number[][] = []
  const ia = new Array<number>(nA)
  const ib = new Array<number>(nB)
  for (let r = 0; r < options.rounds; r++) {
    for (let i = 0; i < nA; i++) ia[i] = Math.floor(options.random() * nA)
    for (let i = 0; i < nB; i++) ib[i] = Math.floor(options.random() * nB)
    stats(ia, ib).forEach((v, s) => (draws[s] ??= []).push(v))
  }
  const tail = (1 - options.level) / 2
  return draws.map((values) => {
    const sorted = values.filter((v) => !Number.isNaN(v)).sort((x, y) => x - y)
    if (sorted.length === 0) return { low: NaN, high: NaN }
    const at = (f: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.floor(f * sorted.length)))]!
    return { low: at(tail), high: at(1 - tail) }
  })
}

/**
 * A permutation test over blocks: the nA + nB blocks dealt at random into groups of nA and nB,
 * `rounds` times; per statistic, the two-sided p-value (1 + deals at least as extreme) / (1 +
 * rounds). Exact in level whatever the blocks hold, as long as the blocks of the two windows are
 * exchangeable when nothing changed: it tests what the bootstrap interval only describes.
 */
export function permutation(
  nA: number,
  nB: number,
  stats: (ia: readonly number[], ib: readonly number[]) => readonly number[],
  options: { rounds: number; random: () => number },
): number[] {
  const all = Array.from({ length: nA + nB }, (_, i) => i)
  const observed = stats(all.slice(0, nA), all.slice(nA))
  const extreme = observed.map(() => 0)
  for (let r = 0; r < options.rounds; r++) {
    for (let i = all.length - 1; i > 0; i--) {
      const j = Math.floor(options.random() * (i + 1))
      ;[all[i], all[j]] = [all[j]!, all[i]!]
    }
    stats(all.slice(0, nA), all.slice(nA)).forEach((v, s) => {
      const o = observed[s]!
      if (Number.isNaN(o) || !(Math.abs(v) < Math.abs(o))) extreme[s]!++
    })
  }
  return extreme.map((e) => (1 + e) / (1 + options.rounds))
}

/** Counts of the chosen blocks, summed bucket by bucket. */
export function sumBlocks(blocks: readonly (readonly number[])[], chosen: readonly number[], width: number): number[] {
  const out = new Array<number>(width).fill(0)
  for (const i of chosen) {
    const block = blocks[i]!
    for (let k = 0; k < width; k++) out[k]! += block[k] ?? 0
  }
  return out
}
