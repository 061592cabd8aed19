// One row of the fault matrix (test/support/fault-matrix.ts), checked against its reference engine
// (its own, or one it shares with rows that need the very same engine, ./shared-engines.ts): the
// verdict, exit code, red steps and message `pnpm verify` must give. Run by
// test/e2e/fault-matrix.test.ts (every row but the HEAVY ones, side by side; rows sharing an engine one at a time) and
// test/e2e/fault-matrix-heavy.test.ts (the HEAVY rows, one after another in their own worker).
//
// How a row is run:
// - 'pnpm verify': a whole `pnpm verify` child process (the END_TO_END rows: the CLI's own wiring);
// - 'verify in-process': the operator's mistakes, answered before the proof steps, through the same
//   verify() in this process (test/support/verify-in-process.ts; it throws if the run went on);
// - 'in-process': the proof steps judged in this process (test/support/prove-in-process.ts).
import dns from 'node:dns'
import { expect } from 'vitest'
import type { EngineHandle } from '../../engine/launch.ts'
import { needsReady, rowArgs, startRow, type RowEngines } from './row-engines.ts'
import { EXIT_CODES, STEP_IDS } from '../../helpers/steps/verdict.ts'
import { END_TO_END, type FaultCase } from './fault-matrix.ts'
// A name under .invalid answers NXDOMAIN in this process too (a row preloads it with NODE_OPTIONS).
import './nxdomain.ts'
import { proveInProcess } from './prove-in-process.ts'
import { cleanup, runVerify, verdicts } from './run-verify.ts'
import { verifyInProcess } from './verify-in-process.ts'

export type How = 'pnpm verify' | 'verify in-process' | 'in-process'
export type Row = FaultCase & { i: number; how: How }

/** The preload a row's NODE_OPTIONS may carry: imported above, so in this process it is already in effect. */
const NXDOMAIN_PRELOAD = '--import=./test/support/nxdomain.ts'

/** Names under .invalid that reached `dns.lookup` (the patched one) in this process. */
const asked: string[] = []
const patched = dns.lookup
dns.lookup = function recorded(hostname: string, ...rest: unknown[]) {
  if (typeof hostname === 'string' && /\.invalid\.?$/i.test(hostname)) asked.push(hostname)
  return (patched as (...a: unknown[]) => unknown).call(dns, hostname, ...rest)
} as typeof dns.lookup

// Process names are machine-wide (pidof): this run's own suffix keeps another checkout's run apart.
const RUN = process.pid % 100_000

export function rows(cases: readonly FaultCase[], indexOf: (c: FaultCase) => number): Row[] {
  return cases.map((c) => ({
    ...c,
    i: indexOf(c),
    how: END_TO_END.includes(c.fault) ? 'pnpm verify' : c.mistake !== undefined ? 'verify in-process' : 'in-process',
  }))
}

/** The row's env for a run in this process: its NODE_OPTIONS preload (only nxdomain's is known) is in effect already. */
function inProcessEnv(env: Record<string, string> | undefined): Record<string, string> | undefined {
  if (env?.NODE_OPTIONS === undefined) return env
  const { NODE_OPTIONS, ...rest } = env
  if (NODE_OPTIONS !== NXDOMAIN_PRELOAD)
    throw new Error(`a row's NODE_OPTIONS ${JSON.stringify(NODE_OPTIONS)} cannot take effect in-process: run it with 'pnpm verify'`)
  return rest
}

/** The row's own engines, started for it (each row's svc and process name are its own). */
export const startRowOf = (c: Row, engines: EngineHandle[]): Promise<RowEngines> => startRow(c, `fm${c.i}`, `rf${c.i}-${RUN}`, engines)

/**
 * `x`: the test's own expect (rows run side by side). `shared`: an engine the row shares with rows
 * that run before or after it (./shared-engines.ts), left running; else the row starts and stops its own.
 */
export async function checkRow(c: Row, engines: EngineHandle[], x: typeof expect = expect, shared?: RowEngines): Promise<void> {
  const row = shared ?? (await startRowOf(c, engines))
  const { engine, baseUrl } = row
  const args = rowArgs(c, engine, baseUrl)
  if (needsReady(c)) await row.waitReady()
  const env = c.how === 'pnpm verify' ? c.env : inProcessEnv(c.env)
  const preloaded = c.how !== 'pnpm verify' && c.env?.NODE_OPTIONS !== undefined
  const askedBefore = asked.length
  const run =
    c.how === 'pnpm verify'
      ? await runVerify(args, { engine, ...(env ? { env } : {}) })
      : c.how === 'verify in-process'
        ? // The host reads it starts beside first contact see the engine's shims, as a child's would (not this machine's podman).
          await verifyInProcess(args, { env: { ...engine.env, ...env }, hostEnv: engine.env })
        : await proveInProcess(args, { engine, ...(env ? { env } : {}) })
  const stats = c.stats ? await engine.stats() : undefined
  if (!shared) await row.stop()
  const context = `${run.stdout}\n${run.stderr}`
  if (c.stats) x(stats, `the engine's /stats after the run\n${context}`).toMatchObject(c.stats)
  // The preload's answer, not the machine's resolver: the run's connection asked the patched dns.lookup.
  if (preloaded) {
    x(patched.name, 'dns.lookup is the one test/support/nxdomain.ts installs').toBe('nxdomain')
    x(asked.slice(askedBefore), context).toContain(new URL(baseUrl).hostname)
  }
  if (c.mistake) {
    x(run.exitCode, context).toBe(2)
    x(run.stderr, context).toContain(c.message)
    // Before contact nothing is written; on first contact the report says error, with no step judged.
    if (c.mistake === 'first contact') {
      x(run.report?.verdict, context).toBe('error')
      x(run.report?.steps, context).toEqual([])
      x(run.report?.error, context).toContain(c.message)
    } else {
      x(run.report, context).toBeUndefined()
    }
    if ('dir' in run) cleanup(run)
    return
  }
  x(run.report, context).toBeDefined()
  // No row gives the one-flag law a baseline: its step is skipped on purpose, saying so, unless the row says otherwise.
  const want = Object.fromEntries(STEP_IDS.map((id) => [id, c.steps[id] ?? (id === 'one-flag' ? 'skipped' : 'passed')]))
  x(verdicts(run.report), context).toEqual(want)
  x(run.report!.verdict, context).toBe(c.verdict)
  x(run.exitCode, context).toBe(EXIT_CODES[c.verdict])
  if (c.verdict !== 'green') x(run.exitCode).not.toBe(0)
  if (c.message) {
    // The first step that did not hold; a skip on purpose (a runtime's drop-in gate) only where nothing else is.
    const steps = run.report!.steps
    const focus =
      steps.find((s) => s.verdict !== 'passed' && s.intendedSkip !== true) ??
      steps.find((s) => s.verdict !== 'passed' && s.id !== 'one-flag') ??
      steps.find((s) => s.id === 'meter')!
    x(`${focus.observed}\n${focus.next ?? ''}`, context).toContain(c.message)
    if (focus.verdict === 'failed' || focus.verdict === 'inconclusive') {
      x(focus.expected).not.toBe('')
      x(focus.where).not.toBe('')
      x(focus.next, `${focus.id} has no next step`).toBeTruthy()
    }
  }
  if ('dir' in run) cleanup(run)
}
