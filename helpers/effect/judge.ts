// The judgement of one metric from its chunks (the hours of the baseline and of the after window).
// Per statistic (a histogram's p50 and p95, a ratio's value), one number per chunk; chunk i after
// the arm is compared with chunk i of the baseline (the same hours of another day: ./compare.ts),
// and the pairs give the shift and its confidence interval. Three answers come from the interval
// and the metric's practical threshold:
//   - `worse` / `better`: the shift is significant (p < alpha) and its estimate beyond the threshold;
//   - `no change`: the whole interval lies within ±threshold (an equivalence test: evidence of no
//     change, not the absence of evidence of one);
//   - `inconclusive` otherwise, saying why: too few observations or hours, or an interval that
//     straddles the threshold ("could be up to +14%").
// Each statistic also says the smallest shift this run could have detected (its power).
// Cadence and throughput have no worse direction: a shift past the threshold says `changed`.
import { pairedComparison, unpairedComparison, MIN_PAIRS, type Comparison } from './compare.ts'
import { pct, pValue } from './format.ts'
import type { Direction } from './metrics.ts'
import { quantile, quantilesInto, total } from './stats.ts'

export interface JudgeOptions {
  /** Fewer observations (or requests, steps) than this in a window is too little traffic. */
  minCount: number
  /** A shift is significant below this p (two-sided). */
  alpha: number
  /** The interval's level: 0.9 is the two one-sided tests of equivalence at 5% each. */
  level: number
  /** The power the smallest detectable shift is stated at. */
  power: number
  /** A histogram's chunk with fewer observations than this gives no quantile of its own. */
  minPerChunk: number
}

export const JUDGE_DEFAULTS: JudgeOptions = { minCount: 100, alpha: 0.01, level: 0.9, power: 0.8, minPerChunk: 20 }

/** `not exported`: the engine serves none of its series in either window (said, and it leaves the run's verdict alone). */
export type MetricVerdict = 'better' | 'worse' | 'no change' | 'changed' | 'inconclusive' | 'not exported'

/** Where one statistic's interval lies against the threshold. */
export type ShiftState = 'up' | 'down' | 'within' | 'unclear'

export interface Shift {
  /** The estimated shift, after / baseline − 1 (±Infinity from a baseline of zero). */
  relative: number
  /** The estimated shift in the metric's unit. */
  absolute: number
  /** The interval of `relative` (level `JudgeOptions.level`). */
  interval: { low: number; high: number }
  /** The same interval in the metric's unit (what is said from a baseline of zero). */
  intervalAbsolute: { low: number; high: number }
  /** The test's two-sided p of no shift. */
  p: number
  df: number
  /** Pairs of chunks (paired), or the fewer chunks of the two windows (unpaired). */
  chunks: number
  /** The practical band, relative (the threshold, or the floor where that is larger); Infinity from a baseline of zero. */
  band: number
  /** The smallest shift (relative) this run finds at alpha with the stated power. */
  detectable: number
  /** The same in the metric's unit (what is said from a baseline of zero). */
  detectableAbsolute: number
  significant: boolean
  practical: boolean
  state: ShiftState
  /** The quantile lies past the largest finite bucket (`le`) in this window or both: the shift is a bound, not a value. */
  beyond?: { in: 'after' | 'baseline' | 'both'; le: number }
}

export interface TestInfo {
  /** paired: chunk i after against chunk i of the like hours; unpaired: Welch's t over the chunks of each window. */
  method: 'paired' | 'unpaired'
  /** The differences taken: of logs (a relative shift), or of values (per-request counts that may be zero). */
  scale: 'log' | 'absolute'
  level: number
  alpha: number
}

export interface Judgement {
  verdict: MetricVerdict
  /** One line: what decided it. */
  reason: string
  shifts: Record<string, Shift>
  test: TestInfo | null
  /** The next step, where the verdict's own reason calls for one (else the caller's default). */
  next?: string
}

export interface Spec {
  id: string
  direction: Direction
  threshold: number
  floor: number
  /** A ratio's differences: of logs (default), or of values (a count per request that may be zero). */
  scale?: 'log' | 'absolute'
}

const sign = (x: number) => (x > 0 ? '+' : '')

