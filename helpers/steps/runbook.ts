// Glue between the vitest suites and the step judges: one run per suite file, and `prove`, which
// judges a step (./judges.ts `judgeStep`), stores its result on the test (task.meta) and fails the
// test unless the step passed.
import { inject, type TestContext } from 'vitest'
import type { Target } from '../config/load.ts'
import { scrub } from '../seams/redact.ts'
import { formatDuration } from '../config/duration.ts'
import { openSeams } from '../seams/open.ts'
import { plannedReads } from './host-reads.ts'
import { createContext, type RunContext } from './context.ts'
import { judgeStep, modelOf, proofRun, type ProofRun } from './judges.ts'
import { STEP_IDS, describeStep, stepsVerdict, type StepId, type StepResult } from './verdict.ts'

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

/** What one step may wait for at most, for the heartbeat line: its own budget. */
function stepBudgetMs(run: RunContext, id: StepId): number {
  if (id === 'health') return run.target.healthBudgetMs
  if (id === 'meter') return run.target.meterWindowMs
  if (id.startsWith('probe.')) return run.target.probeTimeoutMs
  return run.target.hostTimeoutMs
}

/** A target's run as the suite holds it: the steps judged so far, and the close that ends its I/O. */
export type OpenRun = ProofRun & { readonly judged: StepResult[]; close(): Promise<void> }

/** Opens the run of one target (by default the suite file's): the validated target and the seams for its mode. */
export async function openRun(target: Target = inject('armproof:target')): Promise<OpenRun> {
  let seams: Awaited<ReturnType<typeof openSeams>>
  try {
    seams = await openSeams(target, { ahead: plannedReads(target) })
  } catch (error) {
    // The suites' setup failed (a --ca-file gone since first contact, unreadable fixtures): said in
    // one line by whoever reports it, never as a stack trace.
    if (error instanceof Error) error.stack = `${error.name}: ${error.message}`
    throw error
  }
  const run = proofRun(createContext({ target, ...seams }))
  const judged: StepResult[] = []
  const close = async () => {
    // A step with no result of its own (it crashed) is inconclusive, as the reporter says it.
    const steps = Object.fromEntries(STEP_IDS.map((id) => [id, judged.find((s) => s.id === id)?.verdict ?? 'inconclusive']))
    await seams.close({ model: await modelOf(run), judged: { verdict: stepsVerdict(target, judged), steps } })
  }
  return { ...run, judged, close }
}

/** Runs one proof step inside its vitest test. */
export async function prove(testContext: TestContext, run: ProofRun & { readonly judged?: StepResult[] }, id: StepId): Promise<void> {
  testContext.task.meta.armproofStep = id
  let lastProgress = 0
  const ctx: RunContext = {
    ...run.ctx,
    progress: (message) => {
      const now = Date.now()
      if (now - lastProgress < PROGRESS_EVERY_MS) return
      lastProgress = now
      void testContext.annotate(scrub(message, run.ctx.target.apiKey) as string, 'armproof:progress')
    },
  }
  const started = performance.now()
  // A heartbeat during any wait: a step that says nothing for PROGRESS_EVERY_MS (a probe waiting
  // on one reply, a slow host command) is still shown as waiting, with how long of what budget.
  // Real time, never the run's clock: a replay's clock readings stay the recording's.
  const heartbeat = setInterval(() => {
    if (Date.now() - lastProgress < PROGRESS_EVERY_MS) return
    const waited = performance.now() - started
    ctx.progress(`${id}: waiting · ${formatDuration(waited)} of up to ${formatDuration(stepBudgetMs(run.ctx, id))}`)
  }, PROGRESS_EVERY_MS)
  heartbeat.unref()
  let result: StepResult
  try {
    result = await judgeStep(run, id, testContext.task.name, ctx)
  } finally {
    clearInterval(heartbeat)
  }
  testContext.task.meta.armproof = result
  run.judged?.push(result)
  // A skip carries its reason (e.g. --no-dropin-check); the report says whether it was on purpose.
  if (result.verdict === 'skipped') testContext.skip(result.observed)
  if (result.verdict !== 'passed') throw new StepNotHeld(describeStep(result))
}
