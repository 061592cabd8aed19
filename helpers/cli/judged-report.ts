// One target's report from the steps its suite judged, as both `pnpm verify` paths build it (one
// target, helpers/cli/verify.ts; each target of a fleet, helpers/cli/fleet.ts): the build's default
// from the help step, the truth table, and for a replay the recording it re-judged. A recorded
// exchange the run asked for and did not find means the fixtures do not hold this run, and a
// replay whose verdicts differ from the recorded ones is not the recorded run: either is a note
// that keeps the report from green (inconclusive; exit 2 is never given after a step was judged).
import { buildReport, type Report } from '../report/json.ts'
import { truthTable } from '../report/truth.ts'
import type { Target } from '../config/load.ts'
import { recordingRef, verdictMismatch } from './replay-verdict.ts'
import type { StepResult } from '../steps/verdict.ts'

export interface JudgedReport {
  report: Report
  /** The replay's notes (a missing exchange, or verdicts unlike the recording's), also in the report: the one-target run prints them. */
  notes: string[]
}

export function judgedReport(target: Target, steps: StepResult[], unhandled: string[], startedAt: Date, finishedAt: Date): JudgedReport {
  const helpDefault = steps.find((s) => s.id === 'help')?.buildDefault
  const replayed = target.mode === 'replay' ? recordingRef(target.fixtures) : null
  const miss = steps.map((s) => s.evidence.error).find((e) => e?.name === 'ReplayMiss')
  const notes = miss ? [`the recording does not hold this run: ${miss.message ?? 'a recorded exchange is missing'}`] : []
  const input = {
    target,
    steps,
    startedAt,
    finishedAt,
    unhandled: [...unhandled, ...notes],
    truth: truthTable(target, steps),
    ...(typeof helpDefault === 'string' ? { defaultFromHelp: helpDefault } : {}),
    ...(replayed ? { recording: replayed.ref } : {}),
  }
  const report = buildReport(input)
  const mismatch = replayed && !miss ? verdictMismatch(replayed.meta, report.verdict, report.steps) : null
  if (!mismatch) return { report, notes }
  return { report: buildReport({ ...input, unhandled: [...input.unhandled, mismatch] }), notes: [...notes, mismatch] }
}