/** One statistic's shift from its comparison, on its scale, against the pooled baseline value. */
function shiftOf(
  c: Comparison,
  scale: TestInfo['scale'],
  base: number,
  spec: Spec,
  options: JudgeOptions,
  beyond?: Shift['beyond'],
): Shift {
  const common = { p: c.p, df: c.df, chunks: c.n, ...(beyond ? { beyond } : {}) }
  const significant = c.p < options.alpha
  if (scale === 'log') {
    const band = Math.max(spec.threshold, base > 0 ? spec.floor / base : 0)
    const relative = Math.expm1(c.estimate)
    const interval = { low: Math.expm1(c.low), high: Math.expm1(c.high) }
    const practical = Math.abs(relative) >= band
    const within = interval.low > -band && interval.high < band
    return {
      relative,
      absolute: base * relative,
      interval,
      intervalAbsolute: { low: base * interval.low, high: base * interval.high },
      ...common,
      band,
      detectable: Math.expm1(c.detectable),
      detectableAbsolute: base * Math.expm1(c.detectable),
      significant,
      practical,
      state: significant && practical ? (relative > 0 ? 'up' : 'down') : within ? 'within' : 'unclear',
    }
  }
  const bandAbs = Math.max(spec.threshold * Math.abs(base), spec.floor)
  // a count per request is never below zero: the after window's value at least −base away
  const low = base >= 0 ? Math.max(c.low, -base) : c.low
  const rel = (x: number) => (base !== 0 ? x / Math.abs(base) : x === 0 ? 0 : x > 0 ? Infinity : -Infinity)
  const practical = Math.abs(c.estimate) >= bandAbs
  const within = low > -bandAbs && c.high < bandAbs
  return {
    relative: rel(c.estimate),
    absolute: c.estimate,
    interval: { low: rel(low), high: rel(c.high) },
    intervalAbsolute: { low, high: c.high },
    ...common,
    band: base !== 0 ? bandAbs / Math.abs(base) : Infinity,
    detectable: rel(c.detectable),
    detectableAbsolute: c.detectable,
    significant,
    practical,
    state: significant && practical ? (c.estimate > 0 ? 'up' : 'down') : within ? 'within' : 'unclear',
  }
}

/** `p95 +168% (interval +120%…+230%, p=0.0001, 6 hour pairs)`; from zero: in the unit. */
function shiftText(name: string, s: Shift, unit: string): string {
  const hours = `p=${pValue(s.p)}, ${s.chunks} ${s.chunks === 1 ? 'chunk' : 'chunks'}`
  if (!Number.isFinite(s.band) && s.absolute === 0 && s.interval.low === 0 && s.interval.high === 0)
    return `${name} 0 in both windows, every chunk (${hours})`
  if (!Number.isFinite(s.relative) || !Number.isFinite(s.band))
    return `${name} from 0 by ${sign(s.absolute)}${Number(s.absolute.toPrecision(3))}${unit.startsWith('/') ? ` ${unit}` : unit} (${hours})`
  return `${name} ${pct(s.relative)} (interval ${pct(s.interval.low)}…${pct(s.interval.high)}, ${hours})`
}

