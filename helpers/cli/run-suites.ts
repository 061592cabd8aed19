// Runs the arm suite (suites/arm.test.ts) once, programmatically, for one target or a fleet: the
// one vitest start both `pnpm verify` paths share. Returns why the suites could not run, if so.
// The suite runs in this process (./in-process-pool.ts) when vitest's worker runtime is the one
// that pool was written for, else in a worker forked by vitest's own pool, said in one line.
import { fileURLToPath } from 'node:url'
import type { PoolRunnerInitializer, Reporter } from 'vitest/node'
import { ARM_SUITE, SUITES_PROJECT } from './suites-project.ts'
import type { Target } from '../config/load.ts'
import { SUITES_IN_PROCESS, inProcessPool, workerRuntime } from './in-process-pool.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

export interface SuitesRun {
  reporter: Reporter
  /** What the suite reads through inject(): one target, or the fleet's targets and cap. */
  provide:
    | { 'armproof:target': Target }
    | { 'armproof:fleet': { targets: Array<{ label: string; target: Target }>; concurrency: number | null } }
  /** vitest's own cap on tests at once; the fleet raises it so its --concurrency gate is what holds. */
  maxConcurrency?: number
  out: unknown
  err: unknown
}

/** The stock pool the suite falls back to: a forked worker, as vitest runs a test file by default. */
const STOCK_POOL = { pool: 'forks' } as const

/** The pool's part of the inline config, and why it is not the in-process one (one line), if so. */
async function suitesPool(): Promise<{
  config: { pool: PoolRunnerInitializer | 'forks'; disableConsoleIntercept?: true }
  fallback?: string
}> {
  let exports: Record<string, unknown>
  try {
    exports = await import('vitest/worker')
  } catch (error) {
    return {
      config: STOCK_POOL,
      fallback: `vitest/worker could not be loaded (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`,
    }
  }
  const runtime = workerRuntime(exports)
  if ('why' in runtime) return { config: STOCK_POOL, fallback: runtime.why }
  return { config: { pool: inProcessPool(runtime), ...SUITES_IN_PROCESS } }
}

/** Starts vitest on the arm suite and waits for it; a failure to start or run is returned, not thrown. */
export async function runArmSuite(run: SuitesRun): Promise<string | undefined> {
  try {
    // Loaded here, not at the top: --help and refused configurations answer without it.
    const { startVitest } = await import('vitest/node')
    const pool = await suitesPool()
    if (pool.fallback)
      (run.err as { write(text: string): unknown }).write(
        `armproof: warning: the suite runs in a worker forked by vitest, not in this process: ${pool.fallback}\n`,
      )
    const vitest = await startVitest(
      'test',
      [ARM_SUITE],
      {
        root: ROOT,
        config: false,
        ...SUITES_PROJECT,
        ...pool.config,
        ...(run.maxConcurrency !== undefined ? { maxConcurrency: run.maxConcurrency } : {}),
        run: true,
        watch: false,
        reporters: [run.reporter],
        provide: run.provide,
      },
      {},
      { stdout: run.out as NodeJS.WriteStream, stderr: run.err as NodeJS.WriteStream },
    )
    await vitest.close()
    return undefined
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}
