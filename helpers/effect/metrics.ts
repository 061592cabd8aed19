// What `effect` judges, per engine, as data: the table is built from the engine profile's names
// (helpers/profiles/*.yaml, `metrics:`), so vLLM, SGLang and llama.cpp are each read by their own
// series, never by radiance's. Latency lives under `vllm:` (radiance, vLLM) or `sglang:`, cadence
// under `radiance:` (the runbook's trap): each metric names its series in full. A histogram is
// judged from its buckets; a ratio from the increases of counters (per second, per request, per
// step, per token) hour by hour. What an engine does not serve at all is said (`notJudged`).
import { promString } from '../prom/query.ts'
import type { Engine, KnobSpec, Renamed } from '../profiles/types.ts'

/** A counter, or a histogram's family name (without `_bucket`), with label matchers of its own. */
export interface Family {
  name: string
  kind: 'histogram' | 'counter'
  /** Extra matchers, PromQL text inside braces, e.g. `finished_reason!="abort"`. */
  match?: string
}

/**
 * Which way is worse: up (latency, preemptions), down, or neither: cadence (a change is the knob
 * acting) and throughput (below saturation the traffic sets it, not the engine: a quiet day after
 * the arm is no regression, and an engine the knob slowed shows it in its latency). Neither never
 * fails the run; a significant, practical change says `changed`.
 */
export type Direction = 'higher-worse' | 'lower-worse' | 'none'

interface Common {
  id: string
  title: string
  direction: Direction
  /** The practical threshold: a relative shift within ±this is no change, however significant. */
  threshold: number
  /** And an absolute one, in the metric's unit (a ratio of 0.0001 → 0.0003 is three times, and nothing). */
  floor: number
  unit: string
}

export interface HistogramMetric extends Common {
  kind: 'histogram'
  family: Family
  /** The family's earlier names (the profile's `renamed`), said when the family is not exported. */
  earlier?: readonly Renamed[]
}

/** One counter of a sum, with its sign (mixed step time is total minus decode-only). */
export interface Term {
  family: Family
  sign: 1 | -1
}

export interface RatioMetric extends Common {
  kind: 'ratio'
  numerator: readonly Term[]
  /** The counters it is per, or `seconds`: a rate. */
  denominator: readonly Term[] | 'seconds'
  /** The hours' differences: of logs (a relative shift; default), or of values (a count per request that is often zero). */
  scale?: 'log' | 'absolute'
}

export type MetricSpec = HistogramMetric | RatioMetric

const counter = (name: string, match?: string): Family => ({ name, kind: 'counter', ...(match ? { match } : {}) })
const plus = (family: Family): Term => ({ family, sign: 1 })
const minus = (family: Family): Term => ({ family, sign: -1 })

/** The id of the knob's own meter, per engine step (or per prompt token where the engine counts no steps). */
export const METER_METRIC = 'meter'

/** Every metric id any engine's table may hold, in the tables' order. */
export const METRIC_IDS: readonly string[] = [
  'ttft',
  'itl',
  'e2e',
  'requests',
  'tokens',
  'preemptions',
  'token-time',
  'prompt-time',
  'decode-step',
  'mixed-step',
  METER_METRIC,
]

/** A metric this engine cannot be judged by, and why. */
export interface NotJudged {
  id: string
  why: string
}

const LATENCY = [
  ['ttft', 'time to first token', 0.005],
  ['itl', 'inter-token latency', 0.001],
  ['e2e', 'end-to-end latency', 0.01],
] as const

