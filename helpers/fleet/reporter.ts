// The vitest reporter of a fleet run: live progress per target (each step's line as it finishes,
// prefixed by the target; a line when a target is done) and, at the end, each target's nine
// steps for the CLI. It neither writes files nor decides the exit code.
import type { Reporter } from 'vitest/node'
import type { Target } from '../config/load.ts'
import { scrubAll } from '../seams/redact.ts'
import { STEP_IDS, stepsVerdict, type StepResult } from '../steps/verdict.ts'
import { runErrorsOf, stepFromTestCase, stepsFromTestCases, type CaseLike, type ErrorLike } from '../report/collect.ts'
import { header, stepLine } from '../report/terminal.ts'
import { oneLine } from '../report/_summary.ts'

interface SuiteLike {
  readonly name: string
  readonly parent: { readonly type: string }
  meta(): { armproofTarget?: number | undefined }
  errors(): ReadonlyArray<ErrorLike>
  readonly children: { allTests(): Iterable<CaseLike>; allSuites(): Iterable<{ errors(): ReadonlyArray<ErrorLike> }> }
}

interface ModuleLike {
  errors(): ReadonlyArray<ErrorLike>
  readonly children: { suites(): Iterable<SuiteLike> }
}

export interface FleetReporterOptions {
  targets: ReadonlyArray<{ label: string; target: Target }>
  out: { write(text: string): unknown }
  err: { write(text: string): unknown }
  /** A terminal (not CI): progress lines of long waits are shown too. */
  live: boolean
  /** ANSI colour on `out` (helpers/cli/color.ts decides). */
  color?: boolean
  width?: number
}

export interface TargetOutcome {
  steps: StepResult[]
  notes: string[]
  /** Its recording, when it could not be written as its suite closed (record mode): the verdict stands. */
  unwritten?: string[]
  /** When the target's suite began (before it waited for its --concurrency slot) and ended; null when never reported. */
  startedAt: Date | null
  finishedAt: Date | null
}

export class FleetReporter implements Reporter {
  readonly #o: FleetReporterOptions
  readonly #width: number
  #outcomes: TargetOutcome[] = []
  readonly #done = new Map<number, Date>()
  readonly #started = new Map<number, Date>()
  /** The steps judged so far, per target, as they arrive (what an interrupt keeps). */
  readonly #judged = new Map<number, StepResult[]>()
  /** A finished target's own suite errors (they keep it from green, as at the run's end). */
  readonly #doneNotes = new Map<number, string[]>()

  constructor(options: FleetReporterOptions) {
    this.#o = options
    this.#width = Math.max(6, ...options.targets.map((t) => [...t.label].length))
  }

