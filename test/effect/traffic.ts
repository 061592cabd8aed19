// Synthetic engine traffic for the effect's tests: latencies drawn from log-normal distributions
// with vLLM's real bucket edges (vllm/v1/metrics/buckets.py, see engine-facts.md 1.C), counts per
// bucket drawn as Poisson, a daily pattern (busy hours are busier and slower) and an hour-to-hour
// wobble, as real traffic has. Seeded: the same seed gives the same counts.

export const TTFT_EDGES = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10, 20, 40, 80, 160, 640, 2560,
]
export const ITL_EDGES = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10, 20, 40, 80]
export const E2E_EDGES = [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680]

/** A standard normal draw (Box-Muller). */
export function gaussian(random: () => number): number {
  const u = Math.max(random(), 1e-12)
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random())
}

/** A Poisson draw; the normal approximation above a mean of 50. */
export function poisson(random: () => number, mean: number): number {
  if (mean <= 0) return 0
  if (mean > 50) return Math.max(0, Math.round(mean + Math.sqrt(mean) * gaussian(random)))
  const limit = Math.exp(-mean)
  let k = 0
  let p = random()
  while (p > limit) {
    k++
    p *= random()
  }
  return k
}

/** Φ, for the log-normal's bucket probabilities. */
function phi(x: number): number {
  const t = 1 / (1 + 0.2316419 * Math.abs(x))
  const d = 0.3989423 * Math.exp((-x * x) / 2)
  const p = d * t * (0.3193815 + t * (-0.3565638 + t * (1.781478 + t * (-1.821256 + t * 1.330274))))
  return x > 0 ? 1 - p : p
}

/** Probability of each bucket (the +Inf one last) for a log-normal of this median and sigma. */
export function bucketProbabilities(edges: readonly number[], median: number, sigma: number): number[] {
  const cdf = edges.map((e) => phi((Math.log(e) - Math.log(median)) / sigma))
  return [...cdf.map((c, k) => c - (k === 0 ? 0 : cdf[k - 1]!)), 1 - cdf.at(-1)!]
}

/** Counts per bucket of `n` expected observations (Poisson per bucket). */
export function bucketCounts(random: () => number, edges: readonly number[], n: number, median: number, sigma: number): number[] {
  return bucketProbabilities(edges, median, sigma).map((p) => poisson(random, n * p))
}

/** 0 at night, 1 in the busy hours (09–17 UTC), with ramps between: the daily pattern. */
export function busy(hourOfDay: number): number {
  const h = ((hourOfDay % 24) + 24) % 24
  if (h >= 9 && h < 17) return 1
  if (h >= 7 && h < 9) return (h - 7) / 2
  if (h >= 17 && h < 20) return (20 - h) / 3
  return 0
}

/** The daily pattern of the effect's property tests: median TTFT 120 ms in the quiet hours, 400 ms in the busy ones. */
export const QUIET_MEDIAN = 0.12
export const BUSY_MEDIAN = 0.4

/**
 * One day's hours of TTFT buckets from `startHour` on: `perWindow` requests spread over the hours
 * by the daily pattern (a busy hour four times a quiet one), each hour's median from the pattern,
 * times `factor`, times a log-normal wobble of `wobble` drawn afresh for each hour of each day (like
 * hours of two days differ by that much for reasons that are not the knob).
 */
export function dayOfHours(
  random: () => number,
  o: { startHour: number; hours: number; perWindow: number; factor: number; wobble: number; sigma?: number },
): number[][] {
  const load = Array.from({ length: o.hours }, (_, i) => busy(o.startHour + i))
  const weights = load.map((b) => 0.25 + 0.75 * b)
  const sum = weights.reduce((a, b) => a + b, 0)
  return load.map((b, i) =>
    bucketCounts(
      random,
      TTFT_EDGES,
      (o.perWindow * weights[i]!) / sum,
      QUIET_MEDIAN * (BUSY_MEDIAN / QUIET_MEDIAN) ** b * o.factor * Math.exp(o.wobble * gaussian(random)),
      o.sigma ?? 0.6,
    ),
  )
}

/** The judged specs the in-process effect tests share: radiance's TTFT and preemptions per request, as helpers/effect/metrics.ts builds them. */
export const TTFT_SPEC = { id: 'ttft', direction: 'higher-worse' as const, threshold: 0.1, floor: 0.005, unit: 's' }
export const PREEMPT_SPEC = {
  id: 'preemptions',
  direction: 'higher-worse' as const,
  threshold: 0.25,
  floor: 0.001,
  unit: '/request',
  scale: 'absolute' as const,
}
