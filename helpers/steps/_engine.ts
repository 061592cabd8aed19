// After the meter's watch: whether the process step `argv` read still runs, alone. The meter asks
// it where its conclusion depends on it (a rise, a counter above zero before the run, a flat
// rollback, a restart); its ladder (./meter/ladder.ts) reads the answer. The engine lookup of
// step argv owns this check (its logic is the host side's; the meter only calls it).
import { quote } from '../config/shell.ts'
import type { RunContext, StepOutputs } from './context.ts'
import { hostTrouble, tail, whereHost } from './_host.ts'

/** Whether the process step `argv` read still runs, alone, after the watch. */
export interface ProcessCheck {
  /** same: that one pid still runs; changed: it is gone or another runs beside it; unknown: pidof could not run; unproven: argv read no single process. */
  state: 'same' | 'changed' | 'unknown' | 'unproven'
  argvPid: string | null
  /** What pidof finds now. */
  pids: string[]
  /** Step argv held: that process carries the flag as expected. */
  argvHeld: boolean
  detail: string
  where?: string
}

export async function recheckProcess(ctx: RunContext, seen: StepOutputs['engineProcess'] | undefined): Promise<ProcessCheck> {
  if (!seen) return { state: 'unproven', argvPid: null, pids: [], argvHeld: false, detail: 'step argv read no single engine process' }
  const base = { argvPid: seen.pid, argvHeld: seen.argvHeld }
  const r = await ctx.host.run({ script: `pidof ${quote(ctx.target.process)}`, privileged: true, timeoutMs: ctx.target.hostTimeoutMs })
  const where = whereHost(ctx, r.command)
  const trouble = hostTrouble(ctx, r, '')
  if (trouble) return { ...base, state: 'unknown', pids: [], detail: `pidof could not run again: ${trouble.observed}`, where }
  const pids = r.stdout.trim().split(/\s+/).filter((p) => /^\d+$/.test(p))
  if (pids.length === 1 && pids[0] === seen.pid) return { ...base, state: 'same', pids, detail: `pid ${seen.pid} (read by step argv) still runs, alone`, where }
  const now = pids.length === 0 ? `pidof ${ctx.target.process} now finds no process${r.stderr.trim() ? ` (${tail(r.stderr)})` : ''}` : `pidof ${ctx.target.process} now finds ${pids.join(', ')}`
  return { ...base, state: 'changed', pids, detail: `step argv read pid ${seen.pid}; ${now}`, where }
}
