// A step the run skips on purpose, by `--skip` (a probe the served model cannot take): its judge is
// never called, nothing is sent, and the step says why, skipped and never passed. The run declares
// it (./verdict.ts `declaredSkips`), so the green rule allows exactly it.
import { SKIPPABLE, type SkippableProbe } from '../config/skips.ts'
import { endpointUrl, type RunContext } from './context.ts'
import { stepSpec, type StepId } from './registry.ts'
import type { JudgementFields } from './verdict.ts'

export function skippedOnPurpose(ctx: RunContext, id: StepId): JudgementFields | undefined {
  if (!(ctx.target.skip as readonly string[]).includes(id)) return undefined
  const { why, next } = SKIPPABLE[id as SkippableProbe]
  return {
    verdict: 'skipped',
    intendedSkip: true,
    expected: stepSpec(id).title,
    observed: `not run: --skip ${id} was given: ${why}`,
    where: endpointUrl(ctx, '/v1/chat/completions'),
    next,
  }
}
