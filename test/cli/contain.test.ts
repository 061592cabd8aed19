// No stack trace, ever (issue 20): an exception no phase expected is contained in every phase
// (the configuration, first contact, the suites' setup, a proof step, the report; a fleet too):
// one line says what happened and where, the report is written (verdict error before a step was
// judged, else not green), the exit code is the contract's. Each test drives an exception into
// one phase: a seam that throws, through an in-process hook only a test passes, or a preload
// (test/support/throw-in.ts) of a whole `pnpm verify`.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { freePort, startEngine, type EngineHandle } from '../../engine/launch.ts'
import { verify } from '../../helpers/cli/verify.ts'
import type { Phase } from '../../helpers/cli/contain.ts'
import type { RunbookReporter } from '../../helpers/report/reporter.ts'
import type { FleetReport } from '../../helpers/fleet/report.ts'
import { STEP_IDS, stepResult } from '../../helpers/steps/verdict.ts'
import { ROOT, cleanup, engineArgs, runVerify, armedArgs } from '../support/run-verify.ts'
import { verifyInProcess } from '../support/verify-in-process.ts'
import { readCheckedReport } from '../support/report-schema.ts'
import { DEMO_ARM } from '../support/demo-args.ts'

const dir = mkdtempSync(join(tmpdir(), 'armproof-contain-'))
const engines: EngineHandle[] = []
afterAll(async () => {
  await Promise.all(engines.map((e) => e.stop()))
  rmSync(dir, { recursive: true, force: true })
})

/** A Node stack frame, as an uncontained exception prints it. */
const FRAME = /^\s+at .+:\d+:\d+\)?$/m
const KEY = 'sk-contain-5Tq8Wz1x'

/** A thrower for one phase; the error quotes the key, which must never be shown. */
const throwAt = (at: Phase) => (phase: Phase) => {
  if (phase === at) throw new TypeError(`armproof-test: thrown in ${phase} (Bearer ${KEY})`)
}

