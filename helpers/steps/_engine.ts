// The engine lookup (helpers/engine/find.ts) as the steps run it: with the run's target and host.
import { engineQuery } from '../engine/query.ts'
import { recheckEngine, type ProcessCheck } from '../engine/recheck.ts'
import type { RunContext, StepOutputs } from './context.ts'

export type { ProcessCheck } from '../engine/recheck.ts'

/** Whether the engine step argv read still serves the endpoint: the same lookup again, and its start time. */
export function recheckProcess(ctx: RunContext, seen: StepOutputs['engineProcess'] | undefined): Promise<ProcessCheck> {
  return recheckEngine(ctx.host, engineQuery(ctx.target), seen)
}
