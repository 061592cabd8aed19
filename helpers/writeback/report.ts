// Reads the report pnpm verify wrote and decides whether it may be written into the vault. Nothing
// is taken on trust: the whole report is checked against the report's own type (REPORT_SCHEMA),
// and the verdict is derived again from its steps; a replay is accepted only with --allow-replay,
// only with its recording's time and digest, and only while that recording is unedited.
import { constants } from 'node:fs'
import { open } from 'node:fs/promises'
import { KNOB_NAMES, knob, valueProblem, type KnobName } from '../config/knobs.ts'
import type { MeterProof, Report } from '../report/json.ts'
import { array, endsEarly, literal, nullable, number, object, optional, record, string, unknownValue, type Infer } from '../schema.ts'
import { STEP_IDS, type StepId } from '../steps/verdict.ts'
import { showText } from './escape.ts'
import type { Refusal, WritebackOptions } from './options.ts'
import { command } from '../cli/invocation.ts'
import { REPORT_FORMAT, type ReportHead } from '../report/head.ts'

/** The fields writeback writes from, checked; every string is still untrusted text. */
export type ReportFacts = Pick<Report, 'svc' | 'expected' | 'previous' | 'finishedAt' | 'meter' | 'exitCode'> & {
  /** The catalog name (the schema refuses others); kept as a string so the entry renders any text safely. */
  knob: string
  mode: string
  verdict: string
  finishedMs: number
}

/** A checked report: the facts the entry needs, and the rest the gate re-derives from. */
export type CheckedReport = ReportFacts & { report: Infer<typeof REPORT_SCHEMA>; recordedMs: number | null }

const SVC_RE = /^[A-Za-z0-9_.-]+$/
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/
const ISO = { re: ISO_RE, says: 'an ISO time like 2026-11-30T02:31:05.120Z' }
const METRIC = { re: /^[A-Za-z_:][A-Za-z0-9_:]{0,200}$/, says: 'a Prometheus metric name' }
const LABEL = { re: /^[A-Za-z_][A-Za-z0-9_]{0,100}$/, says: 'a Prometheus label name' }
/** How far in the future a time may lie (clock skew between the CI runners). */
const SKEW_MS = 5 * 60_000
/** No real report comes near this. */
export const MAX_REPORT_BYTES = 32 * 1024 * 1024

const STEP = object({
  id: literal(...STEP_IDS),
  title: string(),
  verdict: literal('passed', 'failed', 'inconclusive', 'skipped'),
  expected: string(),
  observed: string(),
  where: string(),
  next: optional(string()),
  intendedSkip: optional(literal(true)),
  evidence: record(unknownValue()),
  durationMs: number({ min: 0 }),
})

/** The JSON report's own type (helpers/report/json.ts `Report`), as a schema. */
export const REPORT_SCHEMA = object({
  // Reports written before the format tag have none; another format is refused, never misread.
  format: optional(literal(REPORT_FORMAT)),
  endpoint: optional(nullable(string())),
  host: optional(string()),
  svc: string({ re: SVC_RE, says: 'a service name of [A-Za-z0-9_.-]' }),
  knob: literal<KnobName>(...KNOB_NAMES),
  expected: nullable(string()),
  previous: nullable(string()),
  mode: literal('live', 'record', 'replay'),
  verdict: literal('green', 'red', 'inconclusive', 'error', 'interrupted'),
  startedAt: string(ISO),
  finishedAt: string(ISO),
  steps: array(STEP, { max: 64 }),
  meter: nullable(object({
    name: string(METRIC),
    first: nullable(number()),
    last: nullable(number()),
    movedAt: nullable(string(ISO)),
    movedAfterMs: nullable(number({ min: 0 })),
    labels: record(string(), LABEL),
    proof: optional(nullable(literal<MeterProof>('rose', 'before-run', 'stayed-at-zero'))),
  })),
  rollback: string(),
  error: nullable(string()),
  notes: array(string()),
  exitCode: number({ integer: true }),
  tool: object({ name: literal('armproof'), version: string() }),
  truth: optional(unknownValue()),
  recordedAt: optional(string(ISO)),
  recording: optional(object({ fixtures: string(), digest: string({ re: /^[0-9a-f]{64}$/, says: 'a sha256 hex digest' }), recordedAt: string(ISO), recordedVerdict: nullable(string()) })),
})