async function nothingListens(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}`
}

const base = [...DEMO_ARM, '--host', 'local']

describe('in-process: each phase of verify() contained', () => {
  test('the configuration: one line, exit 2, no report (it did not load), no frame', async () => {
    const err: string[] = []
    const env = new Proxy({ CI: 'true', VERIFY_NO_DOTENV: '1', VERIFY_MODEL: 'm' } as Record<string, string | undefined>, {
      get(t, k) {
        if (k === 'VERIFY_MODEL') throw new TypeError('armproof-test: an env that throws')
        return t[k as string]
      },
    })
    const code = await verify({
      rawArgs: [...base, '--base-url', 'http://127.0.0.1:9'],
      env,
      cwd: ROOT,
      out: { write: () => true },
      err: { write: (t: string) => err.push(t) },
    })
    expect(code).toBe(2)
    const text = err.join('')
    expect(text).toBe(
      'armproof: internal error in the configuration (flags, env and .env): TypeError: armproof-test: an env that throws; the run is error, not judged further; this is a bug in armproof or an answer it did not expect: rerun with the same flags and report this line (no report: the configuration did not load)\n',
    )
  })

  test('first contact: verdict error, no step, the report and JUnit written, exit 2, the key never shown', async () => {
    const run = await verifyInProcess([...base, '--base-url', await nothingListens()], {
      env: { VERIFY_API_KEY: KEY },
      enterPhase: throwAt('first contact'),
    })
    expect(run.exitCode, run.stderr).toBe(2)
    expect(run.stderr.trim().split('\n')).toHaveLength(1)
    expect(run.stderr).toMatch(
      /^armproof: internal error in first contact \(http:\/\/127\.0\.0\.1:\d+: \/health, \/v1\/models, \/metrics\): TypeError: armproof-test: thrown in first contact \(Bearer \[redacted\]\); the run is error/,
    )
    expect(run.report).toMatchObject({ verdict: 'error', steps: [], exitCode: 2 })
    expect(run.report?.error).toContain('internal error in first contact')
    expect(readFileSync(run.junitPath, 'utf8')).toContain('internal error in first contact')
    for (const text of [run.stdout, run.stderr, readFileSync(run.reportPath, 'utf8')]) {
      expect(text).not.toContain(KEY)
      expect(text).not.toMatch(FRAME)
    }
    cleanup(run)
  })

  test('the report: the steps judged are kept, the verdict is not green (inconclusive), exit 3', async () => {
    const steps = STEP_IDS.map((id) => stepResult(id, id, { verdict: 'passed', expected: 'x', observed: 'y', where: 'z', evidence: {} }, 1))
    const cases = steps.map((s) => ({ name: s.title, meta: () => ({ armproof: s }), result: () => ({ state: 'passed' }) }))
    const out: string[] = []
    const err: string[] = []
    const reportPath = join(dir, 'report.json')
    // The host is reached over ssh (never, here: the suites are stood in for), so first contact's
    // check of a port nothing on --host serves does not apply to the loopback URL nothing listens on.
    const code = await verify({
      rawArgs: [...base.slice(0, -2), '--host', 'deploy@gpu-7.invalid', '--base-url', await nothingListens(), '--report', reportPath],
      env: { ...process.env, CI: 'true', VERIFY_NO_DOTENV: '1' },
      cwd: ROOT,
      out: { write: (t: string) => out.push(t) },
      err: { write: (t: string) => err.push(t) },
      // The suites, as far as the report reads them: every step judged and passed.
      runSuites: async ({ reporter }) => {
        const r = reporter as unknown as RunbookReporter
        for (const c of cases) r.onTestCaseResult(c)
        r.onTestRunEnd([{ children: { allTests: () => cases, allSuites: () => [] }, errors: () => [] }], [])
        return undefined
      },
      enterPhase: throwAt('the report'),
    })
    expect(code).toBe(3)
    expect(err.join('')).toMatch(
      /^armproof: internal error in the report \(.*report\.json\): TypeError: armproof-test: thrown in the report .*; the run is inconclusive, not judged further/,
    )
    const report = readCheckedReport(reportPath)
    expect(report.verdict).toBe('inconclusive')
    expect(report.steps.map((s: { verdict: string }) => s.verdict)).toEqual(STEP_IDS.map(() => 'passed'))
    expect(report.notes.join('\n')).toContain('internal error in the report')
    expect(err.join('') + out.join('')).not.toMatch(FRAME)
  })

  test('a fleet: first contact contained, every target error in the combined report, exit 2', async () => {
    const targets = join(dir, 'targets.yaml')
    const url = await nothingListens()
    writeFileSync(
      targets,
      `defaults:\n  knob: PREFILL_INTERLEAVE\n  value: 1\n  host: local\ntargets:\n  - { svc: a, base-url: "${url}" }\n  - { svc: b, base-url: "${url}" }\n`,
    )
    const run = await verifyInProcess(['--targets', targets], { enterPhase: throwAt('first contact') })
    expect(run.exitCode, run.stderr).toBe(2)
    expect(run.stderr).toMatch(
      /^armproof: internal error in first contact \(2 target\(s\)\): TypeError: armproof-test: thrown in first contact/,
    )
    const fleet = run.report as unknown as FleetReport
    expect(fleet.targets.map((t) => [t.name, t.report.verdict, t.report.steps.length])).toEqual([
      ['a', 'error', 0],
      ['b', 'error', 0],
    ])
    expect(run.stderr + run.stdout).not.toMatch(FRAME)
    cleanup(run)
  })
})

describe("a whole pnpm verify: the suites' setup, a proof step, and a redirect whose Location is no URL", () => {
  const launch = async (name: string, faults: Parameters<typeof startEngine>[0] = {}) => {
    const e = await startEngine({
      args: ['--prefill-interleave', '1'],
      svc: `ct-${name}`,
      processName: `rct${name}-${process.pid % 10_000}`,
      ...faults,
    })
    engines.push(e)
    return e
  }
  const preload = (where: 'setup' | 'step') => ({
    NODE_OPTIONS: `--import=${join(ROOT, 'test/support/throw-in.ts')}`,
    ARMPROOF_TEST_THROW_IN: where,
  })

  test("the suites' setup (the run's seams cannot open): no step judged, verdict error, exit 2, one line", async ({ expect }) => {
    const e = await launch('s')
    const ca = join(dir, 'ca.pem')
    // Never parsed: the endpoint is plain http. What matters is that reading it throws inside the suites.
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n')
    const run = await runVerify(armedArgs(e), {
      engine: e,
      env: { ...preload('setup'), VERIFY_CA_FILE: ca },
    })
    const out = run.stdout + run.stderr
    expect(run.exitCode, out).toBe(2)
    expect(run.stderr).toContain(
      "armproof: internal error in the suites' setup (suites/arm.test.ts): TypeError: armproof-test: the CA file cannot be read inside the suites; the run is error",
    )
    expect(run.report).toMatchObject({ verdict: 'error', steps: [] })
    expect(out).not.toMatch(FRAME)
    cleanup(run)
  })

  test("a fleet whose suites' setup fails for every target: each target error with no step, the fleet exit 2", async ({ expect }) => {
    const e = await launch('f')
    const ca = join(dir, 'fleet-ca.pem')
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n')
    const targets = join(dir, 'fleet-setup.yaml')
    writeFileSync(
      targets,
      `defaults:\n  knob: PREFILL_INTERLEAVE\n  value: 1\n  host: local\n  process: ${e.processName}\n  health-budget: 8s\ntargets:\n  - { svc: ${e.svc}, base-url: "${e.baseUrl}" }\n`,
    )
    const run = await runVerify(['--targets', targets], { engine: e, env: { ...preload('setup'), VERIFY_CA_FILE: ca } })
    const out = run.stdout + run.stderr
    expect(run.exitCode, out).toBe(2)
    const fleet = run.report as unknown as FleetReport
    expect(fleet.targets.map((t) => [t.report.verdict, t.report.steps.length])).toEqual([['error', 0]])
    expect(fleet.targets[0]!.report.error).toContain("internal error in the suites' setup (suites/arm.test.ts)")
    expect(fleet.targets[0]!.report.error).toContain('armproof-test: the CA file cannot be read inside the suites')
    expect(out).not.toMatch(FRAME)
    cleanup(run)
  })

  test('a proof step (its judge throws): that step inconclusive, the others judged, exit 3, no frame', async ({ expect }) => {
    const e = await launch('j')
    const run = await runVerify(armedArgs(e), {
      engine: e,
      env: preload('step'),
    })
    const out = run.stdout + run.stderr
    expect(run.exitCode, out).toBe(3)
    expect(run.report?.verdict).toBe('inconclusive')
    const tools = run.report?.steps.find((s) => s.id === 'probe.tools')
    expect(tools).toMatchObject({ verdict: 'inconclusive', observed: 'armproof error: armproof-test: a judge that throws' })
    expect(run.report?.steps.filter((s) => s.verdict === 'passed')).toHaveLength(8)
    expect(out).toMatch(/^INCONCLUSIVE · probe\.tools: armproof error: armproof-test: a judge that throws/m)
    expect(out).not.toMatch(FRAME)
    cleanup(run)
  })

  test('/health redirecting to http://HOST:PORT:PORT/health/: exit 2 on first contact, the proxy named, no TypeError (it used to be a stack trace, exit 1)', async ({
    expect,
  }) => {
    const e = await launch('l', { faults: ['health_bad_location'] })
    await e.waitReady()
    const run = await runVerify([...engineArgs(e), '--knob', 'PREFILL_INTERLEAVE', '--value', '1'], { engine: e })
    const out = run.stdout + run.stderr
    expect(run.exitCode, out).toBe(2)
    expect(run.stderr).toContain(
      `/health: HTTP 307 redirects to "http://127.0.0.1:${e.port}:${e.port}/health/", which is not a URL (Invalid URL); a proxy before the engine builds its redirect wrongly`,
    )
    expect(run.report).toMatchObject({ verdict: 'error', steps: [] })
    expect(out).not.toContain('TypeError')
    expect(out).not.toMatch(FRAME)
    cleanup(run)
  })
})
