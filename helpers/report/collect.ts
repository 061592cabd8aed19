// vitest's finished test cases → the nine StepResults of the contract, in STEP_IDS order. A step
// that crashed or never ran still gets a result (inconclusive), so a report is never short of a
// step and a missing step is never mistaken for a pass.
import { replayMissOf } from '../seams/replay.ts'
import { STEP_IDS, STEP_TITLES } from '../steps/registry.ts'
import { stepResult, type StepId, type StepResult } from '../steps/verdict.ts'

/** The part of a vitest error armproof reads (SerializedError / TestError fit). */
export interface ErrorLike {
  message: string
  name?: string | undefined
  stack?: string | undefined
}

/** The members of vitest's `TestCase` that the report reads; a real TestCase fits. */
export interface CaseLike {
  readonly name: string
  meta(): { armproof?: StepResult | undefined; armproofStep?: StepId | undefined }
  result(): { readonly state: string; readonly errors?: ReadonlyArray<ErrorLike> | undefined }
  /** `startTime`: when it began, in ms since the epoch (vitest's Date.now()). */
  diagnostic?(): { readonly duration: number; readonly startTime?: number } | undefined
}

/** The members of vitest's `TestModule` that the report reads. */
export interface ModuleLike {
  readonly children: { allTests(): Iterable<CaseLike>; allSuites?(): Iterable<{ errors(): ReadonlyArray<ErrorLike> }> }
  errors(): ReadonlyArray<ErrorLike>
}

export interface Collected {
  steps: StepResult[]
  /** Errors outside any step (unhandled, or a suite hook's): each makes the run non-green. */
  unhandled: string[]
  /**
   * The recording that could not be written when the run closed (a FixturesUnwritten error of the
   * suite's last hook, helpers/seams/fixture-write.ts): not the engine's doing nor the proof's, so
   * it leaves the verdict as judged; pnpm verify says it and exits 4.
   */
  unwritten: string[]
}

/** The error the fixture writer throws, known by its name as vitest hands errors over. */
const FIXTURES_UNWRITTEN = 'FixturesUnwritten'

export const CRASH_NEXT = 'this is a bug in armproof or an unexpected answer; rerun with the same flags and report the output'

/** Runbook titles for steps that produced no result of their own (the suite names them otherwise). */
export { STEP_TITLES } from '../steps/registry.ts'

function isStepId(id: unknown): id is StepId {
  return typeof id === 'string' && (STEP_IDS as readonly string[]).includes(id)
}

function errorText(e: ErrorLike): string {
  return e.name && e.name !== 'Error' && !e.message.startsWith(e.name) ? `${e.name}: ${e.message}` : e.message
}

/** The result of a step whose judge threw (a bug or an unexpected answer), built from the vitest error. */
export function crashedStep(id: StepId, testCase: CaseLike): StepResult {
  const first = testCase.result().errors?.[0]
  const miss = first ? replayMissOf(first) : null
  if (first && miss) {
    // Not a bug: the recording lacks what this run asked for (an exchange, a clock reading, a choice).
    return stepResult(
      id,
      testCase.name || STEP_TITLES[id],
      {
        verdict: 'inconclusive',
        expected: `the recording holds every exchange the ${id} step asks for`,
        observed: `replay miss: ${miss.missing}`,
        where: 'the fixtures (--fixtures)',
        next: miss.reRecord ? `re-record: ${miss.reRecord}` : 're-record the run with --mode record',
        evidence: { error: { name: 'ReplayMiss', message: first.message, stack: null } },
      },
      Math.round(testCase.diagnostic?.()?.duration ?? 0),
    )
  }
  return stepResult(
    id,
    testCase.name || STEP_TITLES[id],
    {
      verdict: 'inconclusive',
      expected: `the ${id} step reaches a verdict`,
      observed: `armproof error: ${first?.message ?? 'the test failed without an error message'}`,
      where: `test "${testCase.name}"`,
      next: CRASH_NEXT,
      evidence: first ? { error: { name: first.name ?? 'Error', message: first.message, stack: first.stack ?? null } } : {},
    },
    Math.round(testCase.diagnostic?.()?.duration ?? 0),
  )
}

/** The step one finished test case stands for, or undefined for a test that is not a proof step. */
export function stepFromTestCase(testCase: CaseLike): StepResult | undefined {
  const meta = testCase.meta()
  const result = testCase.result()
  const broke = result.state === 'failed' || (result.errors?.length ?? 0) > 0
  if (meta.armproof && isStepId(meta.armproof.id)) {
    // A step that judged itself passed but whose test still failed (a hook, a stray assertion) is not a pass.
    return meta.armproof.verdict === 'passed' && broke ? crashedStep(meta.armproof.id, testCase) : meta.armproof
  }
  if (!isStepId(meta.armproofStep)) return undefined
  if (broke) return crashedStep(meta.armproofStep, testCase)
  return undefined
}

function notRun(id: StepId, reason: string | undefined): StepResult {
  return {
    id,
    title: STEP_TITLES[id],
    verdict: 'inconclusive',
    expected: `the ${id} step runs`,
    observed: reason ? `not run: ${reason}` : 'not run',
    where: 'suites/arm.test.ts',
    next: reason ? CRASH_NEXT : 'an earlier failure or an interrupted run stopped it; rerun with the same flags',
    evidence: {},
    durationMs: 0,
  }
}

/**
 * The nine steps in STEP_IDS order, plus the run's notes. `runErrors` (a module or suite hook that
 * threw) explain steps that never ran; with `unhandledErrors` they are returned as notes.
 */
export function stepsFromTestCases(
  cases: Iterable<CaseLike>,
  unhandledErrors: ReadonlyArray<ErrorLike> = [],
  runErrors: ReadonlyArray<ErrorLike> = [],
): Collected {
  const found = new Map<StepId, StepResult>()
  for (const c of cases) {
    const step = stepFromTestCase(c)
    if (step) found.set(step.id, step)
  }
  const unwritten = runErrors.filter((e) => e.name === FIXTURES_UNWRITTEN).map((e) => e.message)
  const failed = runErrors.filter((e) => e.name !== FIXTURES_UNWRITTEN)
  const reason = failed[0] ? errorText(failed[0]) : undefined
  const steps = STEP_IDS.map((id) => found.get(id) ?? notRun(id, reason))
  const unhandled = [
    ...unhandledErrors.map((e) => `unhandled error: ${errorText(e)}`),
    ...failed.map((e) => `suite error: ${errorText(e)}`),
  ]
  return { steps, unhandled, unwritten }
}

/** Every test case of the finished modules. */
export function testCasesOf(modules: ReadonlyArray<ModuleLike>): CaseLike[] {
  return modules.flatMap((m) => [...m.children.allTests()])
}

/** Errors of the modules and their suites (a hook or the import threw), outside any test. */
export function runErrorsOf(modules: ReadonlyArray<ModuleLike>): ErrorLike[] {
  return modules.flatMap((m) => [...m.errors(), ...[...(m.children.allSuites?.() ?? [])].flatMap((s) => s.errors())])
}
