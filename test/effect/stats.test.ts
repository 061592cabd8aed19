// The effect's statistics, pure: quantiles as histogram_quantile computes them, Mann-Whitney with
// ties against values worked by hand, the permutation test's level, the bootstrap's determinism.
import { describe, expect, test } from 'vitest'
import { mannWhitney, mannWhitneyValues, normalTail, quantile, quantilesInto, relativeShift } from '../../helpers/effect/stats.ts'
import { layout, sumBlocks, sumInto } from '../../helpers/effect/blocks.ts'
import { bootstrap, permutation } from '../../helpers/effect/resample.ts'
import { prng } from '../../helpers/effect/prng.ts'

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

describe('Mann-Whitney U on bucketed observations', () => {
  test('complete separation: U = 0 or nA·nB, superiority 0 or 1', () => {
    const low = mannWhitney([3, 0], [0, 3])
    expect(low.u).toBe(0)
    expect(low.superiority).toBe(0)
    expect(mannWhitney([0, 3], [3, 0]).u).toBe(9)
  })

  test('ties count one half, and the variance takes the tie correction (worked by hand)', () => {
    // a = {1, 2, 2}, b = {2, 3}: pairs a>b: none; ties (2,2) twice → U = 1
    const r = mannWhitneyValues([1, 2, 2], [2, 3])
    expect(r.u).toBe(1)
    // N = 5, ties: value 2 three times → Σ(t³−t) = 24; var = 3·2/12 · (6 − 24/20) = 2.4
    const z = -(Math.abs(1 - 3) - 0.5) / Math.sqrt(2.4)
    expect(r.z).toBeCloseTo(z, 12)
    expect(r.p).toBeCloseTo(2 * normalTail(Math.abs(z)), 12)
  })

  test('all observations in one bucket, or one side empty: p = 1, never a difference', () => {
    expect(mannWhitney([500, 0], [700, 0]).p).toBe(1)
    expect(mannWhitney([0, 0], [7, 3]).p).toBe(1)
  })

  test('the normal tail is Φ to 1e-7', () => {
    expect(normalTail(0)).toBeCloseTo(0.5, 7)
    expect(normalTail(1.959964)).toBeCloseTo(0.025, 7)
    expect(normalTail(-2.326348)).toBeCloseTo(0.99, 7)
  })
})

describe('shifts, the bootstrap and the permutation test', () => {
  test('a shift from zero is infinite, zero to zero is none', () => {
    expect(relativeShift(2, 0)).toBe(Infinity)
    expect(relativeShift(0, 0)).toBe(0)
    expect(relativeShift(1.5, 1)).toBeCloseTo(0.5, 12)
  })

  test('the bootstrap gives the same interval for the same seed, and it covers the point of a constant statistic', () => {
    const run = () =>
      bootstrap(6, 6, (ia, ib) => [ia.reduce((a, b) => a + b, 0) - ib.reduce((a, b) => a + b, 0)], {
        rounds: 200,
        level: 0.95,
        random: prng(7),
      })
    expect(run()).toEqual(run())
    expect(bootstrap(6, 6, () => [0.25], { rounds: 50, level: 0.95, random: prng(1) })).toEqual([{ low: 0.25, high: 0.25 }])
  })

  test('the interval is the draws sorted, read at the tails: ties, NaN left out, ±Infinity, any level, one array handed back each round', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const r = prng(seed)
      const rounds = 1 + Math.floor(r() * 300)
      const kind = seed % 4
      const draws = Array.from({ length: rounds }, () => {
        const x = r()
        if (kind === 0) return Math.floor(x * 3)
        if (kind === 1) return x < 0.1 ? NaN : x < 0.2 ? Infinity : x < 0.25 ? -Infinity : x
        if (kind === 2) return x < 0.5 ? NaN : 7
        return x - 0.5
      })
      const level = [0.95, 0.9, 0.5, 0, 1, 0.99, -0.5][seed % 7]!
      let i = 0
      const out = [0]
      const [got] = bootstrap(2, 3, () => ((out[0] = draws[i++]!), out), { rounds, level, random: r })
      const sorted = draws.filter((v) => !Number.isNaN(v)).sort((x, y) => x - y)
      const tail = (1 - level) / 2
      const at = (f: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.floor(f * sorted.length)))]!
      expect(got, `seed ${seed}`).toEqual(sorted.length ? { low: at(tail), high: at(1 - tail) } : { low: NaN, high: NaN })
    }
  })

  test('the permutation p of exchangeable blocks is below alpha at most alpha of the time', () => {
    const alpha = 0.05
    let below = 0
    const cases = 200
    for (let seed = 1; seed <= cases; seed++) {
      const r = prng(seed)
      const blocks = Array.from({ length: 12 }, () => [r()])
      const mean = (ix: readonly number[]) => ix.reduce((a, i) => a + blocks[i]![0]!, 0) / ix.length
      const [p] = permutation(6, 6, (ia, ib) => [mean(ia) - mean(ib)], { rounds: 200, random: prng(seed * 31) })
      if (p! < alpha) below++
    }
    expect(below / cases).toBeLessThanOrEqual(alpha + 0.03)
    // and a real difference is found
    const blocks = [...Array.from({ length: 6 }, (_, i) => [10 + i]), ...Array.from({ length: 6 }, (_, i) => [i])]
    const mean = (ix: readonly number[]) => ix.reduce((a, i) => a + blocks[i]![0]!, 0) / ix.length
    expect(permutation(6, 6, (ia, ib) => [mean(ia) - mean(ib)], { rounds: 500, random: prng(3) })[0]).toBeLessThan(0.01)
  })

  test('sumBlocks adds the chosen blocks bucket by bucket, a block chosen twice counting twice', () => {
    expect(
      sumBlocks(
        [
          [1, 2],
          [10, 20],
        ],
        [1, 1, 0],
        2,
      ),
    ).toEqual([21, 42])
  })

  test('a sum over the span of nonzero buckets is the plain sum in the order drawn, to the bit (a short block counts 0 past its end)', () => {
    for (let seed = 1; seed <= 100; seed++) {
      const r = prng(seed * 17)
      const width = 2 + Math.floor(r() * 10)
      const blocks = Array.from({ length: 1 + Math.floor(r() * 8) }, () =>
        Array.from({ length: r() < 0.2 ? Math.floor(r() * width) : width }, (_, k) =>
          k < 1 || k > width - 3 || r() < 0.3 ? 0 : r() * 1e3,
        ),
      )
      const chosen = Array.from({ length: 1 + Math.floor(r() * 10) }, () => Math.floor(r() * blocks.length))
      const plain = new Array<number>(width).fill(0)
      for (const i of chosen) for (let k = 0; k < width; k++) plain[k]! += blocks[i]![k] ?? 0
      const l = layout(blocks, width)
      expect([...sumInto(l, chosen, chosen.length, 0, new Float64Array(width).fill(7))], `seed ${seed}`).toEqual(plain)
      for (let k = 0; k < width; k++) if (k < l.from || k >= l.to) expect(blocks.every((b) => !b[k])).toBe(true)
    }
  })
})
