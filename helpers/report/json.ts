// The run as the contract's JSON report: one plain object with a fixed key order, built from the
// steps alone. The API key never appears in it: the target's key is left out, and a final scrub
// replaces the key's value wherever a step may have echoed it.
import { writeAtomic } from '../seams/atomic.ts'
import pkg from '../../package.json' with { type: 'json' }
import type { Mode, Target } from '../config/load.ts'
import type { TruthTable } from './truth.ts'
import type { KnobName } from '../config/knobs.ts'
import { targetProfile } from '../profiles/target.ts'
import { profileCheck, type ProfileCheck } from '../profiles/verified.ts'
import {
  EXIT_CODES,
  INTERRUPT_EXIT,
  STEP_IDS,
  judgeRun,
  targetAllowedSkips,
  stepOf,
  stepResult,
  type RunVerdict,
  type StepId,
  type StepResult,
} from '../steps/verdict.ts'
import { runIdentity, type RunIdentity } from './identity.ts'
import { meterProof, type MeterProof } from '../steps/meter/evidence.ts'
import { reportHead, type ReportHead } from './head.ts'
import { firstMistake, mistakeError } from '../steps/mistake.ts'

import { REDACTED, scrub } from '../seams/redact.ts'

export { REDACTED, scrub }

/** A step as the report shows it; `intendedSkip: true` marks a skip the operator asked for (writeback reads it). */
export type ReportStep<Id extends StepId = StepId> = StepResult<Id>

export interface ReportMeter {
  name: string
  first: number | null
  last: number | null
  movedAt: string | null
  /** Added to the contract's fields: how long after the watch began the meter left zero. */
  movedAfterMs: number | null
  labels: Record<string, string>
  /**
   * Added: what proved a passed meter step: `rose` during this run's traffic, `before-run` (above
   * zero at the first scrape of the very process argv read), `stayed-at-zero` (a rollback); null
   * when the step did not pass. Absent in reports written before it existed.
   */
  proof?: MeterProof | null
}

export type { MeterProof }

/** `format`, `endpoint` and `host` come first (./head.ts); the contract's fields follow. */
export interface Report extends ReportHead {
  svc: string
  knob: KnobName
  expected: string | null
  previous: string | null
  mode: Mode
  verdict: RunVerdict
  startedAt: string
  finishedAt: string
  steps: ReportStep[]
  meter: ReportMeter | null
  /** What an operator types to undo the arm. */
  rollback: string
  /** Why the run could not be judged at all (verdict `error`), else null. */
  error: string | null
  /** Errors outside any step (unhandled, a suite hook); any of them keeps the run from green. */
  notes: string[]
  exitCode: number
  tool: { name: 'armproof'; version: string }
  /** The argv-vs-default truth table (see truth.ts). */
  truth?: TruthTable
  /**
   * The engine profile the run read the engine by, and the real build its captured output was
   * checked against; null: none (SGLang's, radiance's), and `unverified` says so in words.
   */
  profile?: ProfileCheck
  /** A replay only: when the replayed run was recorded (writeback's --max-age measures from it). */
  recordedAt?: string
  /** A replay only: the recording it re-judged, as verified before the replay. */
  recording?: RecordingRef
  /**
   * Added: what makes two runs the same run (mode, the skips declared on purpose, the options the
   * run was judged with) and its id; merge-reports and writeback read it. Absent in reports
   * written before it existed.
   */
  run?: RunIdentity
}

export type { RunIdentity }

/** The recording a replay report re-judged: its folder, its digest, and what the recording itself concluded. */
export interface RecordingRef {
  /** The fixture folder, absolute, so writeback can verify it again. */
  fixtures: string
  /** sha256 over the fixture files' digests (see helpers/seams/digest.ts `recordingDigest`). */
  digest: string
  recordedAt: string
  recordedVerdict: string | null
}

export interface ReportInput {
  target: Target
  steps: readonly StepResult[]
  startedAt: Date
  finishedAt: Date
  /** The knob's default as the build's --help printed it (enum knobs have none in the catalog). */
  defaultFromHelp?: string | null
  /** Unhandled and suite errors (from the reporter's `unhandled()`): they force a green run to inconclusive. */
  unhandled?: readonly string[]
  /** The knob's argv-vs-default truth table (truth.ts), built by the caller from the same steps. */
  truth?: TruthTable
  /** The run could not be judged (e.g. vitest did not start): verdict `error`. */
  error?: string
  /** A replay: the recording it re-judged. */
  recording?: RecordingRef
  /** The run was stopped by this signal: verdict `interrupted`, the steps done keep their verdicts. */
  interrupted?: 'SIGINT' | 'SIGTERM'
}

