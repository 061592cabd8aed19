// The vitest reporter of `pnpm verify`: prints the runbook as the steps finish and keeps their
// results for the CLI. It neither writes files nor decides the exit code.
import type { Reporter } from 'vitest/node'
import type { Target } from '../config/load.ts'
import { redactText, scrub } from '../seams/redact.ts'
import { STEP_IDS, type StepId, type StepResult } from '../steps/verdict.ts'
import {
  runErrorsOf,
  stepFromTestCase,
  stepsFromTestCases,
  testCasesOf,
  type CaseLike,
  type ErrorLike,
  type ModuleLike,
} from './collect.ts'
import { header, stepDetail, stepLine } from './terminal.ts'
import { LiveLine } from './live-line.ts'

export interface Output {
  write(text: string): unknown
  /** A terminal's width (the progress line on `err` is cut to it). */
  columns?: number
}

export interface RunbookReporterOptions {
  target: Target
  out: Output
  err: Output
  /** ANSI colour on `out` and `err`. */
  color: boolean
  /** Show progress of long waits as one rewritten line on `err` (a terminal, not CI). */
  live: boolean
  /** Terminal width for step lines; 120 when unknown; Infinity (never cut) in a log. */
  width?: number
}

/** Without a terminal, a progress line is printed at most this often (so one shows at least every 15 s during a wait). */
export const LOG_PROGRESS_EVERY_MS = 9000

export const PROGRESS_TYPE = 'armproof:progress'

export class RunbookReporter implements Reporter {
  readonly #options: RunbookReporterOptions
  readonly #printed = new Set<StepId>()
  #headerShown = false
  /** The terminal's progress line (live runs only): it ticks every second between two reports. */
  readonly #live: LiveLine | undefined
  #steps: StepResult[] = []
  #partial: StepResult[] = []
  #unhandled: string[] = []
  /** The steps a test judged (its own verdict, or its crash): not those that never ran. */
  #judged = new Set<StepId>()
  #unwritten: string[] = []
  #lastLogProgress = 0

  constructor(options: RunbookReporterOptions) {
    this.#options = options
    this.#live = options.live ? new LiveLine({ write: (t) => options.err.write(t), width: options.err.columns ?? 120 }) : undefined
  }

  onTestRunStart(): void {
    if (this.#headerShown) return
    this.#headerShown = true
    this.#options.out.write(`${header(this.#options.target, { color: this.#options.color })}\n`)
  }

  onTestCaseAnnotate(_testCase: unknown, annotation: { type: string; message: string }): void {
    if (annotation.type !== PROGRESS_TYPE) return
    if (!this.#options.live) {
      // A log (CI, a pipe): plain lines, never rewritten, a few seconds apart.
      const now = Date.now()
      if (now - this.#lastLogProgress < LOG_PROGRESS_EVERY_MS) return
      this.#lastLogProgress = now
      this.#options.err.write(`  … ${redactText(annotation.message, this.#options.target.apiKey).replace(/\s+/g, ' ')}\n`)
      return
    }
    this.#live?.show(redactText(annotation.message, this.#options.target.apiKey))
  }

  onTestCaseResult(testCase: CaseLike): void {
    const step = stepFromTestCase(testCase)
    if (!step) return
    const clean = this.#clean(step)
    this.#judged.add(clean.id)
    this.#partial = [...this.#partial.filter((s) => s.id !== clean.id), clean]
    this.#print(clean)
  }

  /** Test output is not part of the runbook. */
  onUserConsoleLog(): void {}

  onTestRunEnd(testModules: ReadonlyArray<ModuleLike>, unhandledErrors: ReadonlyArray<ErrorLike>, reason?: string): void {
    this.clearProgress()
    const cases = testCasesOf(testModules)
    for (const c of cases) {
      const step = stepFromTestCase(c)
      if (step) this.#judged.add(step.id)
    }
    const { steps, unhandled, unwritten } = stepsFromTestCases(cases, unhandledErrors, runErrorsOf(testModules))
    this.#unwritten = unwritten.map((n) => redactText(n, this.#options.target.apiKey))
    if (reason === 'interrupted') unhandled.push('the run was interrupted before it finished')
    // A crashed step carries the thrown error's text, which no judge scrubbed: scrub it here.
    this.#steps = steps.map((s) => this.#clean(s))
    this.#unhandled = unhandled.map((n) => redactText(n, this.#options.target.apiKey))
    for (const step of this.#steps) if (!this.#printed.has(step.id)) this.#print(step)
    for (const note of this.#unhandled) this.#options.out.write(`  ! ${note}\n`)
  }

  /** The nine steps in STEP_IDS order; empty until the run has ended. */
  steps(): StepResult[] {
    return [...this.#steps]
  }

  /** The steps judged so far, in STEP_IDS order: what an interrupted run keeps. */
  partialSteps(): StepResult[] {
    const done = this.#steps.length > 0 ? this.#steps : this.#partial
    return STEP_IDS.flatMap((id) => done.filter((s) => s.id === id))
  }

  /** The steps judged so far, in STEP_IDS order (a step that never ran is not among them). */
  judged(): StepResult[] {
    return this.partialSteps().filter((s) => this.#judged.has(s.id))
  }

  /** Errors outside any step; any of them keeps the run from green. */
  unhandled(): string[] {
    return [...this.#unhandled]
  }

  /** What of the recording could not be written when the run closed (record mode); the verdict stands. */
  unwritten(): string[] {
    return [...this.#unwritten]
  }

  #clean(step: StepResult): StepResult {
    return scrub(step, this.#options.target.apiKey) as StepResult
  }

  /** Erases the progress line and stops its ticking (before any other line, and when the run stops). */
  clearProgress(): void {
    this.#live?.clear()
  }

  #print(step: StepResult): void {
    this.clearProgress()
    this.#printed.add(step.id)
    const { color, width } = this.#options
    const line = stepLine(step, STEP_IDS.indexOf(step.id), { color, ...(width ? { width } : {}) })
    const detail = stepDetail(step, { color })
    this.#options.out.write(`${line}\n${detail ? `${detail}\n` : ''}`)
  }
}
