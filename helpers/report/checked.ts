// A report read back (by writeback, by merge-reports): nothing in it is taken on trust. Its shape
// is checked against the report's own type (REPORT_SCHEMA), its verdict is derived again from its
// steps by the one green rule verify uses (helpers/steps/verdict.ts `judgeRun`, with the skips the
// knob's proof implies and the run declares), and its run identity is recomputed from its fields.
import { KNOB_NAME_RE } from '../profiles/doc.ts'
import { profileOf } from '../profiles/target.ts'
import { SVC_NAME } from '../config/shell.ts'
import { array, literal, nullable, number, object, optional, record, string, unknownValue, type Infer } from '../schema/schema.ts'
import {
  EXIT_CODES,
  INTERRUPT_EXIT,
  STEP_IDS,
  allowedSkips,
  declaredSkips,
  judgeRun,
  LATER_STEPS,
  type NotGreen,
  type StepId,
  type RunVerdict,
} from '../steps/verdict.ts'
import type { MeterProof, Report } from './json.ts'
import { runId } from './identity.ts'
import { knobRecordNames } from '../steps/one-flag/names.ts'
import { REPORT_FORMAT, type ReportHead } from './head.ts'

/** No real report comes near this. */
export const MAX_REPORT_BYTES = 32 * 1024 * 1024

const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/
const ISO = { re: ISO_RE, says: 'an ISO time like 2026-11-30T02:31:05.120Z' }
const METRIC = { re: /^[A-Za-z_:][A-Za-z0-9_:]{0,200}$/, says: 'a Prometheus metric name' }
const LABEL = { re: /^[A-Za-z_][A-Za-z0-9_]{0,100}$/, says: 'a Prometheus label name' }
const DIGEST = { re: /^[0-9a-f]{64}$/, says: 'a sha256 hex digest' }
export const VERDICT_WORDS = ['green', 'red', 'inconclusive', 'error', 'interrupted'] as const satisfies readonly RunVerdict[]

const STEP = object({
  id: literal(...STEP_IDS),
  title: string(),
  verdict: literal('passed', 'failed', 'inconclusive', 'skipped'),
  expected: string(),
  observed: string(),
  where: string(),
  next: optional(string()),
  mistake: optional(string()),
  intendedSkip: optional(literal(true)),
  evidence: record(unknownValue()),
  durationMs: number({ min: 0 }),
})

/** The JSON report's own type (./json.ts `Report`), as a schema. */
export const REPORT_SCHEMA = object({
  // Reports written before the format tag have none; another format is refused, never misread.
  format: optional(literal(REPORT_FORMAT)),
  endpoint: optional(nullable(string())),
  host: optional(string()),
  svc: string(SVC_NAME),
  knob: string({ re: KNOB_NAME_RE, says: 'a knob name in capitals' }),
  expected: nullable(string()),
  previous: nullable(string()),
  mode: literal('live', 'record', 'replay'),
  verdict: literal(...VERDICT_WORDS),
  startedAt: string(ISO),
  finishedAt: string(ISO),
  steps: array(STEP, { max: 64 }),
  meter: nullable(
    object({
      name: string(METRIC),
      first: nullable(number()),
      last: nullable(number()),
      movedAt: nullable(string(ISO)),
      movedAfterMs: nullable(number({ min: 0 })),
      labels: record(string(), LABEL),
      proof: optional(nullable(literal<MeterProof>('rose', 'before-run', 'stayed-at-zero'))),
    }),
  ),
  rollback: string(),
  error: nullable(string()),
  notes: array(string()),
  exitCode: number({ integer: true }),
  tool: object({ name: literal('armproof'), version: string() }),
  truth: optional(unknownValue()),
  recordedAt: optional(string(ISO)),
  recording: optional(object({ fixtures: string(), digest: string(DIGEST), recordedAt: string(ISO), recordedVerdict: nullable(string()) })),
  run: optional(
    object({
      id: string(DIGEST),
      mode: literal('live', 'record', 'replay'),
      skips: array(literal(...STEP_IDS), { max: STEP_IDS.length }),
      target: record(unknownValue()),
    }),
  ),
})

export type CheckedReportData = Infer<typeof REPORT_SCHEMA>

// The schema is the report's own type: this fails to compile when the two drift apart.
type Loose = Omit<Report, 'truth' | 'tool' | 'run' | keyof ReportHead> & {
  tool: { name: string }
  run?: Omit<NonNullable<Report['run']>, 'target'> & { target: Record<string, unknown> }
}
const _sameType: (r: CheckedReportData) => Loose = (r) => r
void _sameType

/** A report every field of which is valid, to check one field at a time. */
const FULL: Readonly<Record<string, unknown>> = {
  svc: 'x',
  knob: 'PREFILL_INTERLEAVE',
  expected: null,
  previous: null,
  mode: 'live',
  verdict: 'green',
  startedAt: '2026-01-01T00:00:00Z',
  finishedAt: '2026-01-01T00:00:00Z',
  steps: [],
  meter: null,
  rollback: '',
  error: null,
  notes: [],
  exitCode: 0,
  tool: { name: 'armproof', version: '0' },
}

/** The top-level fields that are missing or malformed, in the report's order. */
function badFields(data: Record<string, unknown>): string[] {
  const keys = ['format', 'endpoint', 'host', ...Object.keys(FULL), 'truth', 'recordedAt', 'recording', 'run']
  return keys.filter((k) => !REPORT_SCHEMA.check({ ...FULL, [k]: data[k] }, '').ok)
}

