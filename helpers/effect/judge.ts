// The judgement of one metric from its blocks (the chunks of the baseline and after windows).
// `worse` or `better` only when the shift is significant twice over and larger than the
// metric's practical threshold:
//   - a rank test says the two windows differ: Mann-Whitney U on the bucketed observations (a
//     histogram) or on the chunks' rates (a ratio), ties handled, p < alpha;
//   - the chunks (hours) say the shift is not the hour-to-hour variation: dealing the chunks of
//     both windows at random into two groups gives a shift as large in fewer than alpha of the
//     deals (a permutation test), and the bootstrap interval of the shift (level) lies wholly on
//     one side of zero. This is the guard the per-observation test lacks: the observations of one
//     busy hour move together, so with thousands of them any difference is "significant" to a
//     test that takes them as independent. (A percentile bootstrap alone is too narrow with six
//     hours a window: it let one identical pair in 25 through, where the deals keep to alpha.)
// Too few observations in either window is inconclusive, never `no change`.
import { pct, pValue } from './format.ts'
import { quantileShifts, ratioShifts } from './draws.ts'
import { prng, seedOf } from './prng.ts'
import type { Direction } from './metrics.ts'
import { sumBlocks } from './blocks.ts'
import { bootstrap, permutation, type Interval } from './resample.ts'
import { mannWhitney, mannWhitneyValues, quantilesInto, relativeShift, total, type MannWhitney } from './stats.ts'

export interface JudgeOptions {
  /** Fewer observations (or requests, steps) than this in a window is too little traffic. */
  minCount: number
  alpha: number
  /** The bootstrap interval's level. */
  level: number
  rounds: number
}

export const JUDGE_DEFAULTS: JudgeOptions = { minCount: 100, alpha: 0.01, level: 0.95, rounds: 1000 }

export type MetricVerdict = 'better' | 'worse' | 'no change' | 'changed' | 'inconclusive'

export interface Shift {
  /** after / baseline − 1 (±Infinity from a baseline of zero). */
  relative: number
  absolute: number
  /** The bootstrap interval of `relative`. */
  interval: Interval
  /** The permutation test's p over the chunks. */
  p: number
  significant: boolean
  practical: boolean
  /** The quantile lies past the largest finite bucket (`le`) in this window or both: the shift is a bound, not a value. */
  beyond?: { in: 'after' | 'baseline' | 'both'; le: number }
}

export interface Judgement {
  verdict: MetricVerdict
  /** One line: what decided it. */
  reason: string
  shifts: Record<string, Shift>
  test: (MannWhitney & { on: 'observations' | 'chunks' }) | null
  /** The next step, where the verdict's own reason calls for one (else the caller's default). */
  next?: string
}

export interface Spec {
  id: string
  direction: Direction
  threshold: number
  floor: number
}

function shiftOf(
  after: number,
  baseline: number,
  interval: Interval,
  p: number,
  test: MannWhitney,
  spec: Spec,
  options: JudgeOptions,
  beyond?: Shift['beyond'],
): Shift {
  const relative = relativeShift(after, baseline)
  const absolute = after - baseline
  const side = relative > 0 ? interval.low > 0 : relative < 0 ? interval.high < 0 : false
  return {
    relative,
    absolute,
    interval,
    p,
    significant: test.p < options.alpha && p < options.alpha && side,
    practical: Math.abs(relative) >= spec.threshold && Math.abs(absolute) >= spec.floor,
    ...(beyond ? { beyond } : {}),
  }
}

/** The verdict from the shifts: a direction-less metric (cadence) says `changed`. */
function decide(spec: Spec, shifts: Record<string, Shift>, test: Judgement['test']): Judgement {
  const moved = Object.entries(shifts).filter(([, s]) => s.significant && s.practical)
  const up = moved.filter(([, s]) => s.relative > 0)
  const down = moved.filter(([, s]) => s.relative < 0)
  const text = (list: typeof moved) =>
    list
      .map(([name, s]) =>
        Number.isFinite(s.relative)
          ? `${name} ${pct(s.relative)} (threshold ${pct(spec.threshold)}, interval ${pct(s.interval.low)}…${pct(s.interval.high)}, hours p=${pValue(s.p)})`
          : `${name} from 0 to ${Number(s.absolute.toPrecision(3))} (hours p=${pValue(s.p)})`,
      )
      .join(', ')
  const p = test ? `Mann-Whitney on the ${test.on} p=${pValue(test.p)}` : ''
  // A quantile past the largest bucket is only known to be above it: a shift seen despite that
  // stands (the true one is larger still), but an unmoved one measures nothing. No `no change` or
  // `better` from it, only a `worse` another quantile shows.
  const bounded = Object.entries(shifts).filter(([, s]) => s.beyond !== undefined && !(s.significant && s.practical))
  const worseMoved = spec.direction === 'higher-worse' ? up : spec.direction === 'none' ? [] : down
  if (bounded.length && worseMoved.length === 0) {
    const where = bounded
      .map(
        ([name, s]) =>
          `${name} is past the largest bucket (le ${s.beyond!.le}) in ${s.beyond!.in === 'both' ? 'both windows' : `the ${s.beyond!.in} window`}`,
      )
      .join(', ')
    const le = bounded[0]![1].beyond!.le
    return {
      verdict: 'inconclusive',
      reason: `${where}: a quantile there is a bound, not a value, so its shift is not measured; ${p}`,
      shifts,
      test,
      next: `the engine's buckets end at le ${le} and this traffic lies past it: compare the share of observations above ${le} in the picture, or judge with a build whose buckets reach further`,
    }
  }
  if (moved.length === 0) {
    const why = Object.entries(shifts)
      .map(
        ([name, s]) => `${name} ${pct(s.relative)}${!s.practical ? ' (under the threshold)' : !s.significant ? ' (not significant)' : ''}`,
      )
      .join(', ')
    return { verdict: 'no change', reason: `${why}; ${p}`, shifts, test }
  }
  if (spec.direction === 'none')
    return {
      verdict: 'changed',
      reason: `${text(moved)}; ${p}; a change here is not a regression by itself (cadence: the knob acting; throughput: the traffic)`,
      shifts,
      test,
    }
  const worse = spec.direction === 'higher-worse' ? up : down
  const better = spec.direction === 'higher-worse' ? down : up
  if (worse.length) return { verdict: 'worse', reason: `${text(worse)}; ${p}`, shifts, test }
  return { verdict: 'better', reason: `${text(better)}; ${p}`, shifts, test }
}

