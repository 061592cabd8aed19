// The engines of one fault-matrix row (test/support/fault-matrix.ts) and the base URL verify gets:
// the row's engine; another of the same process name beside it; a proxy in front of the row's
// engine or of that other one, or a port no process serves. Shared by the matrix's runner (./fault-matrix-check.ts) and
// `pnpm faults-doc --measure`.
import { startEngine, type EngineHandle } from '../../engine/launch.ts'
import { freePortNear, releasePort } from '../../engine/proc.ts'
import { startProxy } from '../../engine/proxy.ts'
import { runtimeArgs, type FaultCase } from './fault-matrix.ts'
import { FAST, engineArgs } from './run-verify.ts'

export interface RowEngines {
  /** The row's engine: the one verify's --svc, --process and shims name. */
  engine: EngineHandle
  beside: EngineHandle | undefined
  baseUrl: string
  /** Until /health is 200 on each engine (an operator's mistake is judged against engines that are up). */
  waitReady(): Promise<void>
  stop(): Promise<void>
}

export async function startRow(c: FaultCase, svc: string, processName: string, started: EngineHandle[] = []): Promise<RowEngines> {
  const engine = await startEngine({ ...c.engine, svc, processName })
  started.push(engine)
  const beside = c.beside ? await startEngine({ ...c.beside, svc: `${svc}b`, processName }) : undefined
  if (beside) started.push(beside)
  const proxy =
    c.reach === 'proxy' ? await startProxy(engine.port) : c.reach === 'proxy to beside' ? await startProxy(beside!.port) : undefined
  const unserved = c.reach === 'unserved port' ? await freePortNear(engine.port) : undefined
  const reached = proxy ? proxy.baseUrl : unserved !== undefined ? `http://127.0.0.1:${unserved}` : engine.baseUrl
  return {
    engine,
    beside,
    baseUrl: c.baseUrl?.(reached) ?? reached,
    async waitReady() {
      await Promise.all([engine.waitReady(), beside?.waitReady()])
    },
    async stop() {
      await Promise.all([engine.stop(), beside?.stop(), proxy?.stop()])
      if (unserved !== undefined) releasePort(unserved)
    },
  }
}

/** The command line a row is verified with; an operator's mistake runs with the default budgets (15m health): its answer cannot wait for one. */
export function rowArgs(c: FaultCase, engine: EngineHandle, baseUrl: string): string[] {
  return [
    ...engineArgs(engine, baseUrl),
    ...runtimeArgs(c, engine),
    '--knob',
    c.knob,
    ...(c.value !== undefined ? ['--value', c.value] : []),
    ...(c.mistake ? [] : FAST),
    ...(c.args ?? []),
  ]
}

/**
 * Whether the row's engines must be up before the run: a mistake found on first contact (while
 * still closed, refused is "loading"), and several engines under one name (while the one verified
 * is loading, none holds its port yet: argv cannot tell them apart).
 */
export const needsReady = (c: FaultCase): boolean => c.mistake !== undefined || c.beside !== undefined || c.engine.copies !== undefined