// The schema is the report's own type: this fails to compile when the two drift apart.
const _sameType: (r: Infer<typeof REPORT_SCHEMA>) => Omit<Report, 'truth' | 'tool' | keyof ReportHead> & { tool: { name: string } } = (r) => r
void _sameType

type Read = { report?: CheckedReport; refusals: Refusal[] }

/** Reads the file without ever blocking on a FIFO or device: only a regular file is read. */
async function readRegular(path: string): Promise<{ bytes: Buffer } | { code: string }> {
  let handle
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK)
  } catch (error) {
    return { code: (error as NodeJS.ErrnoException).code ?? 'error' }
  }
  try {
    const st = await handle.stat()
    if (!st.isFile()) return { code: st.isFIFO() ? 'FIFO' : st.isDirectory() ? 'DIR' : 'SPECIAL' }
    if (st.size > MAX_REPORT_BYTES) return { code: 'TOO_BIG' }
    return { bytes: await handle.readFile() }
  } finally {
    await handle.close()
  }
}

export async function readReport(path: string, shown: string): Promise<Read> {
  const refuse = (found: string, next = `pass the JSON file ${command('verify')} wrote with --report`): Read => ({ refusals: [{ checked: 'report', where: shown, found, next }] })
  const read = await readRegular(path)
  if ('code' in read) {
    const c = read.code
    if (c === 'ENOENT') return refuse('no such file', `pass the file ${command('verify')} wrote with --report (in CI: download the verify job artifact first)`)
    if (c === 'FIFO' || c === 'DIR' || c === 'SPECIAL') return refuse(`is not a regular file (${c === 'FIFO' ? 'a FIFO' : c === 'DIR' ? 'a folder' : 'a device or socket'}); it was not read`)
    if (c === 'TOO_BIG') return refuse(`is larger than ${MAX_REPORT_BYTES / 1024 / 1024} MiB; no report is that large`)
    return refuse(`cannot be read (${c})`, 'check the file exists and is readable, then run again')
  }
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(read.bytes)
  } catch {
    return refuse('is not UTF-8 text')
  }
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch (error) {
    const early = endsEarly(text, error)
    return refuse(`is not JSON${early ? ' (it ends early: a truncated file?)' : ''}`, `pass the JSON file ${command('verify')} wrote with --report (not the JUnit file)`)
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) return refuse('is not a JSON object')
  // Every malformed top-level field, named; then the first problem in full.
  const checked = REPORT_SCHEMA.check(data, '')
  if (!checked.ok) {
    const names = badFields(data as Record<string, unknown>)
    return refuse(`is not an armproof report: missing or malformed ${names.length ? names.join(', ') : checked.path} (${checked.path} ${checked.problem})`)
  }
  const r = checked.value
  const spec = knob(r.knob)
  for (const field of ['expected', 'previous'] as const) {
    const v = r[field]
    const why = v === null ? undefined : valueProblem(spec, v)
    if (why) return refuse(`is not an armproof report: ${field} ${showText(v!)} does not fit ${r.knob}: ${why}`)
  }
  return {
    report: {
      svc: r.svc, knob: r.knob, expected: r.expected, previous: r.previous, mode: r.mode, verdict: r.verdict,
      exitCode: r.exitCode, finishedAt: r.finishedAt, finishedMs: Date.parse(r.finishedAt), meter: r.meter,
      recordedMs: r.recordedAt !== undefined ? Date.parse(r.recordedAt) : null,
      report: r,
    },
    refusals: [],
  }
}

/** A report every field of which is valid, to check one field at a time. */
const FULL: Readonly<Record<string, unknown>> = {
  svc: 'x', knob: KNOB_NAMES[0], expected: null, previous: null, mode: 'live', verdict: 'green', startedAt: '2026-01-01T00:00:00Z', finishedAt: '2026-01-01T00:00:00Z',
  steps: [], meter: null, rollback: '', error: null, notes: [], exitCode: 0, tool: { name: 'armproof', version: '0' },
}

/** The top-level fields that are missing or malformed, in the report's order. */
function badFields(data: Record<string, unknown>): string[] {
  const keys = [...Object.keys(FULL), 'truth', 'recordedAt', 'recording']
  return keys.filter((k) => !REPORT_SCHEMA.check({ ...FULL, [k]: data[k] }, '').ok)
}