export const QUANTILES = [
  ['p50', 0.5],
  ['p95', 0.95],
] as const

/** A histogram: the p50 and p95 shifts of the summed bucket counts. */
export function judgeHistogram(
  spec: Spec,
  edges: readonly number[],
  baseline: readonly (readonly number[])[],
  after: readonly (readonly number[])[],
  options: JudgeOptions = JUDGE_DEFAULTS,
): Judgement {
  const width = edges.length + 1
  const all = (blocks: readonly (readonly number[])[]) =>
    sumBlocks(
      blocks,
      blocks.map((_, i) => i),
      width,
    )
  const b = all(baseline)
  const a = all(after)
  const nB = total(b)
  const nA = total(a)
  if (nB < options.minCount || nA < options.minCount) {
    return {
      verdict: 'inconclusive',
      reason: `too little traffic: ${Math.round(nB)} observations in the baseline and ${Math.round(nA)} after the arm; the judgement needs ${options.minCount} in each`,
      shifts: {},
      test: null,
    }
  }
  const test = { ...mannWhitney(a.map(Math.round), b.map(Math.round)), on: 'observations' as const }
  const qs = QUANTILES.map(([, at]) => at)
  // the windows' own p50 and p95 (NaN where a window holds nothing), and which lie past the largest bucket
  const quantilesOf = (counts: readonly number[]) => {
    const values = new Float64Array(qs.length)
    const beyond = new Uint8Array(qs.length)
    if (!quantilesInto(edges, new Float64Array(counts), 0, counts.length, qs, values, beyond)) values.fill(NaN)
    return { values, beyond }
  }
  const [qa, qb] = [quantilesOf(a), quantilesOf(b)]
  const beyondOf = (i: number): Shift['beyond'] => {
    const [inA, inB] = [qa.beyond[i] === 1, qb.beyond[i] === 1]
    return inA || inB ? { in: inA && inB ? 'both' : inA ? 'after' : 'baseline', le: edges.at(-1)! } : undefined
  }
  const random = prng(seedOf(`${spec.id}:histogram`))
  const draw = quantileShifts(edges, after, baseline, qs)
  const intervals = bootstrap(after.length, baseline.length, draw.bootstrap, { rounds: options.rounds, level: options.level, random })
  const ps = permutation(after.length, baseline.length, draw.permutation, { rounds: options.rounds, random })
  const shifts: Record<string, Shift> = {}
  QUANTILES.forEach(
    ([name], i) => (shifts[name] = shiftOf(qa.values[i]!, qb.values[i]!, intervals[i]!, ps[i]!, test, spec, options, beyondOf(i))),
  )
  return decide(spec, shifts, test)
}

/** A ratio of counter increases, chunk by chunk (`den` null: per second of `chunkSeconds`). */
export function judgeRatio(
  spec: Spec,
  baseline: { num: readonly number[]; den: readonly number[] },
  after: { num: readonly number[]; den: readonly number[] },
  counted: { baseline: number; after: number; what: string },
  options: JudgeOptions = JUDGE_DEFAULTS,
): Judgement {
  if (counted.baseline < options.minCount || counted.after < options.minCount) {
    return {
      verdict: 'inconclusive',
      reason: `too little traffic: ${Math.round(counted.baseline)} ${counted.what} in the baseline and ${Math.round(counted.after)} after the arm; the judgement needs ${options.minCount} in each`,
      shifts: {},
      test: null,
    }
  }
  const rates = (w: { num: readonly number[]; den: readonly number[] }) => w.num.flatMap((n, i) => (w.den[i]! > 0 ? [n / w.den[i]!] : []))
  const rb = rates(baseline)
  const ra = rates(after)
  if (rb.length < 3 || ra.length < 3) {
    return {
      verdict: 'inconclusive',
      reason: `too few chunks with ${counted.what}: ${rb.length} in the baseline and ${ra.length} after the arm; the judgement needs 3 in each`,
      shifts: {},
      test: null,
    }
  }
  const pooled = (w: { num: readonly number[]; den: readonly number[] }) => {
    const d = total(w.den)
    return d > 0 ? total(w.num) / d : NaN
  }
  const test = { ...mannWhitneyValues(ra, rb), on: 'chunks' as const }
  const random = prng(seedOf(`${spec.id}:ratio`))
  const draw = ratioShifts(after, baseline)
  const [interval] = bootstrap(after.num.length, baseline.num.length, draw.bootstrap, {
    rounds: options.rounds,
    level: options.level,
    random,
  })
  const [p] = permutation(after.num.length, baseline.num.length, draw.permutation, { rounds: options.rounds, random })
  return decide(spec, { rate: shiftOf(pooled(after), pooled(baseline), interval!, p!, test, spec, options) }, test)
}