  #key(i: number): string {
    return this.#o.targets[i]!.label.padEnd(this.#width)
  }

  /** Every target's key: a fleet's text is scrubbed of all of them (one target may quote another's). */
  #keys(): string[] {
    return [...new Set(this.#o.targets.map((t) => t.target.apiKey).filter((k): k is string => k !== null))]
  }

  #clean<T>(value: T): T {
    return scrubAll(value, this.#keys()) as T
  }

  onTestRunStart(): void {
    for (const [i, t] of this.#o.targets.entries()) this.#o.out.write(`${this.#key(i)} ${header(t.target, { color: this.#o.color })}\n`)
  }

  onTestCaseAnnotate(testCase: CaseLike, annotation: { type: string; message: string }): void {
    if (!this.#o.live || annotation.type !== 'armproof:progress') return
    const i = (testCase.meta() as { armproofTarget?: number }).armproofTarget
    if (i === undefined) return
    this.#o.err.write(`${this.#key(i)}   … ${this.#clean(oneLine(annotation.message))}\n`)
  }

  onTestCaseResult(testCase: CaseLike): void {
    const i = (testCase.meta() as { armproofTarget?: number }).armproofTarget
    const step = stepFromTestCase(testCase)
    if (i === undefined || !step) return
    const clean = this.#clean(step)
    this.#judged.set(i, [...(this.#judged.get(i) ?? []), clean])
    this.#o.out.write(
      `${this.#key(i)} ${stepLine(clean, STEP_IDS.indexOf(clean.id), { width: (this.#o.width ?? 160) - this.#width - 1, color: this.#o.color })}\n`,
    )
  }

  /**
   * When a target's steps ended: the end of its last step as vitest timed it, not when this event
   * came (vitest hands the reporter its results in batches: under load two targets' results came
   * in one, one after the other, with the same time); never before the target began.
   */
  #endOf(i: number, suite: SuiteLike): Date {
    let end = Number.NEGATIVE_INFINITY
    for (const t of suite.children.allTests()) {
      const d = t.diagnostic?.()
      if (d?.startTime !== undefined) end = Math.max(end, d.startTime + d.duration)
    }
    const began = this.#started.get(i)?.getTime() ?? Number.NEGATIVE_INFINITY
    return Number.isFinite(end) ? new Date(Math.round(Math.max(end, began))) : new Date()
  }

  onTestSuiteReady(suite: SuiteLike): void {
    const i = suite.meta().armproofTarget
    if (i !== undefined && suite.parent.type === 'module' && !this.#started.has(i)) this.#started.set(i, new Date())
  }

  onTestSuiteResult(suite: SuiteLike): void {
    const i = suite.meta().armproofTarget
    if (i === undefined || suite.parent.type !== 'module' || this.#done.has(i)) return
    this.#done.set(i, this.#endOf(i, suite))
    const { steps, unhandled } = this.#collect(suite)
    this.#doneNotes.set(
      i,
      unhandled.map((n) => this.#clean(n)),
    )
    const verdict = stepsVerdict(this.#o.targets[i]!.target, steps)
    const held = steps.filter((s) => s.verdict === 'passed').length
    this.#o.out.write(`${this.#key(i)} done: ${verdict.toUpperCase()} (${held} of ${steps.length} steps held)\n`)
  }

  /** Test output is not part of the runbook. */
  onUserConsoleLog(): void {}

  #collect(
    suite: SuiteLike | undefined,
    extra: readonly ErrorLike[] = [],
  ): { steps: StepResult[]; unhandled: string[]; unwritten: string[] } {
    const cases = suite ? [...suite.children.allTests()] : []
    const errors = suite ? [...suite.errors(), ...[...suite.children.allSuites()].flatMap((s) => s.errors())] : []
    return stepsFromTestCases(cases, [], [...extra, ...errors])
  }

  onTestRunEnd(testModules: ReadonlyArray<ModuleLike>, unhandledErrors: ReadonlyArray<ErrorLike>, reason?: string): void {
    const suites = new Map<number, SuiteLike>()
    for (const m of testModules)
      for (const s of m.children.suites()) if (s.meta().armproofTarget !== undefined) suites.set(s.meta().armproofTarget!, s)
    const moduleErrors = runErrorsOf(testModules.map((m) => ({ errors: () => m.errors(), children: { allTests: () => [] } })))
    // An error outside every target's tests may be any target's: it keeps every target from green.
    const shared = unhandledErrors.map((e) => `unhandled error: ${e.message}`)
    if (reason === 'interrupted') shared.push('the run was interrupted before it finished')
    this.#outcomes = this.#o.targets.map((_, i) => {
      const { steps, unhandled, unwritten } = this.#collect(suites.get(i), suites.has(i) ? [] : moduleErrors)
      return {
        steps: steps.map((s) => this.#clean(s)),
        notes: [...unhandled, ...shared].map((n) => this.#clean(n)),
        unwritten: unwritten.map((n) => this.#clean(n)),
        startedAt: this.#started.get(i) ?? null,
        finishedAt: this.#done.get(i) ?? null,
      }
    })
  }

  /** Mid-run (an interrupt): each target's steps judged so far, and when it began and ended (null: not yet). */
  partialOutcomes(): TargetOutcome[] {
    return this.#o.targets.map((_, i) => ({
      steps: [...(this.#judged.get(i) ?? [])].sort((a, b) => STEP_IDS.indexOf(a.id) - STEP_IDS.indexOf(b.id)),
      notes: [...(this.#doneNotes.get(i) ?? [])],
      startedAt: this.#started.get(i) ?? null,
      finishedAt: this.#done.get(i) ?? null,
    }))
  }

  /** Each target's steps and notes, in the plan's order; empty until the run has ended. */
  outcomes(): TargetOutcome[] {
    return [...this.#outcomes]
  }
}
