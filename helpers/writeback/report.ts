// Reads the report pnpm verify wrote and decides whether it may be written into the vault. Nothing
// is taken on trust: the whole report is checked against the report's own type (REPORT_SCHEMA),
// and the verdict is derived again from its steps; a replay is accepted only with --allow-replay,
// only with its recording's time and digest, and only while that recording is unedited.
import { constants } from 'node:fs'
import { open } from 'node:fs/promises'
import { asArmRecord, type ArmRecord } from '../config/arm-record.ts'
import { valueProblem } from '../config/knobs.ts'
import { profileOf } from '../profiles/target.ts'
import {
  MAX_REPORT_BYTES,
  checkReportShape,
  derivedVerdict,
  endpointOf,
  identityProblem,
  type CheckedReportData,
} from '../report/checked.ts'
import type { Report } from '../report/json.ts'
import { endsEarly } from '../schema/schema.ts'
import { showText } from './escape.ts'
import type { Refusal, WritebackOptions } from './options.ts'
import { command } from '../config/invocation.ts'

/** The fields writeback writes from, checked; every string is still untrusted text. */
export type ReportFacts = Pick<Report, 'svc' | 'expected' | 'previous' | 'finishedAt' | 'meter' | 'exitCode'> & {
  /** The catalog name (the schema refuses others); kept as a string so the entry renders any text safely. */
  knob: string
  mode: string
  verdict: string
  finishedMs: number
  /** The endpoint the run verified (its `run.target.baseUrl`), untrusted text; null when the report names none. */
  endpoint?: string | null
  /** The knob's env name, from the catalog entry the run carried (or radiance's catalog). */
  env?: string
  /** The one-flag law's record of the engine (step one-flag's evidence), when the report carries one. */
  record?: ArmRecord | null
}

/** A checked report: the facts the entry needs, and the rest the gate re-derives from. */
export type CheckedReport = ReportFacts & { report: CheckedReportData; recordedMs: number | null }

/** How far in the future a time may lie (clock skew between the CI runners). */
const SKEW_MS = 5 * 60_000

export { MAX_REPORT_BYTES, REPORT_SCHEMA } from '../report/checked.ts'

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

const refusalOf =
  (shown: string) =>
  (found: string, next = `pass the JSON file ${command('verify')} wrote with --report`): Read => ({
    refusals: [{ checked: 'report', where: shown, found, next }],
  })

/** The report file as parsed JSON (a one-target report or a fleet's), or why it cannot be read. */
export async function readReportFile(path: string, shown: string): Promise<{ data: unknown } | { refusals: Refusal[] }> {
  const refuse = refusalOf(shown)
  const read = await readRegular(path)
  if ('code' in read) {
    const c = read.code
    if (c === 'ENOENT')
      return refuse(
        'no such file',
        `pass the file ${command('verify')} wrote with --report (in CI: download the verify job artifact first)`,
      )
    if (c === 'FIFO' || c === 'DIR' || c === 'SPECIAL')
      return refuse(`is not a regular file (${c === 'FIFO' ? 'a FIFO' : c === 'DIR' ? 'a folder' : 'a device or socket'}); it was not read`)
    if (c === 'TOO_BIG') return refuse(`is larger than ${MAX_REPORT_BYTES / 1024 / 1024} MiB; no report is that large`)
    return refuse(`cannot be read (${c})`, 'check the file exists and is readable, then run again')
  }
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(read.bytes)
  } catch {
    return refuse('is not UTF-8 text')
  }
  try {
    return { data: JSON.parse(text) as unknown }
  } catch (error) {
    const early = endsEarly(text, error)
    return refuse(
      `is not JSON${early ? ' (it ends early: a truncated file?)' : ''}`,
      `pass the JSON file ${command('verify')} wrote with --report (not the JUnit file)`,
    )
  }
}

