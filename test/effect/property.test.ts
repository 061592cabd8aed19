// The judgement attacked with traffic whose truth is known: many seeded days with the daily pattern
// (median TTFT 120 ms in the quiet hours, 400 ms in the busy ones, four times the requests), the
// arm at a random hour of the day (so the busy hours fall anywhere in the six hours after it, the
// seasonality trap included), vLLM's TTFT buckets, and like hours of two days differing by a
// wobble of their own. Nothing changed must rarely say `worse`, and at 65,000 requests a window
// mostly `no change`; a 25% slower TTFT must mostly say `worse`. The statistic is run in-process
// on the simulated bucket counts (the Prometheus path is test/effect/prometheus.test.ts). The rates
// measured here are the ones docs/guide/effect.md states; a failure names the seeds.
import { describe, expect, test } from 'vitest'
import { judgeHistogram, judgeRatio, JUDGE_DEFAULTS, type MetricVerdict } from '../../helpers/effect/judge.ts'
import { prng } from '../support/prng.ts'
import { PREEMPT_SPEC, TTFT_EDGES, TTFT_SPEC, bucketCounts, dayOfHours, gaussian, poisson } from './traffic.ts'

const TTFT = TTFT_SPEC

interface Tally {
  worse: number[]
  counts: Record<MetricVerdict, number>
}

/** The verdicts of `days` seeded pairs of like hours: the baseline day, then the after window's (TTFT × factor). */
function tally(days: number, o: { factor: number; wobble: number; perWindow: number; hours?: number; salt: number }): Tally {
  const counts = { worse: 0, better: 0, 'no change': 0, changed: 0, inconclusive: 0, 'not exported': 0 }
  const worse: number[] = []
  for (let seed = 1; seed <= days; seed++) {
    const random = prng(o.salt * 1_000_003 + seed)
    const startHour = Math.floor(random() * 24)
    const shape = { startHour, hours: o.hours ?? 6, perWindow: o.perWindow, wobble: o.wobble }
    const baseline = dayOfHours(random, { ...shape, factor: 1 })
    const after = dayOfHours(random, { ...shape, factor: o.factor })
    const v = judgeHistogram(TTFT, TTFT_EDGES, baseline, after, true, JUDGE_DEFAULTS).verdict
    counts[v]++
    if (v === 'worse') worse.push(seed)
  }
  return { worse, counts }
}

const rate = (n: number, of: number) => n / of

describe('the latency judgement over seeded days with the daily pattern (like hours 2% apart, 65,000 requests a window)', () => {
  const SAME = { factor: 1, wobble: 0.02, perWindow: 65_000 }

  test('identical distributions: worse in at most 1% of 400 days (measured 0%), no change in at least 75% (measured 81.5%)', () => {
    const r = tally(400, { ...SAME, salt: 1 })
    expect(rate(r.worse.length, 400), `false alarms at seeds ${r.worse.join(', ')}`).toBeLessThanOrEqual(0.01)
    expect(rate(r.counts.better, 400)).toBeLessThanOrEqual(0.01)
    expect(rate(r.counts['no change'], 400), JSON.stringify(r.counts)).toBeGreaterThanOrEqual(0.75)
  })

  test('TTFT 25% slower in every hour: worse in at least 95% of 200 days (measured 100%)', () => {
    const r = tally(200, { ...SAME, factor: 1.25, salt: 2 })
    expect(rate(r.worse.length, 200), JSON.stringify(r.counts)).toBeGreaterThanOrEqual(0.95)
  })

  test('TTFT twice as slow: worse every time; 20% faster: better, never worse', () => {
    expect(tally(50, { ...SAME, factor: 2, salt: 3 }).counts.worse).toBe(50)
    const faster = tally(50, { ...SAME, factor: 0.8, salt: 4 })
    expect(faster.counts.worse).toBe(0)
    expect(faster.counts.better / 50).toBeGreaterThanOrEqual(0.95)
  })
})

describe('like hours that differ more (5% apart): the judge says what it cannot rule out', () => {
  const WIDE = { factor: 1, wobble: 0.05, perWindow: 65_000 }

  test('identical: worse in at most 1% of 400 days (measured 0.25%); six hour pairs rule out 10% in a third of them (no change measured 33%), the rest say inconclusive', () => {
    const r = tally(400, { ...WIDE, salt: 5 })
    expect(rate(r.worse.length, 400), `false alarms at seeds ${r.worse.join(', ')}`).toBeLessThanOrEqual(0.01)
    expect(r.counts['no change'] + r.counts.inconclusive).toBeGreaterThanOrEqual(396)
    expect(rate(r.counts['no change'], 400), JSON.stringify(r.counts)).toBeGreaterThanOrEqual(0.25)
  })

  test('a 25% slower TTFT is still found in at least 90% of 200 days (measured 97.5%)', () => {
    expect(rate(tally(200, { ...WIDE, factor: 1.25, salt: 6 }).worse.length, 200)).toBeGreaterThanOrEqual(0.9)
  })

  test('twenty-four hour pairs (--after 24h) rule 10% out: no change in at least 85% of 200 identical days (measured 89.5%), worse in none', () => {
    const r = tally(200, { ...WIDE, perWindow: 260_000, hours: 24, salt: 7 })
    expect(r.worse.length).toBe(0)
    expect(rate(r.counts['no change'], 200), JSON.stringify(r.counts)).toBeGreaterThanOrEqual(0.85)
  })
})

