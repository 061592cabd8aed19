// What step `meter` records, from /metrics (./from-metrics.ts), Prometheus (./from-prometheus.ts), /stats (./stats.ts)
// or the endpoints the engine describes itself on (./described.ts).
// One type for its outcomes: each sets the fields it saw. The report's `meter` block and the
// runbook's sparkline read these fields.
import type { CrashEvidence } from '../_host-evidence.ts'
import type { PromWait } from './reading.ts'
import type { MetricsReading } from './reading.ts'
import type { SourceEvidence } from '../resolved/evidence.ts'

/** What proved a passed meter: it `rose` during the run's traffic, was above zero `before-run` in the very process argv read, or `stayed-at-zero` at the default. */
export type MeterProof = (typeof METER_PROOFS)[number]
export const METER_PROOFS = ['rose', 'before-run', 'stayed-at-zero'] as const

/**
 * The proof as the report's enum: a value outside it is null. Evidence reaches the report through
 * vitest's runtime messages (cloned, and as JSON from a recording), so the report keeps its enum
 * even against a value the types never saw.
 */
export function meterProof(v: MeterProof | null | undefined): MeterProof | null {
  return METER_PROOFS.find((p) => p === v) ?? null
}

/** The knob's counter as judged. */
export type MeterTrack = {
  name: string
  labels: Record<string, string>
  /** The series judged (its name and labels), null when none was found. */
  series: string | null
  first: number | null
  last: number | null
  movedAt: string | null
  movedAfterMs: number | null
  /** Set only when the step passed. */
  proof: MeterProof | null
  model: string | null
  selection: string | null
  judged: Array<{ series: string; first: number | null; last: number | null; fromScrape?: number }>
  notJudged: string[]
}

/** The traffic a knob's meter moves only under, as ./traffic.ts sent it. */
export interface TrafficSent {
  kind: 'shared-prefix'
  sent: number
  answered: number
  /** What did not answer 200, as said. */
  failures: string[]
  /** The prefix's length in words (each at least one token). */
  prefixWords: number
  /** The KV block the prefix was sized for, and where that size came from (the engine's cache_config_info, or assumed). */
  blockSize: number
  blockSizeFrom: string
  /** The served context the prefix was kept within (GET /v1/models), when it said. */
  maxModelLen?: number
  /** usage.prompt_tokens of each answered request (null: not said). */
  promptTokens: Array<number | null>
  /** The first prefix was refused as longer than the engine's context, and cut to fit by its own numbers: said. */
  resized?: string
}

/** Whether the process argv read still ran after the watch. */
export type MeterProcess = {
  state: 'same' | 'changed' | 'unknown' | 'unproven'
  argvPid: string | null
  pidsNow: string[]
  detail: string
}

export type MeterEvidence = CrashEvidence & {
  meter?: MeterTrack
  process?: MeterProcess | null
  /** The counter per scrape, ms after the watch began (null: absent from that scrape). */
  series?: Array<{ t: number; v: number | null }>
  scrapes?: number
  scrapeFailures?: number
  /** Metric-name prefixes the page exports. */
  prefixes?: readonly string[]
  /** Evidence-only meters, first and last value (never a gate). */
  evidenceMeters?: Record<string, { first: number | null; last: number | null }>
  /** Mean step times from the engine's step counters (evidence only). */
  stepTimes?: { decodeMeanMs?: number; mixedMeanMs?: number }
  parseErrors?: MetricsReading['errors']
  /** --prometheus-url: what was asked of Prometheus. */
  /** `waited`: the baseline's wait for a scrape after the window's start. `shared`: in a live fleet, the most targets one of this target's polls served, and the queries the fleet sent in all (./prom-fleet.ts). */
  prometheus?: {
    url: string
    selector: string | null
    polls: number
    queries: unknown
    instances: readonly string[]
    targets?: readonly string[]
    metadata?: 'read' | 'unsupported' | null
    warnings?: readonly string[]
    shared?: { targets: number; queries: number }
    waited?: PromWait
    /** The series tie, where Prometheus held no process_start_time_seconds (./prom-tie.ts): tied or why not, its evidence (the scrape interval its resolution), its queries. */
    tie?: { tied: boolean; said: string; queries: number; evidence?: unknown }
  }
  /** A knob proved through /stats: the field read and its value. */
  status?: number
  field?: string
  value?: unknown
  /** An enum value not among the build's choices. */
  choices?: string[] | null
  /** The engine's self-describing endpoints the knob is read from (cache_config_info, /server_info, /props): what each said. */
  sources?: SourceEvidence[]
  /** The traffic the knob's meter moves only under, sent by the step itself. */
  traffic?: TrafficSent
}