/** The verdict from the statistics' shifts (`missing`: why a statistic has none, by name). */
function decide(spec: Spec & { unit?: string }, shifts: Record<string, Shift>, missing: Record<string, string>, test: TestInfo): Judgement {
  const unit = spec.unit ?? ''
  const entries = Object.entries(shifts)
  const text = (list: typeof entries) => list.map(([n, s]) => shiftText(n, s, unit)).join(', ')
  const threshold = `threshold ±${pct(spec.threshold).replace(/^\+/, '')}`
  // the band a statistic was held to, where the metric's floor makes it wider than the threshold
  const widest = Math.max(...entries.map(([, s]) => s.band))
  const band =
    widest > spec.threshold
      ? Number.isFinite(widest)
        ? `band ±${pct(widest).replace(/^\+/, '')} (the floor of ${spec.floor}${unit.startsWith('/') ? ` ${unit}` : unit} is wider than the threshold here)`
        : `floor of ±${spec.floor}${unit.startsWith('/') ? ` ${unit}` : unit} (the baseline is zero)`
      : threshold
  const up = entries.filter(([, s]) => s.state === 'up')
  const down = entries.filter(([, s]) => s.state === 'down')
  const unclear = entries.filter(([, s]) => s.state === 'unclear')
  const worseList = spec.direction === 'higher-worse' ? up : spec.direction === 'lower-worse' ? down : []
  const betterList = spec.direction === 'higher-worse' ? down : spec.direction === 'lower-worse' ? up : []
  const missingText = Object.entries(missing)
    .map(([n, why]) => `${n}: ${why}`)
    .join('; ')
  if (worseList.length) return { verdict: 'worse', reason: `${text(worseList)}: past the ${threshold}, significant`, shifts, test }
  // A quantile past the largest bucket is only known to be above it: a shift seen despite that
  // stands (the true one is larger still), but an unmoved one measures nothing.
  const bounded = entries.filter(([, s]) => s.beyond !== undefined && s.state !== 'up' && s.state !== 'down')
  if (bounded.length) {
    const where = bounded
      .map(
        ([name, s]) =>
          `${name} is past the largest bucket (le ${s.beyond!.le}) in ${s.beyond!.in === 'both' ? 'both windows' : `the ${s.beyond!.in} window`}`,
      )
      .join(', ')
    const le = bounded[0]![1].beyond!.le
    return {
      verdict: 'inconclusive',
      reason: `${where}: a quantile there is a bound, not a value, so its shift is not measured`,
      shifts,
      test,
      next: `the engine's buckets end at le ${le} and this traffic lies past it: compare the share of observations above ${le} in the picture, or judge with a build whose buckets reach further`,
    }
  }
  if (missingText)
    return {
      verdict: 'inconclusive',
      reason: `too few hours to judge ${missingText}`,
      shifts,
      test,
      next: 'judge a longer --after (each hour pair is one observation of the shift), or windows in busier hours',
    }
  if (spec.direction === 'none' && (up.length || down.length))
    return {
      verdict: 'changed',
      reason: `${text([...up, ...down])}: past the ${threshold}; a change here is not a regression by itself (cadence: the knob acting; throughput: the traffic)`,
      shifts,
      test,
    }
  if (unclear.length) {
    const inUnit = (x: number) => `${sign(x)}${Number(x.toPrecision(3))}${unit.startsWith('/') ? ` ${unit}` : unit}`
    const far = unclear.map(([n, s]) => {
      const [lo, hi] = Number.isFinite(s.band) ? [s.interval.low, s.interval.high] : [s.intervalAbsolute.low, s.intervalAbsolute.high]
      const worst = Math.abs(hi) >= Math.abs(lo) ? hi : lo
      return `${n} could be up to ${Number.isFinite(s.band) ? pct(worst) : inUnit(worst)}`
    })
    const could = unclear.map(([n, s]) =>
      Number.isFinite(s.band)
        ? `${n} ±${pct(s.detectable).replace(/^\+/, '')}`
        : `${n} ±${inUnit(s.detectableAbsolute).replace(/^\+/, '')}`,
    )
    return {
      verdict: 'inconclusive',
      reason: `${text(unclear)}: the interval straddles the ${band} (${far.join(', ')}); this run could detect ${could.join(', ')}`,
      shifts,
      test,
      next: 'judge a longer --after (more hour pairs narrow the interval), or raise --threshold for this metric if a shift of that size does not matter',
    }
  }
  if (betterList.length)
    return {
      verdict: 'better',
      reason: `${text(betterList)}: past the ${threshold}, significant${betterList.length < entries.length ? `; ${text(entries.filter(([, s]) => s.state === 'within'))} within it` : ''}`,
      shifts,
      test,
    }
  return { verdict: 'no change', reason: `${text(entries)}: every interval within the ${band}`, shifts, test }
}

export const QUANTILES = [
  ['p50', 0.5],
  ['p95', 0.95],
] as const

const compareWith = (paired: boolean, a: number[], b: number[], o: JudgeOptions) =>
  (paired ? pairedComparison : unpairedComparison)(a, b, { level: o.level, alpha: o.alpha, power: o.power })

const tooLittle = (what: string, nB: number, nA: number, min: number): Judgement => ({
  verdict: 'inconclusive',
  reason: `too little traffic: ${Math.round(nB)} ${what} in the baseline and ${Math.round(nA)} after the arm; the judgement needs ${min} in each`,
  shifts: {},
  test: null,
})

function hoursMissing(paired: boolean, after: readonly number[], baseline: readonly number[], what: string): string {
  const has = (xs: readonly number[]) => xs.filter(Number.isFinite).length
  return paired
    ? `${after.filter((x, i) => Number.isFinite(x) && Number.isFinite(baseline[i] ?? NaN)).length} hour pairs hold ${what} in both windows; the judgement needs ${MIN_PAIRS}`
    : `${has(baseline)} chunks of the baseline and ${has(after)} after the arm hold ${what}; the judgement needs ${MIN_PAIRS} in each`
}

