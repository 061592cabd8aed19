// What the meter's ladder (./ladder.ts) reads, whichever source it came from: one scrape of the
// engine's page as /metrics served it (./from-metrics.ts), or as Prometheus stored it
// (./from-prometheus.ts). Plain data: the sources fill it, the ladder only reads it.
import type { MetricType } from '../../prom/types.ts'
import type { SeriesValue } from './reading.ts'
import type { FirstContactProblem } from '../first-contact/answers.ts'
import type { Tie } from './prom-tie.ts'

/** The first malformed line of a page the Prometheus server would refuse whole. */
export interface Refusal {
  line: number
  message: string
  text: string
  /** Malformed lines on the page in all. */
  count: number
}

/** One scrape of the engine's page. */
export interface MeterScrape {
  /** Clock time of the scrape (ms): when /metrics was read, or Prometheus' scrape timestamp. */
  at: number
  /** Where it was read, as the step's `where` says it. */
  where: string
  /** The meter's samples (the catalog's labels applied), of every model, in page order; empty when the page has none. */
  meter: readonly SeriesValue[]
  /** Type of the meter's family as the page declares it; undefined when the source cannot say. */
  meterType?: MetricType
  /** The meter's family is declared (this type) and the page carries no sample of it: a declared counter without a child is zero so far. */
  declared?: MetricType
  /** The page carries the meter only under this earlier name of it. */
  meterAs?: string
  /** The page's names under the meter's prefix, when the meter is absent: what it does have. */
  prefixNames?: readonly string[]
  /** A page Prometheus would refuse whole (only /metrics sees one: Prometheus stores nothing of it). */
  refused?: Refusal
  /** Series that this page carries twice: `name{labels} (lines a and b)`. */
  duplicates: readonly string[]
  /** `process_start_time_seconds`, when the page exports exactly one, and its value as written. */
  processStart?: number
  processStartRaw?: string
  /** Where Prometheus holds no process_start_time_seconds: the tie of the target's series to the pid by their birth (./prom-tie.ts). */
  seriesTie?: Tie
  /** The served model's traffic counters on this page (absent is undefined, not zero). */
  traffic: { requests?: number; prompt?: number; generation?: number }
  /** Sample names whose name after the prefix equals the meter's (e.g. vllm: instead of radiance:). */
  lookalikes: readonly string[]
  prefixes: readonly string[]
  sampleCount: number
}

/** A read that brought no page: nothing answered (keep trying), or an answer that cannot be used. */
export interface ReadFailure {
  /** none: nothing answered (refused, timed out), tried again until the window ends; engine: the engine's page is unusable (red); operator: the source was asked wrongly (inconclusive), and either ends the watch. */
  blame: 'none' | 'engine' | 'operator'
  what: string
  where: string
  next: string
  /** The answer is the operator's mistake by first contact's rule (blame operator): the step says it as such (../mistake.ts). */
  mistake?: FirstContactProblem
}

/** Everything the meter has read so far in this run. */
export interface MeterReadings {
  /** The scrapes of the watch, oldest first; the first one precedes the probes' traffic when a baseline was taken. */
  scrapes: readonly MeterScrape[]
  /** Reads that were answered (a page, or Prometheus' answer), and reads that brought no page. */
  reads: number
  failures: number
  lastFailure?: ReadFailure
  /** A read whose answer ends the watch (blame engine or operator): waiting cannot change it. */
  halted?: ReadFailure
  /** Scrapes in a row without the meter that make it absent (1: a page read directly; Prometheus waits for two). */
  absentAfter: number
  /** The scrapes are counted ones (a page each, or Prometheus' `up`), not times inferred from samples: only then can absence or a flat count be said. */
  counted: boolean
  /** Distinct targets the source's selector takes; more than one is another engine's counter mixed in. */
  targets?: readonly string[]
  /** Scrapes of the window that were not observed (Prometheus' `up` == 0): a gap, never an absence. */
  unobserved?: number
  /** The source's answer may lack series (Prometheus' warnings, e.g. a partial response): it proves no absence. */
  warnings?: readonly string[]
}

/** An aborted request (`finished_reason="abort"`) is not traffic the knob acted on: the request counter's series that count, whichever source read them. */
export const countsAsRequest = (labels: Readonly<Record<string, string>>): boolean => labels.finished_reason !== 'abort'

/** One scrape's traffic counts, each only where the source holds its counter (absent is not zero). */
export function trafficCounts(
  requests: number | undefined,
  prompt: number | undefined,
  generation: number | undefined,
): MeterScrape['traffic'] {
  return {
    ...(requests !== undefined ? { requests } : {}),
    ...(prompt !== undefined ? { prompt } : {}),
    ...(generation !== undefined ? { generation } : {}),
  }
}
