// No stack trace, ever: an exception no phase of a run expected (a bug in armproof, or an answer
// it did not foresee) is contained here, for a one-target run and a fleet alike. The report is
// still written: verdict `error` when no proof step was judged yet, else the steps' verdict made
// no better than inconclusive (a step that already failed stays red); one line says what
// happened and where; the exit code is the verdict's (the contract's: 2 error, 3 inconclusive, 1 red).
import type { Target } from '../config/load.ts'
import { buildReport, type Report } from '../report/json.ts'
import { redactText } from '../seams/redact.ts'
import { EXIT_CODES, type RunVerdict, type StepResult } from '../steps/verdict.ts'

/** The phases of a run, as the contained line names them. */
export type Phase = 'the configuration' | 'first contact' | "the suites' setup" | 'a proof step' | 'the report'

/** Where a run is, kept up to date by the command as it goes (what containment reports). */
export interface RunPhase {
  phase: Phase
  /** What was being done there: a URL, a file, `suites/arm.test.ts`. */
  where: string
  /** The target once its configuration is known (no report can be written before). */
  target?: Target
  startedAt: Date
  /** The steps judged so far. */
  judged(): StepResult[]
}

export function startPhase(): RunPhase {
  return { phase: 'the configuration', where: 'flags, env and .env', startedAt: new Date(), judged: () => [] }
}

/** The error's name and message on one line, the key redacted, bounded. */
export function errorLine(error: unknown, key: string | null): string {
  const e = error instanceof Error ? error : new Error(String(error))
  const text = e.name && e.name !== 'Error' && !e.message.startsWith(e.name) ? `${e.name}: ${e.message}` : e.message || e.name
  const one = redactText(text, key).replace(/\s+/g, ' ').trim()
  return one.length > 400 ? `${one.slice(0, 400)}…` : one
}

/** The one line printed for a contained failure. */
export function containedLine(what: string, phase: Pick<RunPhase, 'phase' | 'where'>, verdict: string): string {
  return `armproof: internal error in ${phase.phase} (${phase.where}): ${what}; the run is ${verdict}, not judged further; this is a bug in armproof or an answer it did not expect: rerun with the same flags and report this line`
}

/** The report of a contained run: `error` with no step judged, else the steps with the line as a note. */
export function containedReport(target: Target, steps: readonly StepResult[], startedAt: Date, line: string): Report {
  const input = { target, steps, startedAt, finishedAt: new Date() }
  return steps.length === 0
    ? buildReport({ ...input, error: line.replace(/^armproof: /, '') })
    : buildReport({ ...input, unhandled: [line.replace(/^armproof: /, '')] })
}

export interface ContainIo {
  err: { write(text: string): unknown }
  /** Writes the report and the other outputs; the lines of what could not be written. */
  write(report: Report): string[]
}

/**
 * Contains `error` thrown in `phase`: prints the one line, writes the report when the target is
 * known, and returns the exit code. Never throws.
 */
export function contain(error: unknown, phase: RunPhase, io: ContainIo): number {
  try {
    const steps = (() => {
      try {
        return phase.judged()
      } catch {
        return []
      }
    })()
    const key = phase.target?.apiKey ?? null
    const what = errorLine(error, key)
    if (!phase.target) {
      io.err.write(`${containedLine(what, phase, 'error')} (no report: the configuration did not load)\n`)
      return EXIT_CODES.error
    }
    // Before any step: error. After: what the steps showed, never better than inconclusive.
    const verdict: RunVerdict = steps.length === 0 ? 'error' : steps.some((s) => s.verdict === 'failed') ? 'red' : 'inconclusive'
    let line = containedLine(what, phase, verdict)
    let report: Report | undefined
    try {
      report = containedReport(phase.target, steps, phase.startedAt, line)
    } catch {
      // The report itself is what failed to build (a step's evidence it cannot hold): the run is then error, without its steps.
      line = `${containedLine(what, phase, 'error')} (the report could not hold the ${steps.length} step(s) judged)`
      try {
        report = containedReport(phase.target, [], phase.startedAt, line)
      } catch {
        report = undefined
      }
    }
    io.err.write(`${line}\n`)
    if (!report) {
      io.err.write('armproof: the report could not be built either; nothing was written\n')
      return EXIT_CODES.error
    }
    for (const unwritten of io.write(report)) io.err.write(`armproof: ${unwritten}\n`)
    return report.exitCode
  } catch {
    try {
      io.err.write('armproof: internal error, and another while reporting it; nothing was written\n')
    } catch {
      // nothing left to tell it with
    }
    return EXIT_CODES.error
  }
}
