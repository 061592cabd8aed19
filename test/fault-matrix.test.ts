// Runs the fault matrix (test/support/fault-matrix.ts): for every fault, the proof against a
// reference engine with that one misbehaviour gives the expected verdict, exit code, red steps and
// message. Zero false greens: a non-green case never exits 0. The rows of END_TO_END run whole
// `pnpm verify` processes (green, red, inconclusive, an intended skip, a key file, a key echoed
// back), and so do the three HEAVY rows and the operator's mistakes; the others judge the same steps in this process
// (test/support/prove-in-process.ts).
import { afterAll, describe, expect, test } from 'vitest'
import { startEngine, type EngineHandle } from '../engine/launch.ts'
import { EXIT_CODES, STEP_IDS } from '../helpers/steps/verdict.ts'
import { END_TO_END, FAULT_MATRIX, HEAVY, type FaultCase } from './support/fault-matrix.ts'
import { proveInProcess } from './support/prove-in-process.ts'
import { FAST, cleanup, engineArgs, runVerify, verdicts } from './support/run-verify.ts'

// Process names are machine-wide (pidof): this run's own suffix keeps another checkout's run apart.
const RUN = process.pid % 100_000
const engines: EngineHandle[] = []
afterAll(async () => {
  await Promise.all(engines.map((e) => e.stop()))
})

async function check(c: FaultCase & { i: number; how: string }): Promise<void> {
  const engine = await startEngine({ ...c.engine, svc: `fm${c.i}`, processName: `rf${c.i}-${RUN}` })
  engines.push(engine)
  // An operator's mistake runs with the default budgets (15m health): its answer cannot wait for one.
  const args = [...engineArgs(engine, c.baseUrl?.(engine.baseUrl)), '--knob', c.knob, ...(c.value !== undefined ? ['--value', c.value] : []), ...(c.mistake ? [] : FAST), ...(c.args ?? [])]
  const options = { engine, ...(c.env ? { env: c.env } : {}) }
  // A mistake found on first contact needs the engine up: while it is still closed, refused is "loading".
  if (c.mistake) await engine.waitReady()
  const run = c.how === 'pnpm verify' ? await runVerify(args, options) : await proveInProcess(args, options)
  await engine.stop()
  const context = `${run.stdout}\n${run.stderr}`
  if (c.mistake) {
    expect(run.exitCode, context).toBe(2)
    expect(run.stderr, context).toContain(c.message)
    // Before contact nothing is written; on first contact the report says error, with no step judged.
    if (c.mistake === 'first contact') {
      expect(run.report?.verdict, context).toBe('error')
      expect(run.report?.steps, context).toEqual([])
      expect(run.report?.error, context).toContain(c.message)
    } else {
      expect(run.report, context).toBeUndefined()
    }
    if ('dir' in run) cleanup(run)
    return
  }
  expect(run.report, context).toBeDefined()
  const want = Object.fromEntries(STEP_IDS.map((id) => [id, c.steps[id] ?? 'passed']))
  expect(verdicts(run.report), context).toEqual(want)
  expect(run.report!.verdict, context).toBe(c.verdict)
  expect(run.exitCode, context).toBe(EXIT_CODES[c.verdict])
  if (c.verdict !== 'green') expect(run.exitCode).not.toBe(0)
  if (c.message) {
    const focus = run.report!.steps.find((s) => s.verdict !== 'passed') ?? run.report!.steps.find((s) => s.id === 'meter')!
    expect(`${focus.observed}\n${focus.next ?? ''}`, context).toContain(c.message)
    if (focus.verdict === 'failed' || focus.verdict === 'inconclusive') {
      expect(focus.expected).not.toBe('')
      expect(focus.where).not.toBe('')
      expect(focus.next, `${focus.id} has no next step`).toBeTruthy()
    }
  }
  if ('dir' in run) cleanup(run)
}

// The rows whose engine streams tens of MB (a 30 MB /metrics, a 64 MiB log) run as their own
// `pnpm verify` processes too: judged in this process they would stall the other rows' timings.
// So do the operator's mistakes: first contact is `pnpm verify`'s, and a name under .invalid
// resolves to NXDOMAIN through a preload (NODE_OPTIONS) in that process.
const CASES = FAULT_MATRIX.map((c, i) => ({ ...c, i, how: END_TO_END.includes(c.fault) || HEAVY.includes(c.fault) || c.mistake !== undefined ? 'pnpm verify' : 'in-process' }))

describe.concurrent('the fault matrix', () => {
  test.each(CASES)('$fault: $what → $verdict ($how)', check)
})
