// After the meter's watch: is the engine step argv read still the one serving the endpoint? The
// same lookup as argv's (./find.ts), run again, and the start time compared, so a pid the kernel
// handed to a new process is not taken for the old one.
import type { HostClient } from '../seams/host.ts'
import { findEngine, type EngineQuery, type FoundBy } from './find.ts'
import { procPlace } from './runtime.ts'

/** What step argv handed on about the engine it read (StepOutputs.engineProcess). */
export interface EngineSeen {
  pid: string
  argvHeld: boolean
  startTimeSeconds: number | null
  foundBy: FoundBy
}

/** Whether the process step argv read still serves, after the watch. */
export interface ProcessCheck {
  /** same: that pid, started at the same time, is found again; changed: another or none is; unknown: the lookup could not run; unproven: argv read no single process. */
  state: 'same' | 'changed' | 'unknown' | 'unproven'
  argvPid: string | null
  /** The pid found now (none, or what pidof finds when it cannot single one out). */
  pids: string[]
  /** Step argv held: that process carries the flag as expected. */
  argvHeld: boolean
  detail: string
  where?: string
}

/** `where` for the lookup: the reads it makes, in one line (in the pod, through kubectl, for a kubernetes target). */
export function lookupLabel(hostWhere: string, q: Pick<EngineQuery, 'process' | 'pod'>): string {
  return `${procPlace(hostWhere, q)}${q.pod ? ' ' : ': '}pidof ${q.process}; /proc/net/tcp{,6}; /proc/<pid>/{fd,stat,cmdline}`
}

export async function recheckEngine(host: HostClient, q: EngineQuery, seen: EngineSeen | undefined): Promise<ProcessCheck> {
  if (!seen) return { state: 'unproven', argvPid: null, pids: [], argvHeld: false, detail: 'step argv read no single engine process' }
  const base = { argvPid: seen.pid, argvHeld: seen.argvHeld, where: lookupLabel(host.where, q) }
  const now = await findEngine(host, q)
  if (now.kind === 'trouble') {
    const said = (now.result.stderr || now.result.stdout).trim().split('\n').at(-1) ?? ''
    return {
      ...base,
      state: 'unknown',
      pids: [],
      detail: `the engine process could not be looked up again (${now.result.failure}${said ? `: ${said}` : ''})`,
    }
  }
  // The runtime could not be read this time (kubectl refused): nothing seen, nothing changed.
  if (now.kind === 'unobserved')
    return { ...base, state: 'unknown', pids: [], detail: `the engine process could not be looked up again: ${now.observed}` }
  const pidof = seen.foundBy === 'pidof'
  const was = `step argv read pid ${seen.pid}`
  if (now.kind !== 'found') {
    const what = pidof ? `pidof ${q.process} now finds ${now.named.length ? now.named.join(', ') : 'no process'}` : `now ${now.observed}`
    return { ...base, state: 'changed', pids: now.kind === 'ambiguous' ? now.pids : [], detail: `${was}; ${what}` }
  }
  if (now.pid !== seen.pid) {
    return {
      ...base,
      state: 'changed',
      pids: [now.pid],
      detail: `${was}; ${pidof && now.foundBy === 'pidof' ? `pidof ${q.process} now finds ${now.pid}` : `now pid ${now.pid} ${now.how}`}`,
    }
  }
  if (seen.startTimeSeconds !== null && now.startTimeSeconds !== null && now.startTimeSeconds !== seen.startTimeSeconds) {
    return {
      ...base,
      state: 'changed',
      pids: [now.pid],
      detail: `${was}, started at ${seen.startTimeSeconds}; pid ${now.pid} is now another process, started at ${now.startTimeSeconds}`,
    }
  }
  const still = now.foundBy === 'pidof' ? 'still runs, alone' : `still ${now.how.replace(/;.*$/, '')}`
  return { ...base, state: 'same', pids: [now.pid], detail: `pid ${seen.pid} (read by step argv) ${still}` }
}
