// A preflight as verify's JSON report (armproof-report/1, docs/schema/armproof-report-1.json): the
// same head and fields, its own step ids (helpers/steps/preflight/registry.ts), no meter; its
// verdict by the one green rule (helpers/steps/verdict.ts `judgeSteps`) over preflight's checks:
// green is "ready to deploy". The run's key is scrubbed from every field, as verify's report is.
import { styleText } from 'node:util'
import pkg from '../../package.json' with { type: 'json' }
import type { Target } from '../config/load.ts'
import { targetProfile } from '../profiles/target.ts'
import { profileCheck, type ProfileCheck } from '../profiles/verified.ts'
import { scrub } from '../seams/redact.ts'
import { PREFLIGHT_STEP_IDS, type PreflightStepId, type PreflightStepResult } from '../steps/preflight/registry.ts'
import { EXIT_CODES, INTERRUPT_EXIT, judgeSteps, type RunVerdict } from '../steps/verdict.ts'
import { reportHead, type ReportHead } from './head.ts'
import { oneLine } from './_summary.ts'
import { command } from '../config/invocation.ts'

export interface PreflightReport extends ReportHead {
  svc: string
  knob: string
  /** The value the deploy arms (null: the default, unknown). */
  expected: string | null
  previous: string | null
  mode: 'live'
  verdict: RunVerdict
  startedAt: string
  finishedAt: string
  steps: PreflightStepResult[]
  meter: null
  rollback: string
  error: string | null
  notes: string[]
  exitCode: number
  tool: { name: 'armproof'; version: string }
  profile: ProfileCheck
}

/** The checks a preflight may skip and still be ready: each says why (no unit, --no-dropin-check; no --env-file). */
export const PREFLIGHT_SKIPPABLE: ReadonlySet<PreflightStepId> = new Set(['preflight.dropins', 'preflight.env-file'])

export interface PreflightReportInput {
  target: Target
  steps: readonly PreflightStepResult[]
  /** The value armed, as the checks read it (null: unknown). */
  value: string | null
  startedAt: Date
  finishedAt: Date
  /** Why the checks could not all be made (an exception no check expected): the run cannot tell. */
  notes?: readonly string[]
  /** Why no check was made: an operator's mistake first contact found (exit 2). */
  error?: string
  /** The run was stopped by this signal: verdict `interrupted`, the checks made keep their verdicts. */
  interrupted?: 'SIGINT' | 'SIGTERM'
}

export function buildPreflightReport(input: PreflightReportInput): PreflightReport {
  const { target, steps } = input
  const { spec } = targetProfile(target)
  const previous = target.previous ?? spec.default ?? null
  const judged = judgeSteps({
    steps,
    ids: PREFLIGHT_STEP_IDS,
    allowed: PREFLIGHT_SKIPPABLE,
    notes: input.notes ?? [],
    ...(input.error !== undefined ? { error: input.error } : {}),
  })
  const verdict: RunVerdict = input.interrupted ? 'interrupted' : judged.verdict
  const stopped = input.interrupted
    ? `interrupted by ${input.interrupted} after ${steps.length} of ${PREFLIGHT_STEP_IDS.length} checks; the checks not listed were not made`
    : undefined
  const report: PreflightReport = {
    ...reportHead(target),
    svc: target.svc,
    knob: target.knob,
    expected: input.value,
    previous,
    mode: 'live',
    verdict,
    startedAt: input.startedAt.toISOString(),
    finishedAt: input.finishedAt.toISOString(),
    steps: [...steps],
    meter: null,
    rollback: `${spec.env}=${previous ?? ''} then redeploy --service ${target.svc}`,
    error: stopped ?? input.error ?? null,
    notes: [...(input.notes ?? [])],
    exitCode: input.interrupted ? INTERRUPT_EXIT[input.interrupted] : EXIT_CODES[verdict],
    tool: { name: 'armproof', version: pkg.version },
    profile: profileCheck(targetProfile(target).engine),
  }
  return scrub(report, target.apiKey) as PreflightReport
}

const WORDS: Readonly<Record<RunVerdict, string>> = {
  green: 'READY to deploy',
  red: 'NOT READY: do not deploy',
  inconclusive: 'CANNOT TELL: do not deploy yet',
  error: 'ERROR',
  interrupted: 'INTERRUPTED',
}
const STYLE: Readonly<Record<RunVerdict, 'green' | 'red' | 'yellow'>> = {
  green: 'green',
  red: 'red',
  inconclusive: 'yellow',
  error: 'red',
  interrupted: 'yellow',
}

/** The preflight in one line: `READY to deploy · …` or `NOT READY: do not deploy · 2 checks failed: … · next: …`. */
export function preflightFinalLine(report: PreflightReport, options: { color?: boolean; reportPath?: string | null } = {}): string {
  const word = options.color ? styleText(STYLE[report.verdict], WORDS[report.verdict], { validateStream: false }) : WORDS[report.verdict]
  const failed = report.steps.filter((s) => s.verdict === 'failed')
  const unsure = report.steps.filter((s) => s.verdict === 'inconclusive')
  const saved = options.reportPath ? ` · report ${options.reportPath}` : ''
  if (report.verdict === 'green')
    return `${word} · ${report.knob} ${report.previous ?? 'the default'} → ${report.expected ?? 'the default'} on ${report.svc}: every check held · after the deploy: ${command('verify')} --svc ${report.svc} --knob ${report.knob}${report.expected !== null ? ` --value ${report.expected}` : ''}${report.previous !== null ? ` --previous ${report.previous}` : ''} · rollback: ${report.rollback}${saved}`
  if (report.verdict === 'error' || report.verdict === 'interrupted')
    return `${word} · ${oneLine(report.error ?? 'the checks could not be made')}${saved}`
  const focus = failed[0] ?? unsure[0]
  const why =
    failed.length > 0
      ? `${failed.length} check${failed.length === 1 ? '' : 's'} failed: ${failed.map((s) => s.id).join(', ')}${unsure.length ? `; ${unsure.length} could not tell: ${unsure.map((s) => s.id).join(', ')}` : ''}`
      : `${unsure.length} check${unsure.length === 1 ? '' : 's'} could not tell: ${unsure.map((s) => s.id).join(', ')}`
  return `${word} · ${why}${focus?.next ? ` · next: ${oneLine(focus.next)}` : ''}${saved}`
}