/** The metrics judged for an arm on this engine: its table, and the knob's meter when it has one. */
export function metricsFor(engine: Engine, knob: KnobSpec | undefined): { specs: MetricSpec[]; notJudged: NotJudged[] } {
  const m = engine.metrics
  const e = m.effect
  const specs: MetricSpec[] = []
  const notJudged: NotJudged[] = []
  for (const [id, title, floor] of LATENCY) {
    const name = e[id]
    if (name)
      specs.push({
        id,
        title,
        kind: 'histogram',
        family: { name, kind: 'histogram' },
        ...(m.renamed[name]?.length ? { earlier: m.renamed[name] } : {}),
        direction: 'higher-worse',
        threshold: 0.1,
        floor,
        unit: 's',
      })
    else notJudged.push({ id, why: `${engine.name} exports no ${title} histogram` })
  }
  const requests = m.requests ? counter(m.requests, e.requestsMatch) : undefined
  if (requests)
    specs.push({
      id: 'requests',
      title: 'requests per second',
      kind: 'ratio',
      numerator: [plus(requests)],
      denominator: 'seconds',
      direction: 'none',
      threshold: 0.2,
      floor: 0,
      unit: '/s',
    })
  else notJudged.push({ id: 'requests', why: `${engine.name} exports no request counter` })
  if (m.generationTokens)
    specs.push({
      id: 'tokens',
      title: 'generated tokens per second',
      kind: 'ratio',
      numerator: [plus(counter(m.generationTokens))],
      denominator: 'seconds',
      direction: 'none',
      threshold: 0.2,
      floor: 0,
      unit: '/s',
    })
  if (e.preemptions && requests)
    specs.push({
      id: 'preemptions',
      title: 'preemptions per request',
      kind: 'ratio',
      numerator: [plus(counter(e.preemptions))],
      denominator: [plus(requests)],
      scale: 'absolute',
      direction: 'higher-worse',
      threshold: 0.25,
      floor: 0.001,
      unit: '/request',
    })
  else notJudged.push({ id: 'preemptions', why: `${engine.name} exports no ${requests ? 'preemption' : 'request'} counter` })
  if (e.generationSeconds && m.generationTokens)
    specs.push({
      id: 'token-time',
      title: 'seconds per generated token',
      kind: 'ratio',
      numerator: [plus(counter(e.generationSeconds))],
      denominator: [plus(counter(m.generationTokens))],
      direction: 'higher-worse',
      threshold: 0.1,
      floor: 0.0005,
      unit: 's/token',
    })
  if (e.promptSeconds && m.promptTokens)
    specs.push({
      id: 'prompt-time',
      title: 'seconds per prompt token',
      kind: 'ratio',
      numerator: [plus(counter(e.promptSeconds))],
      denominator: [plus(counter(m.promptTokens))],
      direction: 'higher-worse',
      threshold: 0.1,
      floor: 0.00005,
      unit: 's/token',
    })
  const st = m.stepTime
  if (st) {
    specs.push(
      {
        id: 'decode-step',
        title: 'decode-only step time',
        kind: 'ratio',
        numerator: [plus(counter(st.secondsDecode))],
        denominator: [plus(counter(st.stepsDecode))],
        direction: 'none',
        threshold: 0.1,
        floor: 0.0005,
        unit: 's/step',
      },
      {
        id: 'mixed-step',
        title: 'mixed step time',
        kind: 'ratio',
        numerator: [plus(counter(st.seconds)), minus(counter(st.secondsDecode))],
        denominator: [plus(counter(st.steps)), minus(counter(st.stepsDecode))],
        direction: 'none',
        threshold: 0.1,
        floor: 0.0005,
        unit: 's/step',
      },
    )
  }
  const meter = knob?.proof.meter
  if (meter) {
    const labels = Object.entries(meter.labels ?? {})
      .map(([k, v]) => `${k}=${promString(v)}`)
      .join(',')
    // per engine step where the engine counts them (the knob acting per step), else per prompt token, else per second
    const per = st ? { what: 'step', name: st.steps } : m.promptTokens ? { what: 'prompt token', name: m.promptTokens } : null
    specs.push({
      id: METER_METRIC,
      title: `${meter.name.replace(/^[a-z]+:|_total$/g, '')} per ${per?.what ?? 'second'}`,
      kind: 'ratio',
      numerator: [plus(counter(meter.name, labels || undefined))],
      denominator: per ? [plus(counter(per.name))] : 'seconds',
      scale: 'absolute',
      direction: 'none',
      threshold: 0.1,
      floor: 0.001,
      unit: per ? `/${per.what.replace(' ', '-')}` : '/s',
    })
  }
  return { specs, notJudged }
}

/** Every counter and histogram a set of metrics reads, once each. */
export function familiesOf(metrics: readonly MetricSpec[]): Family[] {
  const out = new Map<string, Family>()
  const add = (f: Family) => out.set(familyKey(f), f)
  for (const m of metrics) {
    if (m.kind === 'histogram') add(m.family)
    else for (const t of [...m.numerator, ...(m.denominator === 'seconds' ? [] : m.denominator)]) add(t.family)
  }
  return [...out.values()]
}

export const familyKey = (f: Family): string => `${f.name}{${f.match ?? ''}}`

/** The metrics asked for (`ids` null: all of this engine's), in the table's order, with the thresholds given; or why not. */
export function selectMetrics(
  engine: Engine,
  knobName: string,
  knob: KnobSpec | undefined,
  ids: readonly string[] | null,
  thresholds: Readonly<Record<string, number>>,
): { specs: MetricSpec[]; notJudged: NotJudged[] } | { problem: string } {
  const { specs: all, notJudged } = metricsFor(engine, knob)
  const why = (id: string) =>
    notJudged.find((n) => n.id === id)?.why ??
    (id === METER_METRIC ? `${knobName} has no meter of its own` : `${engine.name}'s profile names no series for it`)
  const missing = (ids ?? []).filter((id) => !all.some((m) => m.id === id))
  if (missing.length)
    return {
      problem: `--metrics: ${missing.map((id) => `${id} is not judged for ${engine.name} (${why(id)})`).join('; ')}; the ids here: ${all.map((m) => m.id).join(', ')}`,
    }
  const unused = Object.keys(thresholds).filter((id) => !all.some((m) => m.id === id))
  if (unused.length) return { problem: `--threshold: ${unused.join(', ')} is not judged for ${engine.name} ${knobName}` }
  return {
    specs: all
      .filter((m) => ids === null || ids.includes(m.id))
      .map((m) => (thresholds[m.id] === undefined ? m : { ...m, threshold: thresholds[m.id]! })),
    notJudged: ids === null ? notJudged : [],
  }
}
