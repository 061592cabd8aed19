// Resampling over blocks (the hours of a window), which is what carries the hour-to-hour variation
// the per-observation test cannot see (observations of one busy hour are not independent): a
// percentile bootstrap that describes the shift, a permutation test that tests it. Both run a
// statistic thousands of times a judgement (draws.ts builds the judge's), drawing from one seeded
// source, so the same input and seed give the same interval and p.

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
  // `stats` may hand back the same array each round: its values are copied out before the next
  const draws: Float64Array[] = []
  const ia = new Array<number>(nA).fill(0)
  const ib = new Array<number>(nB).fill(0)
  for (let r = 0; r < options.rounds; r++) {
    for (let i = 0; i < nA; i++) ia[i] = Math.floor(options.random() * nA)
    for (let i = 0; i < nB; i++) ib[i] = Math.floor(options.random() * nB)
    const values = stats(ia, ib)
    for (let s = 0; s < values.length; s++) {
      const v = values[s]!
      // −0 drawn as 0: two draws that compare equal are then the same number, whichever the selection takes
      ;(draws[s] ??= new Float64Array(options.rounds).fill(NaN))[r] = v === 0 ? 0 : v
    }
  }
  const tail = (1 - options.level) / 2
  return draws.map((values) => {
    // the draws that gave no value (NaN) left out
    let n = 0
    for (let r = 0; r < values.length; r++) if (!Number.isNaN(values[r]!)) values[n++] = values[r]!
    if (n === 0) return { low: NaN, high: NaN }
    const at = (f: number) => Math.min(n - 1, Math.max(0, Math.floor(f * n)))
    const low = at(tail)
    const high = at(1 - tail)
    // the lower of the two places of the sorted draws, then the other among those above it
    const [first, second] = low <= high ? [low, high] : [high, low]
    select(values, 0, n, first)
    select(values, first, n, second)
    return { low: values[low]!, high: values[high]! }
  })
}

/**
 * Rearranges values[from, to) so that values[k] is the value a sort would put there, none above
 * it before it and none below it after it (Hoare's selection; the middle of three as the pivot).
 * The value is the one a sort gives, as two draws that compare equal are the same number here.
 */
function select(values: Float64Array, from: number, to: number, k: number): void {
  let lo = from
  let hi = to - 1
  while (hi > lo) {
    const mid = (lo + hi) >>> 1
    const a = values[lo]!
    const b = values[mid]!
    const c = values[hi]!
    const pivot = Math.max(Math.min(a, b), Math.min(Math.max(a, b), c))
    let i = lo
    let j = hi
    while (i <= j) {
      while (values[i]! < pivot) i++
      while (values[j]! > pivot) j--
      if (i <= j) {
        const t = values[i]!
        values[i++] = values[j]!
        values[j--] = t
      }
    }
    if (k <= j) hi = j
    else if (k >= i) lo = i
    else return
  }
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
  const n = nA + nB
  const all = Array.from({ length: n }, (_, i) => i)
  const ia = all.slice(0, nA)
  const ib = all.slice(nA)
  // copied: `stats` may hand back the same array each call
  const observed = [...stats(ia, ib)]
  const extreme = observed.map(() => 0)
  for (let r = 0; r < options.rounds; r++) {
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(options.random() * (i + 1))
      const t = all[i]!
      all[i] = all[j]!
      all[j] = t
    }
    for (let i = 0; i < nA; i++) ia[i] = all[i]!
    for (let i = 0; i < nB; i++) ib[i] = all[nA + i]!
    const values = stats(ia, ib)
    for (let s = 0; s < observed.length; s++) {
      const o = observed[s]!
      if (Number.isNaN(o) || !(Math.abs(values[s]!) < Math.abs(o))) extreme[s]!++
    }
  }
  return extreme.map((e) => (1 + e) / (1 + options.rounds))
}
