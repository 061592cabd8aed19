// An operator's mistake found by a proof step, not by first contact: verify runs the moment the
// deploy returns, so first contact often meets an engine still loading (its port refused, /health
// 503), lets the run go on, and the mistake (https:// on a plain-HTTP port, a gateway's 401 on
// /metrics, a --model the endpoint does not list, …) first shows at health, a probe or the meter.
// It is judged by first contact's own rule (./first-contact/answers.ts) and said in its words:
// the step is not judged (inconclusive, its `mistake` the one line of cause and fix), the steps
// after it are not judged (./judges.ts), and the run is `error`, exit 2 (./verdict.ts judgeRun).
import type { FirstContactProblem } from './first-contact/answers.ts'
import type { StepId } from './registry.ts'
import type { JudgementFields, StepFields } from './verdict.ts'

/** A step's judgement for a mistake it found: `observed` is what it saw, `mistake` and `next` first contact's line. */
export function mistaken<E>(
  problem: FirstContactProblem,
  seen: { expected: string; observed: string; evidence: E },
): JudgementFields & { evidence: E } {
  return {
    verdict: 'inconclusive',
    expected: seen.expected,
    observed: `${seen.observed} (an operator's mistake, not the engine's: not judged)`,
    where: problem.where,
    next: problem.message,
    mistake: problem.message,
    evidence: seen.evidence,
  }
}

/** The run's `error` for the first step that found a mistake: the step named, then the one line. */
export function mistakeError(step: Pick<StepFields, 'mistake'> & { id: StepId }): string {
  return `step ${step.id}: ${step.mistake}`
}

/** The first step of `steps` that found an operator's mistake. */
export function firstMistake<S extends Pick<StepFields, 'mistake'> & { id: StepId }>(steps: readonly S[]): S | undefined {
  return steps.find((s) => s.mistake !== undefined)
}

/** The line verify prints on stderr for it, as first contact prints its own: `armproof: <line> [step <id>: <where>; …]`. */
export function mistakeLine(step: Pick<StepFields, 'mistake' | 'where'> & { id: StepId }): string {
  return `armproof: ${step.mistake} [step ${step.id}: ${step.where}; found after first contact; the steps after it were not judged]`
}

/** A step after the one that found a mistake: not judged (the run ends there, as after first contact's refusal). */
export function afterMistake(id: StepId, found: Pick<StepFields, 'mistake' | 'where'> & { id: StepId }): JudgementFields {
  return {
    verdict: 'skipped',
    expected: `${id} judged once the operator's mistake is fixed`,
    observed: `not judged: step ${found.id} found an operator's mistake (${found.mistake})`,
    where: found.where,
    next: found.mistake!,
  }
}
