// `pnpm verify` end to end, as an operator runs it: help, refusals before anything is contacted,
// a green run with its reports, the suites straight from env, and secrets kept out of everything.
// What is answered before the proof steps runs in this process through the same verify()
// (test/support/verify-in-process.ts), one refusal through bin/verify.ts itself.
import { createServer, type Server } from 'node:http'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { execa } from 'execa'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { startEngine, type EngineHandle } from '../../engine/launch.ts'
import { STEP_IDS } from '../../helpers/steps/registry.ts'
import { ROOT, cleanup, runVerify, armedArgs } from '../support/run-verify.ts'
import { verifyInProcess } from '../support/verify-in-process.ts'

const KEY = 'sk-armproof-cli-5b4a3c2d1e'
const SENTINEL = join(ROOT, '.tmp-sentinel')

describe.concurrent('pnpm verify refuses bad input before contacting anything', () => {
  let server: Server
  let hits = 0
  let url = ''
  beforeAll(async () => {
    // A command an in-process run started would get this worker's env: SENTINEL is set there too,
    // so `touch $SENTINEL` would leave the sentinel whichever way the run is made.
    vi.stubEnv('SENTINEL', SENTINEL)
    server = createServer((_req, res) => {
      hits++
      res.end('{}')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  })
  afterAll(async () => {
    vi.unstubAllEnvs()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  test('--help lists every option with its env twin, the knobs and the exit codes', async () => {
    const run = await verifyInProcess(['--help'])
    expect(run.exitCode).toBe(0)
    for (const text of [
      '--svc',
      'VERIFY_SVC',
      '--meter-window',
      'VERIFY_METER_WINDOW',
      'PREFILL_INTERLEAVE',
      'CHECKPOINT_SLOTS',
      '3 inconclusive',
    ])
      expect(run.stdout).toContain(text)
    cleanup(run)
  })

  // The hostile --svc goes through bin/verify.ts (exit code and stderr of the real process); the
  // others through the same verify() in this process.
  test.each([
    [
      'a hostile --svc',
      ['--svc', 'demo;touch $SENTINEL', '--knob', 'PREFILL_INTERLEAVE'],
      /--svc: "demo;touch \$SENTINEL" must match/,
      runVerify,
    ],
    [
      'a hostile --value',
      ['--svc', 'demo', '--knob', 'PREFILL_INTERLEAVE', '--value', '1$(touch $SENTINEL)'],
      /does not fit PREFILL_INTERLEAVE/,
      verifyInProcess,
    ],
    [
      'a hostile --host',
      ['--svc', 'demo', '--knob', 'PREFILL_INTERLEAVE', '--host', 'root@h;touch $SENTINEL'],
      /--host: .* is not a hostname/,
      verifyInProcess,
    ],
    ['an unknown knob', ['--svc', 'demo', '--knob', 'FLOOR_MODE'], /known knobs: PREFILL_INTERLEAVE, BUSY_PREFILL_CHUNK/, verifyInProcess],
  ])('%s exits 2, runs nothing and contacts nothing', async (_name, args, message, through) => {
    const run = await through([...args, '--base-url', url, '--ledger-cmd', `touch ${SENTINEL}`, '--help-cmd', `touch ${SENTINEL}`], {
      env: { SENTINEL },
    })
    expect(run.exitCode).toBe(2)
    expect(run.stderr).toMatch(message)
    expect(run.stderr).toMatch(/nothing was contacted/)
    expect(run.report).toBeUndefined()
    expect(existsSync(SENTINEL)).toBe(false)
    expect(hits).toBe(0)
    cleanup(run)
  })

  test('every problem is listed at once, one line each', async () => {
    const run = await verifyInProcess(['--svc', 'a b', '--knob', 'NOPE', '--meter-window', 'forever', '--mode', 'dry'])
    expect(run.exitCode).toBe(2)
    expect(run.stderr).toMatch(/5 configuration problems/)
    expect(run.stderr.trim().split('\n')).toHaveLength(6)
    cleanup(run)
  })
})

// Each run has an engine of its own, so they run side by side: the CLI's green run judges a meter
// that starts at 0 (no other run's requests on its engine), and the green and the red run from
// env each move only their own engine's meter. The refused key asks /health and /v1/models only:
// it shares the green-from-env engine.
describe.concurrent('a green arm, with the API key set', () => {
  let engine: EngineHandle
  let fromEnv: EngineHandle
  let wrongValue: EngineHandle
  let rejecting: EngineHandle
  beforeAll(async () => {
    // An engine per test that runs the proof steps: a run's probes move the meter another run on
    // the same engine would read as its baseline.
    const start = (name: string) =>
      startEngine({ svc: `cli-${name}`, processName: `rcli-${name}`, args: ['--prefill-interleave', '1', '--api-key', KEY] })
    ;[engine, fromEnv, wrongValue, rejecting] = await Promise.all([start('green'), start('env'), start('wrong'), start('reject')])
  })
  afterAll(() => Promise.all([engine?.stop(), fromEnv?.stop(), wrongValue?.stop(), rejecting?.stop()]))

  /** `pnpm exec vitest run suites`, the target in env only. */
  const suitesFromEnv = (e: EngineHandle, env: Record<string, string>) =>
    execa('pnpm', ['exec', 'vitest', 'run', 'suites'], {
      cwd: ROOT,
      reject: false,
      env: {
        ...e.env,
        CI: 'true',
        VERIFY_SVC: e.svc,
        VERIFY_KNOB: 'PREFILL_INTERLEAVE',
        VERIFY_BASE_URL: e.baseUrl,
        VERIFY_PROCESS: e.processName,
        ...env,
      },
    })

  test('is green, prints each step with its evidence, writes the reports, and never shows the key', async ({ expect }) => {
    const run = await runVerify(armedArgs(engine), {
      engine,
      env: { VERIFY_API_KEY: KEY },
    })
    expect(run.exitCode, run.stdout + run.stderr).toBe(0)
    // Every step held, the one-flag law's skipped on purpose (no earlier record of the service given).
    for (const id of STEP_IDS) expect(run.stdout).toMatch(new RegExp(`${id === 'one-flag' ? '–' : '✓'} ${id.replace('.', '\\.')}`))
    expect(run.stdout).toMatch(/^GREEN · PREFILL_INTERLEAVE=1 proven on cli-green/m)
    const report = run.report!
    expect(report).toMatchObject({
      svc: 'cli-green',
      knob: 'PREFILL_INTERLEAVE',
      expected: '1',
      mode: 'live',
      verdict: 'green',
      rollback: 'PREFILL_INTERLEAVE=0 then redeploy --service cli-green',
    })
    expect(report.meter).toMatchObject({ name: 'radiance:engine_steps_held_total', first: 0 })
    expect(report.meter!.last).toBeGreaterThan(0)
    expect(report.meter!.movedAt).toMatch(/^\d{4}-\d\d-\d\dT/)
    const junit = readFileSync(run.junitPath, 'utf8')
    expect(junit.match(/<testcase /g)).toHaveLength(10)
    for (const text of [run.stdout, run.stderr, readFileSync(run.reportPath, 'utf8'), junit]) expect(text).not.toContain(KEY)
    // The engine's argv carries the key; it reaches the report only redacted.
    expect(JSON.stringify(report.steps.find((s) => s.id === 'argv')!.evidence)).toContain('--api-key [redacted]')
    cleanup(run)
  })

  test('the suites run straight from env, without the CLI wrapper', async ({ expect }) => {
    const result = await suitesFromEnv(fromEnv, {
      VERIFY_VALUE: '1',
      VERIFY_API_KEY: KEY,
      VERIFY_METER_WINDOW: '2s',
      VERIFY_HEALTH_BUDGET: '8s',
    })
    expect(result.exitCode, String(result.stdout)).toBe(0)
    expect(String(result.stdout)).toMatch(/9 passed/)
    expect(String(result.stdout) + String(result.stderr)).not.toContain(KEY)
  })

  test('the suites straight from env make first contact too: a refused key ends them before any step', async ({ expect }) => {
    await fromEnv.waitReady()
    const result = await suitesFromEnv(fromEnv, { VERIFY_VALUE: '1', VERIFY_API_KEY: 'sk-not-the-key-0000' })
    const all = stripVTControlCharacters(String(result.stdout) + String(result.stderr))
    expect(result.exitCode).not.toBe(0)
    expect(all).toContain('/v1/models answers HTTP 401 (the key): the key given is refused')
    expect(all).not.toMatch(/[1-9]\d* passed/)
    expect(all).not.toContain('sk-not-the-key-0000')
  })

  test('the suites straight from env go red on a wrong value', async ({ expect }) => {
    const result = await suitesFromEnv(wrongValue, { VERIFY_VALUE: '2', VERIFY_API_KEY: KEY, VERIFY_METER_WINDOW: '2s' })
    expect(result.exitCode).toBe(1)
    expect(stripVTControlCharacters(String(result.stdout) + String(result.stderr))).toMatch(
      /argv failed\n\s+expected: --prefill-interleave 2\n\s+observed: argv carries --prefill-interleave 1/,
    )
  })

  test('an error nothing handled during the run (a rejected promise in a step) keeps it from green: inconclusive, exit 3, the error in the report', async ({
    expect,
  }) => {
    const preload = join(ROOT, 'test/support/reject-mid-run.ts')
    const run = await runVerify(armedArgs(rejecting), {
      engine: rejecting,
      env: { VERIFY_API_KEY: KEY, NODE_OPTIONS: `--import=${preload}` },
    })
    try {
      const out = run.stdout + run.stderr
      expect(run.exitCode, out).toBe(3)
      expect(run.report?.verdict).toBe('inconclusive')
      expect(run.report?.notes.join('\n'), out).toContain('armproof-test: a rejection nothing handles')
      expect(out).toMatch(/^INCONCLUSIVE · /m)
    } finally {
      cleanup(run)
    }
  })
})
