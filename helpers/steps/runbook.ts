// Glue between the vitest suites and the step judges: one RunContext per run, and `prove`,
// which times a step, stores its result on the test (task.meta) and fails the test unless the
// step passed. Suites call only this and the step functions.
import { inject, type TestContext } from 'vitest'
import type { Target } from '../config/load.ts'
import { scrub } from '../seams/redact.ts'
import { openSeams } from '../seams/open.ts'
import { createContext, type RunContext } from './context.ts'
import { describeStep, type Judgement, type StepId, type StepResult } from './verdict.ts'

declare module 'vitest' {
  interface ProvidedContext {
    'armproof:target': Target
  }
  interface TaskMeta {
    armproof?: StepResult
    armproofStep?: StepId
  }
}

export class StepNotHeld extends Error {
  readonly code = 'ARMPROOF_STEP_NOT_HELD'
}

const PROGRESS_EVERY_MS = 5000

/** Opens the run for this suite file: the validated target and the seams for its mode. */
export async function openRun(): Promise<RunContext & { close(): Promise<void> }> {
  const target = inject('armproof:target')
  const seams = await openSeams(target)
  const ctx = createContext({ target, ...seams })
  const close = async () => {
    const model = ctx.facts.model ? await ctx.facts.model.catch(() => null) : null
    await seams.close({ model: target.model ?? model })
  }
  return Object.assign(ctx, { close })
}

/**
 * Judges one step: times it and gives its result, the API key scrubbed, with the runbook title.
 * The suite (`prove`) and the in-process runner of the tests (test/support/prove-in-process.ts) both
 * call this, so a step's result is the same whoever runs it.
 */
export async function judgeStep(ctx: RunContext, id: StepId, title: string, judge: (ctx: RunContext) => Promise<Judgement>): Promise<StepResult> {
  const started = performance.now()
  const judgement = await judge(ctx)
  return scrub({ id, title, ...judgement, durationMs: Math.round(performance.now() - started) }, ctx.target.apiKey) as StepResult
}

/** Runs one proof step inside its vitest test. */
export async function prove(testContext: TestContext, run: RunContext, id: StepId, judge: (ctx: RunContext) => Promise<Judgement>): Promise<void> {
  testContext.task.meta.armproofStep = id
  let lastProgress = 0
  const ctx: RunContext = {
    ...run,
    progress: (message) => {
      const now = Date.now()
      if (now - lastProgress < PROGRESS_EVERY_MS) return
      lastProgress = now
      void testContext.annotate(scrub(message, run.target.apiKey) as string, 'armproof:progress')
    },
  }
  const result = await judgeStep(ctx, id, testContext.task.name, judge)
  testContext.task.meta.armproof = result
  // A skip carries its reason (e.g. --no-dropin-check); the report says whether it was on purpose.
  if (result.verdict === 'skipped') testContext.skip(result.observed)
  if (result.verdict !== 'passed') throw new StepNotHeld(describeStep(result))
}