/**
 * A histogram: the p50 and p95 of each chunk (histogram_quantile's, from the chunk's own bucket
 * counts), compared chunk by chunk on logs. `paired`: chunk i after with chunk i of the baseline.
 */
export function judgeHistogram(
  spec: Spec & { unit?: string },
  edges: readonly number[],
  baseline: readonly (readonly number[])[],
  after: readonly (readonly number[])[],
  paired: boolean,
  options: JudgeOptions = JUDGE_DEFAULTS,
): Judgement {
  const width = edges.length + 1
  const sum = (blocks: readonly (readonly number[])[]) => {
    const out = new Array<number>(width).fill(0)
    for (const b of blocks) for (let k = 0; k < width; k++) out[k]! += b[k] ?? 0
    return out
  }
  const b = sum(baseline)
  const a = sum(after)
  if (total(b) < options.minCount || total(a) < options.minCount) return tooLittle('observations', total(b), total(a), options.minCount)
  const qs = QUANTILES.map(([, at]) => at)
  // each chunk's quantiles, on logs; NaN where the chunk holds too few observations
  const perChunk = (blocks: readonly (readonly number[])[]) => {
    const out = qs.map(() => [] as number[])
    const values = new Float64Array(qs.length)
    const beyond = new Uint8Array(qs.length)
    for (const block of blocks) {
      const counts = Float64Array.from({ length: width }, (_, k) => block[k] ?? 0)
      const enough = total(counts) >= options.minPerChunk && quantilesInto(edges, counts, 0, width, qs, values, beyond)
      qs.forEach((_, i) => out[i]!.push(enough && values[i]! > 0 ? Math.log(values[i]!) : NaN))
    }
    return out
  }
  const [ca, cb] = [perChunk(after), perChunk(baseline)]
  const test: TestInfo = { method: paired ? 'paired' : 'unpaired', scale: 'log', level: options.level, alpha: options.alpha }
  const shifts: Record<string, Shift> = {}
  const missing: Record<string, string> = {}
  QUANTILES.forEach(([name, q], i) => {
    const pa = quantile({ edges, counts: a }, q)!
    const pb = quantile({ edges, counts: b }, q)!
    const beyond: Shift['beyond'] =
      pa.beyond || pb.beyond ? { in: pa.beyond && pb.beyond ? 'both' : pa.beyond ? 'after' : 'baseline', le: edges.at(-1)! } : undefined
    const c = compareWith(paired, ca[i]!, cb[i]!, options)
    if (c) shifts[name] = shiftOf(c, 'log', pb.value, spec, options, beyond)
    else missing[name] = hoursMissing(paired, ca[i]!, cb[i]!, `${options.minPerChunk} observations`)
  })
  return decide(spec, shifts, missing, test)
}

/** A ratio of counter increases, chunk by chunk (`den`: seconds of the chunk for a rate). */
export function judgeRatio(
  spec: Spec & { unit?: string },
  baseline: { num: readonly number[]; den: readonly number[] },
  after: { num: readonly number[]; den: readonly number[] },
  counted: { baseline: number; after: number; what: string },
  paired: boolean,
  options: JudgeOptions = JUDGE_DEFAULTS,
): Judgement {
  if (counted.baseline < options.minCount || counted.after < options.minCount)
    return tooLittle(counted.what, counted.baseline, counted.after, options.minCount)
  const scale = spec.scale ?? 'log'
  const values = (w: { num: readonly number[]; den: readonly number[] }) =>
    w.num.map((n, i) => {
      const d = w.den[i]!
      if (!(d > 0)) return NaN
      return scale === 'log' ? (n > 0 ? Math.log(n / d) : NaN) : n / d
    })
  const pooled = (w: { num: readonly number[]; den: readonly number[] }) => {
    const d = total(w.den)
    return d > 0 ? total(w.num) / d : NaN
  }
  const [va, vb] = [values(after), values(baseline)]
  const test: TestInfo = { method: paired ? 'paired' : 'unpaired', scale, level: options.level, alpha: options.alpha }
  const c = compareWith(paired, va, vb, options)
  if (!c)
    return decide(
      spec,
      {},
      { rate: hoursMissing(paired, va, vb, `${counted.what}${scale === 'log' ? ' and a value above zero' : ''}`) },
      test,
    )
  return decide(spec, { rate: shiftOf(c, scale, pooled(baseline), spec, options) }, {}, test)
}
