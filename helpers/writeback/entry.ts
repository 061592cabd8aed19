// One Knob log entry, two lines, for a human first (` on <endpoint>` after the values when the report names it):
//   - 2026-11-30 · PREFILL_INTERLEAVE 0 → 1 · meter radiance:engine_steps_held_total 0 → 126, moved after 3m 40s (armproof green, report finished 2026-11-30T02:31:05Z) <!-- armproof:llm-7:PREFILL_INTERLEAVE:2026-11-30T02:31:05.120Z -->
//     rollback: `PREFILL_INTERLEAVE=0` then redeploy `--service llm-7`
//     engine: model `radiance-ref-8b` · image none · binary `/usr/bin/node` 123 bytes, modified … · command line `--port=8000 …`
// The marker makes a second write of the same report a no-op. Report values are untrusted text.
// The third line, and `:record=<digest>` at the marker's end, only where the report carries the
// one-flag law's record of the engine (step one-flag's evidence, helpers/config/arm-record.ts):
// the next arm of the service is compared with it (helpers/config/baseline.ts reads it back).
import { recordDigest, recordText } from '../config/arm-record.ts'
import { ENGINE_LINE, markerPart } from '../config/vault-page.ts'
import { formatDuration } from '../config/duration.ts'
import { isKnobName, knob } from '../config/knobs.ts'
import { codeText, pageText } from './escape.ts'
import type { ReportFacts } from './report.ts'

const METRIC_RE = /^[A-Za-z_:][A-Za-z0-9_:]{0,200}$/
const LABEL_RE = /^[A-Za-z_][A-Za-z0-9_]{0,100}$/
const PLAIN_RE = /^[A-Za-z0-9_+-][A-Za-z0-9_.+-]{0,63}$/

/**
 * The entry's identity in the page: same report → same marker. A report that names its endpoint
 * (its run identity's base URL) adds it, so two targets of one service that finished at the same
 * moment are two entries, never one taken for the other.
 */
export function entryMarker(report: Pick<ReportFacts, 'svc' | 'knob' | 'finishedAt' | 'endpoint' | 'record'>): string {
  const endpoint = report.endpoint ? `:${markerPart(report.endpoint)}` : ''
  const record = report.record ? `:record=${recordDigest(report.record)}` : ''
  return `<!-- armproof:${markerPart(report.svc)}:${markerPart(report.knob)}:${markerPart(report.finishedAt)}${endpoint}${record} -->`
}

const shownValue = (v: string | null) => (v === null ? 'default' : pageText(v))
const num = (v: number | null) => (v === null ? 'absent' : String(v))

function meterText(meter: ReportFacts['meter']): string {
  if (meter === null) return 'no meter; proven by the ledger line'
  const labels = Object.entries(meter.labels ?? {})
  const selector = (text: (s: string) => string) =>
    text(meter.name) + (labels.length ? `{${labels.map(([k, v]) => `${text(k)}="${text(v)}"`).join(',')}}` : '')
  // A selector of plain names and values is shown as is; any other text puts the whole selector in a code span.
  const plain =
    METRIC_RE.test(meter.name) && labels.every(([k, v]) => LABEL_RE.test(k) && (v === '' || (PLAIN_RE.test(v) && !/www\./i.test(v))))
  const name = plain ? selector((x) => x) : `\`${selector(codeText)}\``
  const span = `${num(meter.first)} → ${num(meter.last)}`
  let moved: string
  if (meter.proof === 'before-run') moved = 'above zero since before this run, in the process argv read'
  else if (meter.movedAfterMs !== null) moved = `moved after ${formatDuration(meter.movedAfterMs)}`
  else if (meter.movedAt !== null && !Number.isNaN(Date.parse(meter.movedAt))) moved = `moved at ${isoSeconds(Date.parse(meter.movedAt))}`
  else moved = meter.last === 0 ? 'stayed at zero while traffic flowed' : 'did not move'
  return `meter ${name} ${span}, ${moved}`
}

/** `2026-11-30T02:31:05Z`: seconds are enough for a reader; the marker keeps the exact value. */
const isoSeconds = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')

/** The knob's env name: the one its catalog entry gives, else radiance's catalog's when the knob is known. */
function envName(report: ReportFacts): string {
  if (report.env !== undefined) return codeText(report.env)
  return isKnobName(report.knob) ? knob(report.knob).env : codeText(report.knob)
}

/** The entry as lines (no line endings); the page's own line ending joins them. */
export function entryLines(report: ReportFacts): [string, string] | [string, string, string] {
  const date = new Date(report.finishedMs).toISOString().slice(0, 10)
  const how = report.mode === 'replay' ? 'armproof green, replay of a recorded run' : 'armproof green'
  const on = report.endpoint ? ` on ${pageText(report.endpoint)}` : ''
  const first = `- ${date} · ${isKnobName(report.knob) ? report.knob : pageText(report.knob)} ${shownValue(report.previous)} → ${shownValue(report.expected)}${on} · ${meterText(report.meter)} (${how}, report finished ${isoSeconds(report.finishedMs)}) ${entryMarker(report)}`
  const rollback = `  rollback: \`${envName(report)}=${report.previous === null ? '' : codeText(report.previous)}\` then redeploy \`--service ${codeText(report.svc)}\``
  return report.record ? [first, rollback, `  ${ENGINE_LINE}${recordText(report.record)}`] : [first, rollback]
}
