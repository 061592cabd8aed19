// Runs the arm suite (suites/arm.test.ts) once, programmatically, for one target or a fleet: the
// one vitest start both `pnpm verify` paths share. Returns why the suites could not run, if so.
import { fileURLToPath } from 'node:url'
import type { Reporter } from 'vitest/node'
import { ARM_SUITE, SUITES_PROJECT } from '../../suites/project.ts'
import type { Target } from '../config/load.ts'
import { SUITES_IN_PROCESS, inProcessPool } from './in-process-pool.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

export interface SuitesRun {
  reporter: Reporter
  /** What the suite reads through inject(): one target, or the fleet's targets and cap. */
  provide: { 'armproof:target': Target } | { 'armproof:fleet': { targets: Array<{ label: string; target: Target }>; concurrency: number } }
  /** vitest's own cap on tests at once; the fleet raises it so its --concurrency gate is what holds. */
  maxConcurrency?: number
  out: unknown
  err: unknown
}

/** Starts vitest on the arm suite and waits for it; a failure to start or run is returned, not thrown. */
export async function runArmSuite(run: SuitesRun): Promise<string | undefined> {
  try {
    // Loaded here, not at the top: --help and refused configurations answer without it.
    const { startVitest } = await import('vitest/node')
    const vitest = await startVitest(
      'test',
      [ARM_SUITE],
      {
        root: ROOT,
        config: false,
        ...SUITES_PROJECT,
        pool: inProcessPool(),
        ...SUITES_IN_PROCESS,
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
