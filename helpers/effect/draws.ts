// The shift statistics a bootstrap or permutation round computes, thousands of times a judgement:
// built once from the blocks and reused round after round (no array made per round), with the same
// arithmetic in the same order as a plain sum of the chosen blocks and `quantile` of it, so a
// round gives the very same number.
import { layout, sumInto } from './blocks.ts'
import { quantilesInto, relativeShift } from './stats.ts'

type Stats = (ia: readonly number[], ib: readonly number[]) => readonly number[]

/**
 * The relative shifts of the quantiles `qs` (ascending) of the chosen blocks' summed counts: the
 * after window's against the baseline's (`bootstrap`, each drawing from its own window), and the
 * first group's against the second's of both windows' blocks, after first (`permutation`). The
 * array returned is the same every call.
 */
export function quantileShifts(
  edges: readonly number[],
  after: readonly (readonly number[])[],
  baseline: readonly (readonly number[])[],
  qs: readonly number[],
): { bootstrap: Stats; permutation: Stats } {
  const width = edges.length + 1
  const both = layout([...after, ...baseline], width)
  const sa = new Float64Array(width)
  const sb = new Float64Array(width)
  const qa = new Float64Array(qs.length)
  const qb = new Float64Array(qs.length)
  const beyond = new Uint8Array(qs.length)
  const out = new Array<number>(qs.length).fill(0)
  const shifts = (ia: readonly number[], ib: readonly number[], offsetB: number) => {
    sumInto(both, ia, ia.length, 0, sa)
    sumInto(both, ib, ib.length, offsetB, sb)
    if (!quantilesInto(edges, sa, both.from, both.to, qs, qa, beyond)) qa.fill(NaN)
    if (!quantilesInto(edges, sb, both.from, both.to, qs, qb, beyond)) qb.fill(NaN)
    for (let i = 0; i < qs.length; i++) out[i] = relativeShift(qa[i]!, qb[i]!)
    return out
  }
  return {
    bootstrap: (ia, ib) => shifts(ia, ib, after.length),
    permutation: (ia, ib) => shifts(ia, ib, 0),
  }
}

interface Chunks {
  num: readonly number[]
  den: readonly number[]
}

/**
 * The relative shift of the pooled ratio Σnum / Σden of the chosen chunks (NaN where Σden is 0),
 * as `quantileShifts` for a ratio. The array returned is the same every call.
 */
export function ratioShifts(after: Chunks, baseline: Chunks): { bootstrap: Stats; permutation: Stats } {
  const num = Float64Array.from([...after.num, ...baseline.num])
  const den = Float64Array.from([...after.den, ...baseline.den])
  const pooled = (pick: readonly number[], offset: number) => {
    let n = 0
    let d = 0
    for (let i = 0; i < pick.length; i++) {
      n += num[pick[i]! + offset]!
      d += den[pick[i]! + offset]!
    }
    return d > 0 ? n / d : NaN
  }
  const out = [0]
  return {
    bootstrap: (ia, ib) => ((out[0] = relativeShift(pooled(ia, 0), pooled(ib, after.num.length))), out),
    permutation: (ia, ib) => ((out[0] = relativeShift(pooled(ia, 0), pooled(ib, 0))), out),
  }
}
