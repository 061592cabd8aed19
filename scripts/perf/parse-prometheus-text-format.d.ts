// Minimal types for the dev dependency `parse-prometheus-text-format` (it ships none); used by
// the perf script only, to compare helpers/prom/parse.ts against it.
declare module 'parse-prometheus-text-format' {
  interface ParsedFamily {
    name: string
    help: string
    type: string
    metrics: unknown[]
  }
  /** Throws `InvalidLineError` on a line it cannot read. */
  export default function parsePrometheusTextFormat(text: string): ParsedFamily[]
}