describe('inconclusive says which', () => {
  test('an interval that straddles the threshold: how far it could be, and what this run could detect', () => {
    const random = prng(77)
    const shape = { startHour: 6, hours: 6, perWindow: 65_000, wobble: 0.08 }
    const j = judgeHistogram(
      TTFT,
      TTFT_EDGES,
      dayOfHours(random, { ...shape, factor: 1 }),
      dayOfHours(random, { ...shape, factor: 1.08 }),
      true,
    )
    expect(j.verdict, j.reason).toBe('inconclusive')
    expect(j.reason).toMatch(/the interval straddles the threshold ±10% \(p\d\d could be up to [+-]\d+%/)
    expect(j.reason).toMatch(/this run could detect p\d\d ±\d+%/)
    expect(j.next).toContain('--after')
  })

  test('too few hours with traffic (two of six hold 20 observations): inconclusive, naming the hours, never no change', () => {
    const random = prng(78)
    const hour = (n: number) => bucketCounts(random, TTFT_EDGES, n, 0.2, 0.6)
    const window = () => [hour(400), hour(400), hour(3), hour(2), hour(4), hour(1)]
    const j = judgeHistogram(TTFT, TTFT_EDGES, window(), window(), true)
    expect(j.verdict).toBe('inconclusive')
    expect(j.reason).toMatch(/^too few hours to judge p50: 2 hour pairs hold 20 observations in both windows; the judgement needs 3/)
  })
})

describe('a ratio of rare events (preemptions per request), judged on values, not logs', () => {
  const PREEMPT = PREEMPT_SPEC
  const window = (random: () => number, per: number) => {
    const den = Array.from({ length: 6 }, () => poisson(random, 400))
    return { num: den.map((d) => (per > 0 ? poisson(random, d / per) : 0)), den }
  }
  const judge = (b: ReturnType<typeof window>, a: ReturnType<typeof window>) =>
    judgeRatio(
      PREEMPT,
      b,
      a,
      { baseline: b.den.reduce((x, y) => x + y, 0), after: a.den.reduce((x, y) => x + y, 0), what: 'requests' },
      true,
    )

  test('identical rates of 1 in 300 requests: worse in at most 1% of 300 pairs, never from a handful of events', () => {
    let worse = 0
    for (let seed = 1; seed <= 300; seed++) {
      const random = prng(seed * 6007)
      if (judge(window(random, 300), window(random, 300)).verdict === 'worse') worse++
    }
    expect(worse / 300).toBeLessThanOrEqual(0.01)
  })

  test('no preemption in either window: no change (the interval is zero), not a shift from zero', () => {
    const random = prng(11)
    const j = judge(window(random, 0), window(random, 0))
    expect(j.verdict, j.reason).toBe('no change')
    expect(j.shifts.rate).toMatchObject({ relative: 0, state: 'within' })
  })

  test('one preemption in 20 requests after the arm, none before: worse', () => {
    const random = prng(12)
    const j = judge(window(random, 0), window(random, 20))
    expect(j.verdict, j.reason).toBe('worse')
  })
})

describe('a quantile past the largest bucket is a bound, never a value', () => {
  // vLLM's TTFT buckets ended at 10 s before they reached 2560 s: an overloaded engine's p50 and p95 sit in +Inf.
  const OLD_EDGES = TTFT_EDGES.slice(0, TTFT_EDGES.indexOf(10) + 1)
  const window = (random: () => number, median: number, sigma = 0.6) =>
    Array.from({ length: 6 }, () => bucketCounts(random, OLD_EDGES, 1000, median * Math.exp(0.02 * gaussian(random)), sigma))

  test('three times slower, every quantile past the largest bucket in both windows: inconclusive, never no change', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const random = prng(4_000_000 + seed)
      const j = judgeHistogram(TTFT, OLD_EDGES, window(random, 14), window(random, 42), true)
      expect(j.verdict, `seed ${4_000_000 + seed}: ${j.reason}`).toBe('inconclusive')
      expect(j.reason).toContain('past the largest bucket (le 10) in both windows')
      expect(j.next).toContain('buckets end at le 10')
    }
  })

  test('p50 a little faster while p95 left the buckets after the arm: not better; a p50 that moved past its threshold despite the bound stays worse', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const random = prng(5_000_000 + seed)
      // Baseline: median 4 s, p95 about 10.7 s (past 10); after: median 3.8 s, a longer tail (p95 far past 10).
      expect(['inconclusive', 'worse'], `seed ${5_000_000 + seed}`).toContain(
        judgeHistogram(TTFT, OLD_EDGES, window(random, 4), window(random, 3.8, 1.2), true).verdict,
      )
      const slower = judgeHistogram(TTFT, OLD_EDGES, window(random, 2), window(random, 6), true)
      expect(slower.verdict, `seed ${5_000_000 + seed}: ${slower.reason}`).toBe('worse')
    }
  })
})
