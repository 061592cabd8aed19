// One /metrics scrape as the meter step keeps it: plain data, shared by the reader, the ladder and
// the steps that hand a baseline on (no import of the reader needed).
import type { MetricType, PromParseError } from '../../prom/types.ts'

/** One sample as the meter step keeps it. */
export interface SeriesValue {
  labels: Readonly<Record<string, string>>
  value: number
  /** The value token as written. */
  raw: string
  line: number
}

export interface MetricsReading {
  /** Clock time of the scrape. */
  at: number
  url: string
  /** The meter's samples (the catalog's labels applied), in page order; empty when absent (absent is not zero). */
  meter: SeriesValue[]
  /** Type of the family the meter's samples belong to, as the page declares it. */
  meterType?: MetricType
  /**
   * The meter's family declared by `# TYPE` while the page carries no sample of it at all (its
   * declared type): prometheus_client prints a labelled counter's children only after their
   * first inc(), so a declared counter without a child is zero so far, not absent.
   */
  meterDeclared?: MetricType
  /** The page carries the meter only under this earlier name of it (the engine profile's `renamed:`). */
  meterAs?: string
  /** Names of the page's samples under the meter's own prefix (the first 40, sorted): what the page does have, when the meter is absent. */
  prefixNames?: string[]
  /** Traffic, step-time and evidence-only samples by name (an empty list = absent). */
  series: Record<string, SeriesValue[]>
  /** `process_start_time_seconds`, when the page exports exactly one. */
  processStart?: number
  /** Series that this page carries twice among the ones read here: `name{labels} (lines a and b)`. */
  duplicates: string[]
  /** Sample names elsewhere whose name after the prefix equals the meter's (e.g. vllm: instead of radiance:). */
  lookalikes: string[]
  prefixes: string[]
  sampleCount: number
  /** Malformed lines (the first few): the Prometheus server refuses such a page whole. */
  errors: PromParseError[]
  errorCount: number
}

/** A label set as one comparable string: sorted names, quoted values. */
export function seriesKey(labels: Readonly<Record<string, string>>): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`)
    .join(',')
}

/** `name{a="x",b="y"}` as Prometheus prints a series. */
export function seriesName(name: string, labels: Readonly<Record<string, string>>): string {
  const body = seriesKey(labels)
  return body ? `${name}{${body}}` : name
}

/**
 * What the meter's baseline hands on (step output `baseline`): the /metrics page read before the
 * probes' traffic, or, through Prometheus, when the window starts (Prometheus had scraped the
 * target once by then, when it could).
 */
export type MeterBaseline = { source: 'metrics'; reading: MetricsReading } | { source: 'prometheus'; sinceMs: number; waited?: PromWait }

/** How long the baseline waited for Prometheus to hold a scrape taken after the window's start (live: when that wait ended, after the start). */
export interface PromWait {
  ms: number
  endedAfterStartMs?: number
}
