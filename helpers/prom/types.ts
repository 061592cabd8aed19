// The parsed page's types, apart from the parser so the lexer and the parser both read them without a cycle.
export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped' | 'unknown' | 'info' | 'stateset' | 'gaugehistogram'

export interface Sample {
  /** Exact sample name as on the wire, e.g. 'vllm:request_success_total'. */
  name: string
  /** Unescaped label values, frozen (a set of more than 32 labels is built when first read). */
  labels: Readonly<Record<string, string>>
  /** NaN, +Inf and -Inf allowed. */
  value: number
  /** The value token as written. */
  raw: string
  timestampMs?: number
  exemplar?: { labels: Record<string, string>; value: number; timestampMs?: number }
  /** 1-based line number in the page. */
  line: number
}

export interface MetricFamily {
  name: string
  type: MetricType
  help: string
  unit?: string
  /** In page order. A text-format family builds these objects when `samples` is first read (sample-log.ts). */
  samples: Sample[]
}

export interface PromParseError {
  line: number
  message: string
  text: string /* the offending line, cut to 200 chars */
}

export interface PromPage {
  /** In order of first appearance (a HELP/TYPE/UNIT line or a sample). */
  families: MetricFamily[]
  /** Malformed lines: reported, never thrown; the rest of the page still parses. */
  errors: PromParseError[]
  /** All valid samples seen, including ones `keep` did not store. */
  sampleCount: number
  /** Exact sample-name match across families. */
  samples(name: string): Sample[]
  /** By family name: counter 'a' holds a_total and a_created; histogram 'h' holds h_bucket/_sum/_count/_created. */
  family(name: string): MetricFamily | undefined
  /** Sorted distinct prefixes before the first ':' of valid sample names (kept or not), e.g. ['vllm']. */
  prefixes(): string[]
}

export interface PromParseOptions {
  /** 'text' (default): classic 0.0.4 format; 'openmetrics': the stricter OpenMetrics rules, `# EOF` required. */
  format?: 'text' | 'openmetrics'
  /** When given, only samples it returns true for are stored; every line is still validated and counted. */
  keep?: (sampleName: string) => boolean
}
