// What `effect` judges, per engine, as data: one table (radiance's today), so an engine profile can
// carry its own. Latency lives under `vllm:`, cadence under `radiance:` (the runbook's trap): each
// metric names its series in full. A histogram is judged from its buckets; a ratio from the
// increases of counters (per second, per request, per step) hour by hour.
import { isKnobName, knob, type KnobName } from '../config/knobs.ts'
import { promString } from '../prom/query.ts'

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
  /** The practical threshold: a relative shift smaller than this is `no change` however significant. */
  threshold: number
  /** And an absolute one, in the metric's unit (a ratio of 0.0001 → 0.0003 is three times, and nothing). */
  floor: number
  unit: string
}

export interface HistogramMetric extends Common {
  kind: 'histogram'
  family: Family
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
}

export type MetricSpec = HistogramMetric | RatioMetric

const counter = (name: string, match?: string): Family => ({ name, kind: 'counter', ...(match ? { match } : {}) })
const plus = (family: Family): Term => ({ family, sign: 1 })
const minus = (family: Family): Term => ({ family, sign: -1 })

const REQUESTS = counter('vllm:request_success_total', 'finished_reason!="abort"')
const STEPS = counter('radiance:engine_steps_total')
const STEPS_DECODE = counter('radiance:engine_steps_decode_total')
const SECONDS = counter('radiance:engine_step_seconds_total')
const SECONDS_DECODE = counter('radiance:engine_step_seconds_decode_total')

/** radiance's metrics, in the order the table shows them; the knob's own meter per step is added by `metricsFor`. */
export const RADIANCE_METRICS: readonly MetricSpec[] = [
  {
    id: 'ttft',
    title: 'time to first token',
    kind: 'histogram',
    family: { name: 'vllm:time_to_first_token_seconds', kind: 'histogram' },
    direction: 'higher-worse',
    threshold: 0.1,
    floor: 0.005,
    unit: 's',
  },
  {
    id: 'itl',
    title: 'inter-token latency',
    kind: 'histogram',
    family: { name: 'vllm:inter_token_latency_seconds', kind: 'histogram' },
    direction: 'higher-worse',
    threshold: 0.1,
    floor: 0.001,
    unit: 's',
  },
  {
    id: 'e2e',
    title: 'end-to-end latency',
    kind: 'histogram',
    family: { name: 'vllm:e2e_request_latency_seconds', kind: 'histogram' },
    direction: 'higher-worse',
    threshold: 0.1,
    floor: 0.01,
    unit: 's',
  },
  {
    id: 'requests',
    title: 'requests per second',
    kind: 'ratio',
    numerator: [plus(REQUESTS)],
    denominator: 'seconds',
    direction: 'none',
    threshold: 0.2,
    floor: 0,
    unit: '/s',
  },
  {
    id: 'tokens',
    title: 'generated tokens per second',
    kind: 'ratio',
    numerator: [plus(counter('vllm:generation_tokens_total'))],
    denominator: 'seconds',
    direction: 'none',
    threshold: 0.2,
    floor: 0,
    unit: '/s',
  },
  {
    id: 'preemptions',
    title: 'preemptions per request',
    kind: 'ratio',
    numerator: [plus(counter('vllm:num_preemptions_total'))],
    denominator: [plus(REQUESTS)],
    direction: 'higher-worse',
    threshold: 0.25,
    floor: 0.001,
    unit: '/request',
  },
  {
    id: 'decode-step',
    title: 'decode-only step time',
    kind: 'ratio',
    numerator: [plus(SECONDS_DECODE)],
    denominator: [plus(STEPS_DECODE)],
    direction: 'none',
    threshold: 0.1,
    floor: 0.0005,
    unit: 's/step',
  },
  {
    id: 'mixed-step',
    title: 'mixed step time',
    kind: 'ratio',
    numerator: [plus(SECONDS), minus(SECONDS_DECODE)],
    denominator: [plus(STEPS), minus(STEPS_DECODE)],
    direction: 'none',
    threshold: 0.1,
    floor: 0.0005,
    unit: 's/step',
  },
]

/** The id of the knob's own meter per engine step (e.g. held steps per step for PREFILL_INTERLEAVE). */
export const METER_METRIC = 'meter'

/** The metrics judged for an arm of this knob: the table, and the knob's meter per step when it has one. */
export function metricsFor(knobName: KnobName): MetricSpec[] {
  // radiance's knobs have a meter per engine step; another engine's knob (a report of --engine vllm…) is judged by the latency table alone.
  const meter = isKnobName(knobName) ? knob(knobName).proof.meter : undefined
  if (!meter) return [...RADIANCE_METRICS]
  const labels = Object.entries(meter.labels ?? {})
    .map(([k, v]) => `${k}=${promString(v)}`)
    .join(',')
  const perStep: RatioMetric = {
    id: METER_METRIC,
    title: `${meter.name.replace(/^radiance:|_total$/g, '')} per step`,
    kind: 'ratio',
    numerator: [plus(counter(meter.name, labels || undefined))],
    denominator: [plus(STEPS)],
    direction: 'none',
    threshold: 0.1,
    floor: 0.001,
    unit: '/step',
  }
  return [...RADIANCE_METRICS, perStep]
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

/** The metrics asked for (`ids` null: all of this knob's), in the table's order, with the thresholds given; or why not. */
export function selectMetrics(
  knobName: KnobName,
  ids: readonly string[] | null,
  thresholds: Readonly<Record<string, number>>,
): { specs: MetricSpec[] } | { problem: string } {
  const all = metricsFor(knobName)
  const missing = (ids ?? []).filter((id) => !all.some((m) => m.id === id))
  if (missing.length)
    return {
      problem: `--metrics: ${missing.join(', ')}: ${knobName} has no meter of its own to judge per step (the ids here: ${all.map((m) => m.id).join(', ')})`,
    }
  const unused = Object.keys(thresholds).filter((id) => !all.some((m) => m.id === id))
  if (unused.length) return { problem: `--threshold: ${unused.join(', ')} is not judged for ${knobName}` }
  return {
    specs: all
      .filter((m) => ids === null || ids.includes(m.id))
      .map((m) => (thresholds[m.id] === undefined ? m : { ...m, threshold: thresholds[m.id]! })),
  }
}
