// A proof step's outcome as data: the report, the JUnit file and the exit code all come from it.

import type { StepEvidence } from './evidence.ts'
import type { KnobProof } from '../config/knobs.ts'
import type { Target } from '../config/load.ts'
import { targetProfile } from '../profiles/target.ts'
import { STEP_IDS, type StepId } from './registry.ts'

export { STEP_IDS, type StepId } from './registry.ts'
export type StepVerdict = 'passed' | 'failed' | 'inconclusive' | 'skipped'
export type RunVerdict = 'green' | 'red' | 'inconclusive' | 'error' | 'interrupted'

/** A step's outcome, whatever the step; `StepResult<Id>` carries that step's evidence type. */
export interface StepFields {
  title: string
  verdict: StepVerdict
  /** What the step required, in the operator's words. */
  expected: string
  /** What was seen: the value itself, never only "wrong". */
  observed: string
  /** Where it was seen: URL, or host and command. */
  where: string
  /** What to do next; always set when the step did not pass. */
  next?: string
  /**
   * An operator's mistake this step found (first contact's rule, ./first-contact/answers.ts): its
   * cause and fix in one line. The step is `inconclusive` (it proved nothing about the engine), the
   * steps after it are not judged, and the run is `error`, exit 2 (`judgeRun`).
   */
  mistake?: string
  /** A skip the operator asked for or the knob implies (e.g. --no-dropin-check); other skips never make a run green. */
  intendedSkip?: boolean
  durationMs: number
  /** Step `help` only: the build's default for the knob as its --help prints it (null: none printed). */
  buildDefault?: string | null
}

type ResultById = { [Id in StepId]: StepFields & { id: Id; evidence: StepEvidence<Id> } }

/** One step's result, its evidence typed by its id; `StepResult` alone is any step's (narrow it by `id`). */
export type StepResult<Id extends StepId = StepId> = ResultById[Id]

export type JudgementFields = Omit<StepFields, 'title' | 'durationMs' | 'buildDefault'>
type JudgementById = { [Id in StepId]: JudgementFields & { evidence: StepEvidence<Id> } }

/** What a step judge returns; the runner adds id, title and duration. */
export type Judgement<Id extends StepId = StepId> = JudgementById[Id]

/** A step's result from its judgement, typed by its id (keys in the report's order). */
export function stepResult<Id extends StepId>(
  id: Id,
  title: string,
  judgement: JudgementFields & { evidence: StepEvidence<Id> },
  durationMs: number,
): StepResult<Id> {
  // TypeScript does not resolve the by-id map for a generic id; the parameters tie evidence to id.
  return { id, title, ...judgement, durationMs } as StepResult<Id>
}

/** The result of step `id` among `steps`, typed by its id. */
export function stepOf<Id extends StepId>(steps: readonly StepResult[], id: Id): StepResult<Id> | undefined {
  return steps.find((s): s is StepResult<Id> => s.id === id)
}

/** `interrupted` is 130 here (SIGINT); a run stopped by SIGTERM exits 143 (see INTERRUPT_EXIT). */
export const EXIT_CODES: Readonly<Record<RunVerdict, number>> = { green: 0, red: 1, error: 2, inconclusive: 3, interrupted: 130 }

/** The exit code of a run stopped by a signal: 128 + the signal's number, as a shell reports it. */
export const INTERRUPT_EXIT: Readonly<Record<'SIGINT' | 'SIGTERM', number>> = { SIGINT: 130, SIGTERM: 143 }

/** A step as the green rule reads it: from a judge in this process, or from a report read back. */
export type StepLike = Pick<StepFields, 'verdict' | 'intendedSkip' | 'mistake'> & { id: StepId }

/**
 * The steps a run may skip and still be green: the skips its knob's proof implies (a knob with no
 * meter and no `/stats` field is proven by its ledger line alone: its `meter` step is skipped; a
 * knob whose engine prints no resolved value, by argv and its meter: its `ledger` step is) and
 * the skips the run declares on purpose (see `declaredSkips`). Nothing else: a skip is never a pass.
 */
export function allowedSkips(proof: KnobProof | undefined, declared: readonly string[]): ReadonlySet<StepId> {
  const out = new Set<StepId>(declared.filter((id): id is StepId => (STEP_IDS as readonly string[]).includes(id)))
  if (proof && !proof.meter && !proof.stats) out.add('meter')
  // A knob its engine prints no resolved value for is proven by argv and its meter: its ledger step is skipped.
  if (proof?.noResolvedLine !== undefined && (proof.meter || proof.stats)) out.add('ledger')
  // The one-flag law's step skips itself only where there is no earlier record to compare with (a
  // first arm, no --baseline-report nor --vault): nothing was compared, and nothing is claimed.
  out.add('one-flag')
  return out
}

/**
 * The steps a run skips because its options say so: `--no-dropin-check`, or a runtime with no
 * systemd unit for the engine (a pod; a docker container or a bare process without `--unit`),
 * skips `dropins`; `--skip` the probes the served model cannot take. The report declares them
 * (`run.skips`) so that whoever re-derives the verdict later (merge-reports, writeback) allows
 * exactly these. Options of an older report that lacks a field declare what they did then.
 */
export function declaredSkips(options: { dropinCheck: boolean; unit?: string | null; skip?: readonly string[] }): StepId[] {
  return STEP_IDS.filter((id) => (id === 'dropins' && (!options.dropinCheck || options.unit === null)) || (options.skip ?? []).includes(id))
}

/** The skips a target's run may show and still be green: its knob's proof's and the ones its options declare. */
export function targetAllowedSkips(target: Target): ReadonlySet<StepId> {
  return allowedSkips(targetProfile(target).spec.proof, declaredSkips(target))
}

