// The judgement attacked with traffic whose truth is known: many seeded pairs of windows drawn from
// one distribution (nothing changed) must rarely say `worse`; pairs with a shift of the stated size
// must mostly say it. Six hourly blocks a window, about 1,000 observations an hour, vLLM's TTFT
// buckets, and the median of each hour wobbling as real hours do. The rates measured here are the
// ones docs/guide/effect.md states; a failure names the seeds.
import { describe, expect, test } from 'vitest'
import { judgeHistogram, judgeRatio, JUDGE_DEFAULTS } from '../../helpers/effect/judge.ts'
import { prng } from '../../helpers/effect/prng.ts'
import { TTFT_EDGES, bucketCounts, gaussian, poisson } from './traffic.ts'

const TTFT = { id: 'ttft', direction: 'higher-worse' as const, threshold: 0.1, floor: 0.005 }

function hours(random: () => number, median: number, wobble: number, perHour = 1000): number[][] {
  return Array.from({ length: 6 }, () => bucketCounts(random, TTFT_EDGES, perHour, median * Math.exp(wobble * gaussian(random)), 0.6))
}

/** Verdicts of `pairs` seeded pairs: the baseline from `median`, the after window from `median × factor`. */
function verdicts(pairs: number, wobble: number, factor: number): { worse: number[]; better: number; inconclusive: number } {
  const worse: number[] = []
  let better = 0
  let inconclusive = 0
  for (let seed = 1; seed <= pairs; seed++) {
    const random = prng(seed * 7919 + Math.round(factor * 1000) + Math.round(wobble * 1e6))
    const v = judgeHistogram(TTFT, TTFT_EDGES, hours(random, 0.12, wobble), hours(random, 0.12 * factor, wobble), JUDGE_DEFAULTS).verdict
    if (v === 'worse') worse.push(seed)
    if (v === 'better') better++
    if (v === 'inconclusive') inconclusive++
  }
  return { worse, better, inconclusive }
}

describe('the false-alarm and detection rates of the latency judgement', () => {
  test('identical distributions, an hour-to-hour wobble of 5%: worse in at most 1% of 400 pairs (measured 0.5%)', () => {
    const r = verdicts(400, 0.05, 1)
    expect(r.worse.length / 400, `false alarms at seeds ${r.worse.join(', ')}`).toBeLessThanOrEqual(0.01)
    expect(r.better / 400).toBeLessThanOrEqual(0.01)
    expect(r.inconclusive).toBe(0)
  })

  test('a 25% slower median, the same wobble: worse in at least 95% of 200 pairs (measured 100%)', () => {
    const r = verdicts(200, 0.05, 1.25)
    expect(r.worse.length / 200).toBeGreaterThanOrEqual(0.95)
  })

  test('hours that wobble 10%: worse in at most 3% of identical pairs (measured 1.5%), and a 40% shift still found in 95% (measured 99.5%)', () => {
    const same = verdicts(200, 0.1, 1)
    expect(same.worse.length / 200, `false alarms at seeds ${same.worse.join(', ')}`).toBeLessThanOrEqual(0.03)
    expect(verdicts(200, 0.1, 1.4).worse.length / 200).toBeGreaterThanOrEqual(0.95)
  })

  test('ten times the observations do not make a 5% wobble significant: the hours decide, not the count', () => {
    let worse = 0
    for (let seed = 1; seed <= 100; seed++) {
      const random = prng(seed * 104729)
      if (
        judgeHistogram(TTFT, TTFT_EDGES, hours(random, 0.12, 0.05, 10_000), hours(random, 0.12, 0.05, 10_000), JUDGE_DEFAULTS).verdict ===
        'worse'
      )
        worse++
    }
    expect(worse / 100).toBeLessThanOrEqual(0.02)
  })
})

describe('the false-alarm rate of a ratio (preemptions per request: sparse, zero-heavy)', () => {
  const PREEMPT = { id: 'preemptions', direction: 'higher-worse' as const, threshold: 0.25, floor: 0.001 }
  test('identical rates of 1 in 300 requests: worse in at most 1% of 300 pairs, never from a handful of events', () => {
    let worse = 0
    for (let seed = 1; seed <= 300; seed++) {
      const random = prng(seed * 6007)
      const window = () => {
        const den = Array.from({ length: 6 }, () => poisson(random, 400))
        return { num: den.map((d) => poisson(random, d / 300)), den }
      }
      const b = window()
      const a = window()
      const v = judgeRatio(
        PREEMPT,
        b,
        a,
        { baseline: b.den.reduce((x, y) => x + y, 0), after: a.den.reduce((x, y) => x + y, 0), what: 'requests' },
        JUDGE_DEFAULTS,
      ).verdict
      if (v === 'worse') worse++
    }
    expect(worse / 300).toBeLessThanOrEqual(0.01)
  })
})

describe('a quantile past the largest bucket is a bound, never a value', () => {
  // vLLM's TTFT buckets ended at 10 s before they reached 2560 s: an overloaded engine's p50 and p95 sit in +Inf.
  const OLD_EDGES = TTFT_EDGES.slice(0, TTFT_EDGES.indexOf(10) + 1)
  const window = (random: () => number, median: number) =>
    Array.from({ length: 6 }, () => bucketCounts(random, OLD_EDGES, 1000, median * Math.exp(0.05 * gaussian(random)), 0.6))

  test('three times slower, every quantile past the largest bucket in both windows: inconclusive, never no change', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const random = prng(4_000_000 + seed)
      const j = judgeHistogram(TTFT, OLD_EDGES, window(random, 14), window(random, 42), JUDGE_DEFAULTS)
      expect(j.verdict, `seed ${4_000_000 + seed}: ${j.reason}`).toBe('inconclusive')
      expect(j.reason).toContain('past the largest bucket (le 10) in both windows')
      expect(j.next).toContain('buckets end at le 10')
    }
  })

  test('p50 a little faster while p95 left the buckets after the arm: not better; a p50 that moved past its threshold despite the bound stays worse', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const random = prng(5_000_000 + seed)
      // Baseline: median 4 s, p95 about 10.7 s (past 10); after: median 3.8 s, a longer tail (p95 far past 10).
      const baseline = Array.from({ length: 6 }, () => bucketCounts(random, OLD_EDGES, 1000, 4 * Math.exp(0.05 * gaussian(random)), 0.6))
      const after = Array.from({ length: 6 }, () => bucketCounts(random, OLD_EDGES, 1000, 3.8 * Math.exp(0.05 * gaussian(random)), 1.2))
      expect(['inconclusive', 'worse'], `seed ${5_000_000 + seed}`).toContain(
        judgeHistogram(TTFT, OLD_EDGES, baseline, after, JUDGE_DEFAULTS).verdict,
      )
      const slower = judgeHistogram(TTFT, OLD_EDGES, window(random, 2), window(random, 6), JUDGE_DEFAULTS)
      expect(slower.verdict, `seed ${5_000_000 + seed}: ${slower.reason}`).toBe('worse')
    }
  })
})
