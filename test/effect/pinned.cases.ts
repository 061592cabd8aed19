// The judgements the pinned test holds to their numbers: seeded traffic of every kind the judge
// meets (integer counts, counts as increase() extrapolates them, a quantile past the buckets,
// windows of unequal length judged unpaired, a sparse ratio on values, another level and alpha),
// so that a change of the statistic shows as a change of answers, digit for digit.
import { judgeHistogram, judgeRatio, JUDGE_DEFAULTS, type Judgement } from '../../helpers/effect/judge.ts'
import { prng } from '../support/prng.ts'
import { PREEMPT_SPEC, TTFT_EDGES, TTFT_SPEC, bucketCounts, gaussian, poisson } from './traffic.ts'

const TTFT = TTFT_SPEC
const TPUT = { id: 'tokens', direction: 'lower-worse' as const, threshold: 0.1, floor: 0.01, unit: '/s' }
const PREEMPT = PREEMPT_SPEC
const OLD_EDGES = TTFT_EDGES.slice(0, TTFT_EDGES.indexOf(10) + 1)

const hours = (random: () => number, edges: readonly number[], n: number, median: number, wobble: number, scale = 1) =>
  Array.from({ length: n }, () =>
    bucketCounts(random, edges, 1000, median * Math.exp(wobble * gaussian(random)), 0.6).map((c) => c * scale),
  )

const ratioWindow = (random: () => number, n: number, per: number, scale = 1) => {
  const den = Array.from({ length: n }, () => poisson(random, 400) * scale)
  return { num: den.map((d) => poisson(random, d / per) * scale), den }
}

/** Hours of a window: how many, their median, the hour-to-hour wobble, and a factor on every count (increase() extrapolating). */
type Hours = readonly [n: number, median: number, wobble: number, scale?: number]

/** A histogram judgement of seeded hours (the baseline drawn first). */
const histogram =
  (seed: number, edges: readonly number[], baseline: Hours, after: Hours, options = JUDGE_DEFAULTS) =>
  (): Judgement => {
    const r = prng(seed)
    return judgeHistogram(TTFT, edges, hours(r, edges, ...baseline), hours(r, edges, ...after), baseline[0] === after[0], options)
  }

export const PINNED: Record<string, () => Judgement> = {
  'histogram, integer counts, 25% slower': histogram(11, TTFT_EDGES, [6, 0.12, 0.05], [6, 0.15, 0.05]),
  'histogram, extrapolated counts, nothing changed, 10% wobble': histogram(12, TTFT_EDGES, [6, 0.12, 0.1, 1.0137], [6, 0.12, 0.1, 0.9871]),
  'histogram, extrapolated counts, 10% slower (near the threshold), 5 chunks against 7, unpaired': histogram(
    13,
    TTFT_EDGES,
    [5, 0.12, 0.05, 1.0213],
    [7, 0.132, 0.05, 0.9937],
  ),
  'histogram, p95 past the largest bucket after the arm, p50 three times slower': histogram(14, OLD_EDGES, [6, 4, 0.05], [6, 12, 0.05]),
  'histogram, every quantile past the largest bucket in both windows': histogram(18, OLD_EDGES, [6, 14, 0.05], [6, 42, 0.05]),
  'histogram, extrapolated counts, 30% faster': histogram(19, TTFT_EDGES, [6, 0.2, 0.05, 1.031], [6, 0.14, 0.05, 1.029]),
  'histogram, level 0.95 and alpha 0.05': histogram(15, TTFT_EDGES, [6, 0.12, 0.05, 1.07], [6, 0.108, 0.05, 1.07], {
    ...JUDGE_DEFAULTS,
    alpha: 0.05,
    level: 0.95,
  }),
  'ratio, sparse, nothing changed': () => {
    const r = prng(16)
    const b = ratioWindow(r, 6, 300)
    const a = ratioWindow(r, 6, 300)
    return judgeRatio(PREEMPT, b, a, { baseline: 2400, after: 2400, what: 'requests' }, true)
  },
  'ratio, extrapolated counts, 30% lower, 6 chunks against 8, unpaired': () => {
    const r = prng(17)
    const b = ratioWindow(r, 6, 2, 1.013)
    const a = ratioWindow(r, 8, 2.9, 0.991)
    return judgeRatio(TPUT, b, a, { baseline: 2400, after: 3200, what: 'requests' }, false)
  },
}
