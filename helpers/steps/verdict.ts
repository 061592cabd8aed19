// A proof step's outcome as data: the report, the JUnit file and the exit code all come from it.

import type { StepEvidence } from './evidence.ts'
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
export function stepResult<Id extends StepId>(id: Id, title: string, judgement: JudgementFields & { evidence: StepEvidence<Id> }, durationMs: number): StepResult<Id> {
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

/**
 * The run's verdict from its steps. Green only when every step of the contract is present and
 * passed, or skipped on purpose; a missing step is never green.
 */
export function runVerdict(steps: readonly StepResult[]): RunVerdict {
  if (steps.some((s) => s.verdict === 'failed')) return 'red'
  const byId = new Map(steps.map((s) => [s.id, s]))
  const complete = STEP_IDS.every((id) => byId.has(id))
  const allHeld = steps.every((s) => s.verdict === 'passed' || (s.verdict === 'skipped' && s.intendedSkip === true))
  return complete && allHeld ? 'green' : 'inconclusive'
}

/** The failure text of one step, as vitest and the runbook print it. */
export function describeStep(r: Pick<StepResult, 'id' | 'verdict' | 'expected' | 'observed' | 'where' | 'next'>): string {
  const lines = [
    `${r.id} ${r.verdict}`,
    `  expected: ${r.expected}`,
    `  observed: ${r.observed}`,
    `  where:    ${r.where}`,
  ]
  if (r.next) lines.push(`  next:     ${r.next}`)
  return lines.join('\n')
}