/** One report (a file's, or one target's of a fleet report) checked against the report's type and its knob. */
export function checkReport(data: unknown, shown: string): Read {
  const refuse = refusalOf(shown)
  const shape = checkReportShape(data)
  if ('problem' in shape) return refuse(shape.problem)
  const r = shape.report
  // The knob as the run carried it (its profile's catalog entry), else radiance's (a report written before profiles).
  const spec = profileOf({ ...(r.run?.target ?? {}), knob: r.knob })?.spec
  if (!spec)
    return refuse(
      `is not an armproof report this armproof can read: its knob ${showText(r.knob)} is not radiance's and the report carries no profile that defines it (run.target.engine)`,
    )
  for (const field of ['expected', 'previous'] as const) {
    const v = r[field]
    const why = v === null ? undefined : valueProblem(spec, v)
    if (why) return refuse(`is not an armproof report: ${field} ${showText(v!)} does not fit ${r.knob}: ${why}`)
  }
  return {
    report: {
      svc: r.svc,
      knob: r.knob,
      env: spec.env,
      expected: r.expected,
      previous: r.previous,
      mode: r.mode,
      verdict: r.verdict,
      exitCode: r.exitCode,
      finishedAt: r.finishedAt,
      finishedMs: Date.parse(r.finishedAt),
      meter: r.meter,
      recordedMs: r.recordedAt !== undefined ? Date.parse(r.recordedAt) : null,
      endpoint: endpointOf(r),
      record: asArmRecord(r.steps.find((s) => s.id === 'one-flag')?.evidence.record),
      report: r,
    },
    refusals: [],
  }
}

export async function readReport(path: string, shown: string): Promise<Read> {
  const read = await readReportFile(path, shown)
  return 'refusals' in read ? read : checkReport(read.data, shown)
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

/** Why a report is not green by the one green rule (helpers/report/checked.ts), in a refusal's words; empty when green. */
export function rederive(report: CheckedReport['report']): string[] {
  return derivedVerdict(report).why.map((w) => {
    switch (w.kind) {
      case 'error':
        return `error: ${showText(w.text, 100)}`
      case 'mistake':
        return `step ${w.id} found an operator's mistake: ${showText(w.text, 100)}`
      case 'no-steps':
        return 'steps: none recorded'
      case 'missing':
        return `steps missing: ${w.ids.join(', ')}`
      case 'twice':
        return `steps given twice: ${w.ids.join(', ')}`
      case 'notes':
        return `notes: ${w.count} error note${w.count === 1 ? '' : 's'}, first ${showText(w.first, 100)}`
      case 'not-held':
        return `steps not held: ${w.steps.map((s) => `${s.id} ${s.verdict}${s.skip === 'not-marked' ? ' (not a skip the operator asked for)' : s.skip === 'not-allowed' ? ' (not a skip this run declared or its knob implies)' : ''}`).join(', ')}`
    }
  })
}

/** Every reason this report must not be written, one refusal each. */
export function judgeReport(
  checked: CheckedReport,
  options: Pick<WritebackOptions, 'svc' | 'maxAgeMs' | 'maxAgeText' | 'allowReplay'>,
  now: Date,
  shown: string,
): Refusal[] {
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
    refuse(
      'the verdict derived from the steps',
      `${why.join('; ')}: not green, whatever the verdict field says`,
      `only a report whose steps all held (or were skipped as the run declared) is written; run ${command('verify')} again`,
    )
  }
  // A report from before the run identity has none; one that has it must be its own.
  const edited = report.run ? identityProblem(report) : null
  if (edited) refuse('run', edited, `pass the report ${command('verify')} wrote, unedited`)
  if (checked.mode === 'replay') {
    if (!options.allowReplay) {
      refuse(
        'mode',
        'mode "replay": a replay re-judges an old recorded run, it is not a fresh proof',
        `run ${command('verify')} live after the deploy, or pass --allow-replay to write it anyway`,
      )
    } else if (checked.recordedMs === null || report.recording === undefined) {
      refuse(
        'recordedAt',
        'a replay report without recordedAt and its recording: its age cannot be known',
        `replay the recording again with this armproof, or run ${command('verify')} live`,
      )
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
    refuse(
      field,
      `${replay ? 'recorded' : 'finished'} ${atText}, ${formatAge(age)} ago, older than --max-age ${options.maxAgeText}`,
      `run ${command('verify')} again after the deploy, or raise --max-age`,
    )
  } else if (age < -SKEW_MS) {
    refuse(
      field,
      `${replay ? 'recorded' : 'finished'} ${atText}, ${formatAge(age)} in the future`,
      'check the clocks of the verify runner and this one',
    )
  }
  return out
}
