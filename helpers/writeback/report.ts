// Reads the report pnpm verify wrote and decides whether it may be written into the vault:
// green (verdict and exit code), not a replay unless allowed, for the asked service, fresh.
import { readFile } from 'node:fs/promises'
import type { Report } from '../report/json.ts'
import { showValue } from '../shell.ts'
import type { Refusal, WritebackOptions } from './options.ts'

/** The fields writeback uses, checked for shape; every string is still untrusted text. */
export type ReportFacts = Pick<Report, 'svc' | 'expected' | 'previous' | 'finishedAt' | 'meter' | 'rollback' | 'exitCode'> & {
  /** Not checked against the catalog: a report from a newer armproof may name a knob this one lacks. */
  knob: string
  mode: string
  verdict: string
  finishedMs: number
}

const SVC_RE = /^[A-Za-z0-9_.-]+$/
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/
/** How far in the future a finishedAt may lie (clock skew between the CI runners). */
const SKEW_MS = 5 * 60_000

const strOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string'
const numOrNull = (v: unknown): v is number | null => v === null || (typeof v === 'number' && Number.isFinite(v))

export async function readReport(path: string, shown: string): Promise<{ report?: ReportFacts; refusals: Refusal[] }> {
  const refuse = (found: string, next: string) => ({ refusals: [{ checked: 'report', where: shown, found, next }] })
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return refuse(code === 'ENOENT' ? 'no such file' : `cannot be read (${code ?? 'error'})`, 'pass the file pnpm verify wrote with --report (in CI: download the verify job artifact first)')
  }
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch {
    return refuse('is not JSON', 'pass the JSON file pnpm verify wrote with --report (not the JUnit file)')
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) return refuse('is not a JSON object', 'pass the JSON file pnpm verify wrote with --report')
  const r = data as Record<string, unknown>
  const bad: string[] = []
  if (typeof r.svc !== 'string' || !SVC_RE.test(r.svc)) bad.push('svc')
  if (typeof r.knob !== 'string' || r.knob === '') bad.push('knob')
  if (!strOrNull(r.expected)) bad.push('expected')
  if (!strOrNull(r.previous ?? null)) bad.push('previous')
  if (typeof r.mode !== 'string') bad.push('mode')
  if (typeof r.verdict !== 'string') bad.push('verdict')
  if (typeof r.exitCode !== 'number') bad.push('exitCode')
  if (typeof r.rollback !== 'string') bad.push('rollback')
  const finishedMs = typeof r.finishedAt === 'string' && ISO_RE.test(r.finishedAt) ? Date.parse(r.finishedAt) : Number.NaN
  if (!Number.isFinite(finishedMs)) bad.push('finishedAt')
  const m = r.meter
  const meterOk =
    m === null ||
    (typeof m === 'object' && !Array.isArray(m) && m !== undefined &&
      typeof (m as Record<string, unknown>).name === 'string' &&
      numOrNull((m as Record<string, unknown>).first) && numOrNull((m as Record<string, unknown>).last) &&
      strOrNull((m as Record<string, unknown>).movedAt ?? null) && numOrNull((m as Record<string, unknown>).movedAfterMs ?? null) &&
      [undefined, null, 'rose', 'before-run', 'stayed-at-zero'].includes((m as Record<string, unknown>).proof as string))
  if (!meterOk) bad.push('meter')
  if (bad.length > 0) {
    return refuse(`is not an armproof report: missing or malformed ${bad.join(', ')}`, 'pass the JSON file pnpm verify wrote with --report')
  }
  const meter = m as Report['meter']
  return {
    report: {
      svc: r.svc as string,
      knob: r.knob as string,
      expected: r.expected as string | null,
      previous: (r.previous ?? null) as string | null,
      mode: r.mode as string,
      verdict: r.verdict as string,
      exitCode: r.exitCode as number,
      finishedAt: r.finishedAt as string,
      finishedMs,
      rollback: r.rollback as string,
      meter: meter && { ...meter, movedAt: meter.movedAt ?? null, movedAfterMs: meter.movedAfterMs ?? null, labels: labelsOf(meter.labels) },
    },
    refusals: [],
  }
}

function labelsOf(v: unknown): Record<string, string> {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return {}
  return Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'))
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

/** Every reason this report must not be written, one refusal each. */
export function judgeReport(report: ReportFacts, options: Pick<WritebackOptions, 'svc' | 'maxAgeMs' | 'maxAgeText' | 'allowReplay'>, now: Date, shown: string): Refusal[] {
  const out: Refusal[] = []
  const refuse = (checked: string, found: string, next: string) => out.push({ checked, where: shown, found, next })
  if (report.verdict !== 'green' || report.exitCode !== 0) {
    refuse(
      'verdict and exitCode',
      `verdict ${showValue(report.verdict)}, exitCode ${report.exitCode}: not green`,
      "only a green run is written; fix what the report's failed steps say and run pnpm verify again",
    )
  }
  if (report.mode === 'replay' && !options.allowReplay) {
    refuse('mode', 'mode "replay": a replay re-judges an old recorded run, it is not a fresh proof', 'run pnpm verify live after the deploy, or pass --allow-replay to write it anyway')
  }
  if (options.svc !== null && report.svc !== options.svc) {
    refuse('svc', `report is for service ${showValue(report.svc)}, not ${showValue(options.svc)} (--svc)`, "pass that service's own report")
  }
  const age = now.getTime() - report.finishedMs
  if (age > options.maxAgeMs) {
    refuse('finishedAt', `finished ${report.finishedAt}, ${formatAge(age)} ago, older than --max-age ${options.maxAgeText}`, 'run pnpm verify again after the deploy, or raise --max-age')
  } else if (age < -SKEW_MS) {
    refuse('finishedAt', `finished ${report.finishedAt}, ${formatAge(age)} in the future`, "check the clocks of the verify runner and this one")
  }
  return out
}