/** Why a run is not green, as data: each reader (the report, writeback, merge-reports) words it. `Id`: the command's step ids (verify's, or preflight's). */
export type NotGreenOf<Id extends string> =
  | { kind: 'error'; text: string }
  /** An operator's mistake a step found (after first contact): the run is `error`, whatever else its steps say. */
  | { kind: 'mistake'; id: Id; text: string }
  | { kind: 'no-steps' }
  | { kind: 'missing'; ids: Id[] }
  | { kind: 'twice'; ids: Id[] }
  /** A step that neither passed nor was skipped on purpose; `skip` says why a skip does not count. */
  | { kind: 'not-held'; steps: Array<{ id: Id; verdict: StepVerdict; skip?: 'not-marked' | 'not-allowed' }> }
  | { kind: 'notes'; count: number; first: string }

export type NotGreen = NotGreenOf<StepId>

export interface RunFacts {
  steps: readonly StepLike[]
  /** `allowedSkips(knob's proof, declared skips)`. */
  allowed: ReadonlySet<StepId>
  /** Errors outside any step: any of them keeps the run from green. */
  notes?: readonly string[]
  /** Why the run could not be judged at all. */
  error?: string | null
  /** The steps that must be there; default every step of the contract (a report read back from an older armproof lacks the later ones: see helpers/report/checked.ts). */
  required?: readonly StepId[]
}

/** The facts of `judgeSteps`: a command's steps, every id it must have judged, and the skips it allows. */
export interface StepsFacts<Id extends string> {
  steps: readonly (Pick<StepFields, 'verdict' | 'intendedSkip' | 'mistake'> & { id: Id })[]
  /** Every step the command must have judged, once. */
  ids: readonly Id[]
  allowed: ReadonlySet<Id>
  notes?: readonly string[]
  error?: string | null
}

/** Steps added to the contract after reports were first written: a report from before them lacks them, and is judged without them. */
export const LATER_STEPS: readonly StepId[] = ['one-flag']

/**
 * The one green rule: verify's verdict, and the verdict merge-reports and writeback derive again
 * from a report. Green only when every step of the contract is there once and passed, or was
 * skipped on purpose (marked so, and allowed for this run), with no error and no error note; a
 * missing step is never green. `error` when the run could not be judged or a step found an
 * operator's mistake (its `mistake`: what first contact refuses, found later, e.g. once the engine
 * had loaded), `red` when a step failed, else `inconclusive`.
 */
export function judgeRun(facts: RunFacts): { verdict: RunVerdict; why: NotGreen[] } {
  return judgeSteps({ ...facts, ids: facts.required ?? STEP_IDS })
}

/** The green rule of `judgeRun` over any command's steps (verify's; preflight's "ready"). */
export function judgeSteps<Id extends string>(facts: StepsFacts<Id>): { verdict: RunVerdict; why: NotGreenOf<Id>[] } {
  type Why = NotGreenOf<Id>
  const why: Why[] = []
  if (facts.error !== undefined && facts.error !== null) why.push({ kind: 'error', text: facts.error })
  for (const s of facts.steps) if (s.mistake !== undefined) why.push({ kind: 'mistake', id: s.id, text: s.mistake })
  const seen = new Map<Id, number>()
  for (const s of facts.steps) seen.set(s.id, (seen.get(s.id) ?? 0) + 1)
  const missing = facts.ids.filter((id) => !seen.has(id))
  // any id judged twice, required or not (a later step a report need not carry, carried twice)
  const twice = [...seen].filter(([, n]) => n > 1).map(([id]) => id)
  if (facts.steps.length === 0) why.push({ kind: 'no-steps' })
  else if (missing.length) why.push({ kind: 'missing', ids: missing })
  if (twice.length) why.push({ kind: 'twice', ids: twice })
  type NotHeld = Extract<Why, { kind: 'not-held' }>['steps'][number]
  const notHeld = facts.steps.flatMap((s): NotHeld[] => {
    if (s.verdict === 'passed') return []
    if (s.verdict !== 'skipped') return [{ id: s.id, verdict: s.verdict }]
    if (s.intendedSkip !== true) return [{ id: s.id, verdict: s.verdict, skip: 'not-marked' }]
    return facts.allowed.has(s.id) ? [] : [{ id: s.id, verdict: s.verdict, skip: 'not-allowed' }]
  })
  if (notHeld.length) why.push({ kind: 'not-held', steps: notHeld })
  const notes = facts.notes ?? []
  if (notes.length) why.push({ kind: 'notes', count: notes.length, first: notes[0]! })
  const verdict: RunVerdict = why.some((w) => w.kind === 'error' || w.kind === 'mistake')
    ? 'error'
    : facts.steps.some((s) => s.verdict === 'failed')
      ? 'red'
      : why.length
        ? 'inconclusive'
        : 'green'
  return { verdict, why }
}

/** The run's verdict from its steps alone (no notes, no error), by the one green rule. */
export function runVerdict(steps: readonly StepLike[], allowed: ReadonlySet<StepId>): RunVerdict {
  return judgeRun({ steps, allowed }).verdict
}

/** The verdict of a target's steps alone (no notes), by the one green rule with the skips the target declares. */
export function stepsVerdict(target: Target, steps: readonly StepLike[]): RunVerdict {
  return judgeRun({ steps, allowed: targetAllowedSkips(target) }).verdict
}

/** The failure text of one step, as vitest and the runbook print it. */
export function describeStep(r: Pick<StepResult, 'id' | 'verdict' | 'expected' | 'observed' | 'where' | 'next'>): string {
  const lines = [`${r.id} ${r.verdict}`, `  expected: ${r.expected}`, `  observed: ${r.observed}`, `  where:    ${r.where}`]
  if (r.next) lines.push(`  next:     ${r.next}`)
  return lines.join('\n')
}