/** A counter's value as the report's number: NaN and ±Inf (Prometheus may expose them) are null. */
function finite(v: number | null | undefined): number | null {
  return v !== null && v !== undefined && Number.isFinite(v) ? v : null
}

function meterOf(target: Target, steps: readonly StepResult[]): ReportMeter | null {
  const spec = targetProfile(target).spec.proof.meter
  if (!spec) return null
  const m = stepOf(steps, 'meter')?.evidence.meter
  return {
    name: m?.name ?? spec.name,
    first: finite(m?.first),
    last: finite(m?.last),
    movedAt: m?.movedAt ?? null,
    movedAfterMs: finite(m?.movedAfterMs),
    labels: { ...(spec.labels ?? {}) },
    proof: meterProof(m?.proof),
  }
}

/** One step as the report lists it, keys in the contract's order (the runner's `buildDefault` is not a report field). */
function reportStep<Id extends StepId>(s: StepResult<Id>): ReportStep<Id> {
  return stepResult(
    s.id,
    s.title,
    {
      verdict: s.verdict,
      expected: s.expected,
      observed: s.observed,
      where: s.where,
      ...(s.next ? { next: s.next } : {}),
      ...(s.mistake !== undefined ? { mistake: s.mistake } : {}),
      ...(s.intendedSkip === true && s.verdict === 'skipped' ? { intendedSkip: true } : {}),
      evidence: s.evidence,
    },
    s.durationMs,
  )
}

/** The contract's report for a finished (or failed-to-start) run. */
export function buildReport(input: ReportInput): Report {
  const { target, steps } = input
  const { spec } = targetProfile(target)
  const fallback = spec.default ?? input.defaultFromHelp ?? null
  const previous = target.previous ?? fallback
  const notes = [...(input.unhandled ?? [])]
  if (input.interrupted)
    notes.push(
      `interrupted by ${input.interrupted} after ${steps.length} of ${STEP_IDS.length} steps; the steps not listed were not judged`,
    )
  const run = runIdentity(target)
  // An operator's mistake a step found (after first contact): the run's error names the step and the one line.
  const mistake = firstMistake(steps)
  const error = input.error ?? (mistake ? mistakeError(mistake) : undefined)
  // The one green rule (helpers/steps/verdict.ts), with the skips this run declares: what
  // merge-reports and writeback derive again from the report.
  const judged = judgeRun({
    steps,
    allowed: targetAllowedSkips(target),
    notes,
    ...(error !== undefined ? { error } : {}),
  })
  const verdict: RunVerdict = input.interrupted ? 'interrupted' : judged.verdict
  const report: Report = {
    ...reportHead(target),
    svc: target.svc,
    knob: target.knob,
    expected: target.value ?? fallback,
    previous,
    mode: target.mode,
    verdict,
    startedAt: input.startedAt.toISOString(),
    finishedAt: input.finishedAt.toISOString(),
    steps: steps.map(reportStep),
    meter: meterOf(target, steps),
    rollback: `${spec.env}=${previous ?? ''} then redeploy --service ${target.svc}`,
    error: input.interrupted ? `interrupted by ${input.interrupted} after ${steps.length} of ${STEP_IDS.length} steps` : (error ?? null),
    notes,
    exitCode: input.interrupted ? INTERRUPT_EXIT[input.interrupted] : EXIT_CODES[verdict],
    tool: { name: 'armproof', version: pkg.version },
    ...(input.truth ? { truth: input.truth } : {}),
    profile: profileCheck(targetProfile(target).engine),
    ...(input.recording ? { recordedAt: input.recording.recordedAt, recording: input.recording } : {}),
    run,
  }
  return scrub(report, target.apiKey) as Report
}

/** The report as written to disk: two-space JSON and a final newline. */
export function reportJson(report: Report): string {
  return `${JSON.stringify(report, null, 2)}\n`
}

export async function writeJson(path: string, report: Report): Promise<void> {
  await writeAtomic(path, reportJson(report))
}
