// The engine lookup (helpers/engine/find.ts) as the steps run it: with the run's target and host.
import { findEngine } from '../engine/find.ts'
import { engineQuery } from '../engine/query.ts'
import { recheckEngine, type ProcessCheck } from '../engine/recheck.ts'
import type { EngineProcess, RunContext, StepOutputs } from './context.ts'

export type { ProcessCheck } from '../engine/recheck.ts'

/** Whether the engine step argv read still serves the endpoint: the same lookup again, and its start time. */
export function recheckProcess(ctx: RunContext, seen: StepOutputs['engineProcess'] | undefined): Promise<ProcessCheck> {
  return recheckEngine(ctx.host, engineQuery(ctx.target), seen)
}

/**
 * The engine step argv read, tied to the endpoint now if it was not then: an engine still loading
 * (vLLM binds its port only after the model loads) was found by its name or its container, before
 * it listened. Once /health answered, the same lookup again: where the very pid (started at the
 * same time) now holds the base URL's listening socket, its pages are its own. Anything else
 * leaves it as argv found it (untied: a page without process_start_time_seconds stays unbound).
 */
export async function tieToEndpoint(ctx: RunContext, seen: EngineProcess | undefined): Promise<EngineProcess | undefined> {
  if (!seen || seen.listenerTied) return seen
  const now = await findEngine(ctx.host, engineQuery(ctx.target))
  if (now.kind !== 'found' || now.pid !== seen.pid || !now.listenerTied) return seen
  if (seen.startTimeSeconds !== null && now.startTimeSeconds !== seen.startTimeSeconds) return seen
  return { ...seen, listenerTied: true, foundBy: 'listener' }
}
