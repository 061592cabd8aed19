// The effect's statistics, pure: quantiles as histogram_quantile computes them, Student's t against
// the tables, the paired comparison worked by hand, its interval's level over noise.
import { describe, expect, test } from 'vitest'
import { quantile, quantilesInto } from '../../helpers/effect/stats.ts'
import { pairedComparison, unpairedComparison } from '../../helpers/effect/compare.ts'
import { tQuantile, tTwoSided } from '../../helpers/effect/student.ts'
import { prng } from '../support/prng.ts'

describe('quantile (histogram_quantile semantics)', () => {
  const edges = [0.1, 0.5, 1]
  test('linear inside the bucket the rank falls in; the first bucket from 0', () => {
    // 10 observations: 2 ≤ 0.1, 6 in (0.1, 0.5], 2 in (0.5, 1]
    expect(quantile({ edges, counts: [2, 6, 2, 0] }, 0.5)!.value).toBeCloseTo(0.1 + 0.4 * (3 / 6), 12)
    expect(quantile({ edges, counts: [2, 6, 2, 0] }, 0.1)!.value).toBeCloseTo(0.05, 12)
    expect(quantile({ edges, counts: [2, 6, 2, 0] }, 0.95)!.value).toBeCloseTo(0.5 + 0.5 * (1.5 / 2), 12)
  })

  test('a rank in the +Inf bucket is the highest finite edge, marked beyond; nothing is null', () => {
    expect(quantile({ edges, counts: [1, 0, 0, 9] }, 0.95)).toEqual({ value: 1, beyond: true })
    expect(quantile({ edges, counts: [0, 0, 0, 0] }, 0.5)).toBeNull()
  })

  test('empty buckets below the rank are skipped (no division by zero)', () => {
    expect(quantile({ edges, counts: [0, 0, 4, 0] }, 0.5)!.value).toBeCloseTo(0.75, 12)
  })

  test('several quantiles in one pass are each what quantile gives alone, to the bit, also read over the span of nonzero buckets', () => {
    const qs = [0, 0.01, 0.5, 0.5, 0.95, 0.99, 1]
    for (let seed = 1; seed <= 200; seed++) {
      const r = prng(seed)
      const width = 1 + Math.floor(r() * 8)
      const e = Array.from({ length: width - 1 }, (_, k) => (k === 0 && r() < 0.2 ? -0.5 : k + r()))
      const counts = Array.from({ length: width }, () => (r() < 0.4 ? 0 : r() < 0.5 ? Math.floor(r() * 50) : r() * 50))
      const from = counts.findIndex((c) => c !== 0)
      const to = counts.findLastIndex((c) => c !== 0) + 1
      const values = new Float64Array(qs.length)
      const beyond = new Uint8Array(qs.length)
      const some = quantilesInto(e, Float64Array.from(counts), Math.max(0, from), to, qs, values, beyond)
      expect(some, `seed ${seed}`).toBe(from >= 0)
      if (!some) continue
      const one = qs.map((q) => quantile({ edges: e, counts }, q)!)
      expect([...values], `seed ${seed}`).toEqual(one.map((x) => x.value))
      expect([...beyond].map((b) => b === 1)).toEqual(one.map((x) => x.beyond))
    }
  })
})

describe("Student's t", () => {
  test("its quantiles are the tables' (to 1e-6) and its tail their inverse", () => {
    // two-sided 5% and 1% points, and one-sided 80%, from any t table
    expect(tQuantile(0.975, 5)).toBeCloseTo(2.570582, 6)
    expect(tQuantile(0.995, 5)).toBeCloseTo(4.032143, 6)
    expect(tQuantile(0.95, 5)).toBeCloseTo(2.015048, 6)
    expect(tQuantile(0.8, 5)).toBeCloseTo(0.919544, 6)
    expect(tQuantile(0.975, 23)).toBeCloseTo(2.068658, 6)
    expect(tQuantile(0.025, 5)).toBeCloseTo(-2.570582, 6)
    expect(tQuantile(0.975, 1e6)).toBeCloseTo(1.959966, 5)
    for (const df of [1, 2, 5, 11, 40])
      for (const p of [0.5, 0.2, 0.05, 0.01, 1e-4]) expect(tTwoSided(tQuantile(1 - p / 2, df), df)).toBeCloseTo(p, 9)
    expect(tTwoSided(0, 5)).toBe(1)
    expect(tTwoSided(Infinity, 5)).toBe(0)
  })
})

describe('the comparison of chunks', () => {
  const o = { level: 0.9, alpha: 0.01, power: 0.8 }
  test("paired: the mean of the pairs' differences, its t interval (worked by hand), chunks missing in either window left out", () => {
    const c = pairedComparison([1.1, 2.2, 3.1, NaN, 5.3], [1, 2, 3, 4, NaN], o)!
    // differences 0.1, 0.2, 0.1: mean 0.1333, sd 0.057735, se 0.033333, 2 df
    expect(c.n).toBe(3)
    expect(c.estimate).toBeCloseTo(0.133333, 6)
    expect(c.se).toBeCloseTo(0.057735 / Math.sqrt(3), 6)
    expect(c.df).toBe(2)
    expect(c.high - c.estimate).toBeCloseTo(2.919986 * c.se, 6)
    expect(c.p).toBeCloseTo(tTwoSided(c.estimate / c.se, 2), 12)
    expect(c.detectable).toBeCloseTo(c.se * (tQuantile(0.995, 2) + tQuantile(0.8, 2)), 12)
  })

  test('the daily pattern cancels inside the pairs: a shift the unpaired comparison cannot see is plain to the paired one', () => {
    const day = [0, 0.2, 0.9, 1.2, 1.2, 1.1]
    const r = prng(5)
    const baseline = day.map((x) => x + 0.02 * (r() - 0.5))
    const after = day.map((x) => x + 0.1 + 0.02 * (r() - 0.5))
    expect(pairedComparison(after, baseline, o)!.p).toBeLessThan(1e-4)
    expect(unpairedComparison(after, baseline, o)!.p).toBeGreaterThan(0.5)
  })

  test('fewer than three pairs give no comparison; identical pairs a zero interval and p = 1', () => {
    expect(pairedComparison([1, 2], [1, 2], o)).toBeNull()
    expect(unpairedComparison([1, 2, 3], [1, 2], o)).toBeNull()
    expect(pairedComparison([1, 2, 3], [1, 2, 3], o)).toMatchObject({ estimate: 0, low: 0, high: 0, p: 1 })
  })

  test('the paired interval holds its level over exchangeable noise (90%: within 3 points over 400 cases)', () => {
    let covered = 0
    for (let seed = 1; seed <= 400; seed++) {
      const r = prng(seed)
      const noise = () => (r() + r() + r() + r() - 2) * 0.1
      const base = Array.from({ length: 6 }, () => r())
      const c = pairedComparison(
        base.map((b) => b + 0.05 + noise()),
        base.map((b) => b + noise()),
        o,
      )!
      if (c.low <= 0.05 && c.high >= 0.05) covered++
    }
    expect(Math.abs(covered / 400 - 0.9)).toBeLessThanOrEqual(0.03)
  })
})