/** The report checked against its type, or one line naming every malformed field and the first problem in full. */
export function checkReportShape(data: unknown): { report: CheckedReportData } | { problem: string } {
  if (!data || typeof data !== 'object' || Array.isArray(data)) return { problem: 'is not a JSON object' }
  const checked = REPORT_SCHEMA.check(data, '')
  if (checked.ok) return { report: checked.value }
  const names = badFields(data as Record<string, unknown>)
  return {
    problem: `is not an armproof report: missing or malformed ${names.length ? names.join(', ') : checked.path} (${checked.path} ${checked.problem})`,
  }
}

/** The verdict the report's steps, notes and error give by the one green rule, and why it is not green. */
export function derivedVerdict(report: CheckedReportData): { verdict: RunVerdict; why: NotGreen[] } {
  // The knob's proof as the run carried it (its profile's entry), else radiance's (a report written before profiles).
  const proof = profileOf({ ...(report.run?.target ?? {}), knob: report.knob })?.spec.proof
  return judgeRun({
    steps: report.steps,
    allowed: allowedSkips(proof, report.run?.skips ?? []),
    notes: report.notes,
    error: report.error,
    required: requiredSteps(report),
  })
}

/**
 * The steps a report read back must hold: every step, but for a report written before the
 * one-flag law (its run identity's target has no `baseline`, which every later run records, null
 * or not; a report without a run identity is older still): it could not have that step. A report
 * of a later armproof with its one-flag step removed is missing it (and its run.id still names
 * the baseline).
 */
export function requiredSteps(report: Pick<CheckedReportData, 'run'> & { steps: readonly { id: string }[] }): readonly StepId[] {
  const beforeLaw = report.run === undefined || !('baseline' in report.run.target)
  return beforeLaw && !report.steps.some((s) => s.id === 'one-flag') ? STEP_IDS.filter((id) => !LATER_STEPS.includes(id)) : STEP_IDS
}

/**
 * Why the verdict and exit code the report claims are not the ones its own content gives, or
 * null. An interrupted run is judged `error` from its content (its error field says where it
 * stopped): `interrupted` fits it, with exit 130 or 143.
 */
export function claimProblem(report: CheckedReportData): string | null {
  const derived = derivedVerdict(report).verdict
  const fits = report.verdict === derived || (derived === 'error' && report.verdict === 'interrupted')
  if (!fits) return `says verdict ${JSON.stringify(report.verdict)}, but its steps, notes and error give ${derived}`
  const exits: readonly number[] = report.verdict === 'interrupted' ? Object.values(INTERRUPT_EXIT) : [EXIT_CODES[report.verdict]]
  if (!exits.includes(report.exitCode)) return `says exitCode ${report.exitCode}, but verdict ${report.verdict} exits ${exits.join(' or ')}`
  return null
}

/**
 * Why the report's run identity is not its own, or null: it is missing (an older armproof), its
 * id is not the digest of its fields, or the report's svc, knob, values or mode are not the ones
 * the identity names.
 */
export function identityProblem(report: CheckedReportData): string | null {
  const run = report.run
  if (!run) return "carries no run identity (written by an armproof older than merge-reports' run check)"
  if (runId(run) !== run.id) return `its run identity was edited: run.id ${run.id.slice(0, 12)}… is not the digest of its fields`
  const t = run.target
  const differs = [
    t.svc !== report.svc && 'svc',
    t.knob !== report.knob && 'knob',
    run.mode !== report.mode && 'mode',
    t.value !== null && t.value !== report.expected && 'expected',
    t.previous !== null && t.previous !== report.previous && 'previous',
    // The skips a run declares follow from its options (--no-dropin-check, a runtime without a unit,
    // --skip): a list that does not is not what that run declared.
    !sameSkips(run.skips, t) && 'skips',
  ].filter((x): x is string => typeof x === 'string')
  return differs.length
    ? `its ${differs.join(', ')} ${differs.length === 1 ? 'is' : 'are'} not the run identity's (run.target): the report was edited`
    : null
}

function sameSkips(skips: readonly string[], t: Record<string, unknown>): boolean {
  const declared = declaredSkips({
    dropinCheck: t.dropinCheck !== false,
    ...(t.unit === null || typeof t.unit === 'string' ? { unit: t.unit } : {}),
    ...(Array.isArray(t.skip) ? { skip: t.skip.filter((x): x is string => typeof x === 'string') } : {}),
  })
  return skips.length === declared.length && skips.every((id) => declared.includes(id as (typeof declared)[number]))
}

/** The endpoint the report's run verified (`run.target.baseUrl`), when it names one. */
export function endpointOf(report: CheckedReportData): string | null {
  const url = report.run?.target.baseUrl
  return typeof url === 'string' && url !== '' ? url : null
}

/** The knob's names in a one-flag record of the report's run (its profile's flag, spellings, twin); null when the report carries no profile armproof reads. */
export function reportKnobNames(report: Pick<CheckedReportData, 'run' | 'knob'>): string[] | null {
  const profile = profileOf({ ...(report.run?.target ?? {}), knob: report.knob })
  return profile ? knobRecordNames(profile.spec, profile.engine.parser) : null
}