/** "49h 10m", "3d 2h", "12m", "40s": an age for a refusal line. */
export function formatAge(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000)
  const d = Math.floor(s / 86_400)
  const h = Math.floor((s % 86_400) / 3600)
  const m = Math.floor((s % 3600) / 60)
  if (d > 0) return `${d}d ${h}h`
  if (h > 0) return `${h}h ${m}m`
  if (m > 0) return `${m}m`
  return `${s}s`
}

/** The run's verdict derived again from its steps, and why it is not green. */
export function rederive(report: CheckedReport['report']): string[] {
  const why: string[] = []
  const seen = new Map<StepId, number>()
  for (const s of report.steps) seen.set(s.id, (seen.get(s.id) ?? 0) + 1)
  const missing = STEP_IDS.filter((id) => !seen.has(id))
  const twice = STEP_IDS.filter((id) => (seen.get(id) ?? 0) > 1)
  if (report.steps.length === 0) why.push('steps: none recorded')
  else if (missing.length) why.push(`steps missing: ${missing.join(', ')}`)
  if (twice.length) why.push(`steps given twice: ${twice.join(', ')}`)
  const notHeld = report.steps.filter((s) => !(s.verdict === 'passed' || (s.verdict === 'skipped' && s.id === 'dropins' && s.intendedSkip === true)))
  if (notHeld.length) why.push(`steps not held: ${notHeld.map((s) => `${s.id} ${s.verdict}${s.verdict === 'skipped' ? ' (not a skip the operator asked for)' : ''}`).join(', ')}`)
  if (report.notes.length) why.push(`notes: ${report.notes.length} error note${report.notes.length === 1 ? '' : 's'}, first ${showText(report.notes[0]!, 100)}`)
  if (report.error !== null) why.push(`error: ${showText(report.error, 100)}`)
  return why
}

/** Every reason this report must not be written, one refusal each. */
export function judgeReport(checked: CheckedReport, options: Pick<WritebackOptions, 'svc' | 'maxAgeMs' | 'maxAgeText' | 'allowReplay'>, now: Date, shown: string): Refusal[] {
  const out: Refusal[] = []
  const refuse = (what: string, found: string, next: string) => out.push({ checked: what, where: shown, found, next })
  const { report } = checked
  if (checked.verdict !== 'green' || checked.exitCode !== 0) {
    refuse(
      'verdict and exitCode',
      `verdict ${showText(checked.verdict)}, exitCode ${checked.exitCode}: not green`,
      `only a green run is written; fix what the report's failed steps say and run ${command('verify')} again`,
    )
  }
  const why = rederive(report)
  if (why.length) {
    refuse('the verdict derived from the steps', `${why.join('; ')}: not green, whatever the verdict field says`, `only a report whose nine steps all held is written; run ${command('verify')} again`)
  }
  if (checked.mode === 'replay') {
    if (!options.allowReplay) {
      refuse('mode', 'mode "replay": a replay re-judges an old recorded run, it is not a fresh proof', `run ${command('verify')} live after the deploy, or pass --allow-replay to write it anyway`)
    } else if (checked.recordedMs === null || report.recording === undefined) {
      refuse('recordedAt', 'a replay report without recordedAt and its recording: its age cannot be known', `replay the recording again with this armproof, or run ${command('verify')} live`)
    }
  }
  if (options.svc !== null && checked.svc !== options.svc) {
    refuse('svc', `report is for service ${showText(checked.svc)}, not ${showText(options.svc)} (--svc)`, "pass that service's own report")
  }
  // A replay's age is the recording's age: replaying does not make an old proof fresh.
  const replay = checked.mode === 'replay' && checked.recordedMs !== null
  const field = replay ? 'recordedAt' : 'finishedAt'
  const at = replay ? checked.recordedMs! : checked.finishedMs
  const atText = replay ? report.recordedAt! : checked.finishedAt
  const age = now.getTime() - at
  if (age > options.maxAgeMs) {
    refuse(field, `${replay ? 'recorded' : 'finished'} ${atText}, ${formatAge(age)} ago, older than --max-age ${options.maxAgeText}`, `run ${command('verify')} again after the deploy, or raise --max-age`)
  } else if (age < -SKEW_MS) {
    refuse(field, `${replay ? 'recorded' : 'finished'} ${atText}, ${formatAge(age)} in the future`, 'check the clocks of the verify runner and this one')
  }
  return out
}
