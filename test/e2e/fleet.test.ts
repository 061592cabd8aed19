// A fleet run end to end (`pnpm verify --targets FILE` as a child process, like CI): healthy and
// faulty reference engines side by side in one process and one vitest start; the right verdict
// per target, the worst as the exit code; the combined JSON (each target's report valid for
// writeback's gate), JUnit (a testsuite per target) and step summary (a row per target); and a
// file with mistakes refused whole before anything is contacted. The tests run side by side: each
// run has its own targets file and outputs, and the engines they share answer every run alike.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { stripVTControlCharacters } from 'node:util'
import { execa } from 'execa'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startEngine, type EngineHandle } from '../../engine/launch.ts'
import type { FleetReport } from '../../helpers/fleet/report.ts'
import { REPORT_SCHEMA } from '../../helpers/writeback/report.ts'
import { mergeReports } from '../../helpers/fleet/merge.ts'
import { engineEntry, targetVerdicts, writeTargets } from '../support/fleet.ts'
import { cleanup, groupLive, ROOT, runVerify as verifyRun, spawnVerify, verdicts } from '../support/run-verify.ts'
import { slots } from '../../helpers/seams/slots.ts'
import { verifyInProcess } from '../support/verify-in-process.ts'
import { readCheckedReport } from '../support/report-schema.ts'

const engines: Record<'healthy' | 'ignored' | 'loading', EngineHandle> = {} as never
/** The healthy engine wants a key on /v1/*: its entry names a key file, never the key. */
const KEY = `sk-fleet-${Math.random().toString(36).slice(2)}`
const keyDir = mkdtempSync(join(tmpdir(), 'armproof-fleet-key-'))
const keyFile = join(keyDir, 'key')
writeFileSync(keyFile, `${KEY}\n`, { mode: 0o600 })
const healthyEntry = () => engineEntry(engines.healthy, { 'api-key-file': keyFile })
/**
 * Two `pnpm verify` runs at a time (a fleet's two shards side by side), the file's other runs
 * waiting for one to end: each run side by side with others takes a verify host of its own
 * (test/support/verify-host.ts), and a host's start costs more CPU than the run; their engines'
 * budgets, not the CPU, are what the runs wait on.
 */
const LANES = slots(2)
const runVerify = (...args: Parameters<typeof verifyRun>): ReturnType<typeof verifyRun> => LANES.run(() => verifyRun(...args))
const unique = (prefix: string): string => `${prefix}${Math.random().toString(36).slice(2, 8)}`
/**
 * The engines are ready before any run starts: the health budget is spent only by the never-ready
 * target, which waits it out (then its meter window) wherever it is in a fleet; the knob-ignored
 * one watches its meter for the whole window. Neither length is what a test here proves, but each
 * is also the time a healthy target's /health and its baseline /metrics read may take, on a
 * machine that is running the rest of the tests meanwhile: 1 s was once not enough there.
 */
const HEALTH_BUDGET_MS = 4000
const METER_WINDOW = '3s'
const FLEET_FAST = [
  '--health-budget',
  `${HEALTH_BUDGET_MS}ms`,
  '--meter-window',
  METER_WINDOW,
  '--probe-timeout',
  '3s',
  '--host-timeout',
  '10s',
  '--no-dropin-check',
]
/** A server that answers 404 to everything and lists what it was asked; closed in afterAll. */
const servers: Server[] = []
async function listening(): Promise<{ url: string; port: number; seen: string[] }> {
  const seen: string[] = []
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`)
    res.writeHead(404).end('not found')
  })
  servers.push(server)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as AddressInfo).port
  return { url: `http://127.0.0.1:${port}`, port, seen }
}

beforeAll(async () => {
  const args = ['--prefill-interleave', '1']
  const [healthy, ignored, loading] = await Promise.all([
    startEngine({ svc: unique('fh-'), processName: unique('fh-'), args: [...args, '--api-key', KEY] }),
    startEngine({ svc: unique('fi-'), processName: unique('fi-'), args, faults: ['knob_ignored'] }),
    startEngine({ svc: unique('fl-'), processName: unique('fl-'), args, faults: ['health_503_forever'] }),
  ])
  Object.assign(engines, { healthy, ignored, loading })
  await Promise.all([healthy.waitReady(), ignored.waitReady()])
}, 60_000)

afterAll(async () => {
  await Promise.allSettled([...Object.values(engines).map((e) => e?.stop()), ...servers.map((s) => new Promise((r) => s.close(r)))])
  rmSync(keyDir, { recursive: true, force: true })
})

// A test's time includes its wait for a lane (LANES): up to three runs before it.
describe.concurrent('a fleet in one run', { timeout: 120_000 }, () => {
  test('healthy, knob-ignored and never-ready targets: GREEN, RED, INCONCLUSIVE; exit 1; every output shows every target', async () => {
    const file = writeTargets({ knob: 'PREFILL_INTERLEAVE', value: '1', host: 'local' }, [
      healthyEntry(),
      engineEntry(engines.ignored),
      engineEntry(engines.loading),
    ])
    const summary = join(file, '..', 'summary.md')
    writeFileSync(summary, '')
    const run = await runVerify(['--targets', file, '--concurrency', '2', ...FLEET_FAST], { env: { GITHUB_STEP_SUMMARY: summary } })
    try {
      expect(run.exitCode, run.stdout + run.stderr).toBe(1)
      const report = run.report as unknown as FleetReport
      expect(report.format).toBe('armproof-fleet/1')
      expect(report.verdict).toBe('red')
      expect(report.exitCode).toBe(1)
      expect(targetVerdicts(report), run.stdout).toEqual({
        [engines.healthy.svc]: 'green',
        [engines.ignored.svc]: 'red',
        [engines.loading.svc]: 'inconclusive',
      })
      const [healthy, ignored, loading] = report.targets.map((t) => t.report)
      expect(verdicts(ignored)).toMatchObject({ meter: 'failed', argv: 'passed', ledger: 'passed' })
      expect(verdicts(loading)).toMatchObject({ health: 'inconclusive', argv: 'passed', 'probe.exact': 'skipped' })
      // Each target's report is the one-target shape: writeback's schema takes it as it is.
      for (const t of report.targets) expect(REPORT_SCHEMA.check(t.report, '').ok, t.name).toBe(true)
      expect(healthy!.meter?.proof).toBe('rose')
      const xml = readFileSync(run.junitPath, 'utf8')
      expect(xml.match(/<testsuite /g)).toHaveLength(3)
      for (const e of Object.values(engines)) expect(xml).toContain(`<testsuite name="armproof ${e.svc} PREFILL_INTERLEAVE"`)
      const md = readFileSync(summary, 'utf8')
      for (const e of Object.values(engines)) expect(md).toMatch(new RegExp(`^\\| ${e.svc} \\|`, 'm'))
      // Live progress names each target on its step lines, and the table has a row each.
      for (const e of Object.values(engines)) {
        expect(run.stdout).toMatch(new RegExp(`^${e.svc} +9 . meter`, 'm'))
        expect(run.stdout).toMatch(new RegExp(`^${e.svc} +done: `, 'm'))
      }
      expect(run.stdout).toMatch(/fleet RED · 1 green, 1 red, 1 inconclusive · exit 1 \(the worst verdict\)/)
      // The key reached the endpoint from its file (the target is green) and nothing else.
      for (const text of [run.stdout, run.stderr, readFileSync(run.reportPath, 'utf8'), xml, md]) expect(text).not.toContain(KEY)
    } finally {
      cleanup(run)
    }
  })

  test('a targets file with mistakes is refused whole, every problem listed, exit 2, nothing contacted', async () => {
    // Ends before any proof step: verify() in this process. Every target's base URL is a server of
    // this test's own that lists each request it gets (the engines are busy with the other tests).
    const watched = await listening()
    const file = writeTargets({ knob: 'PREFILL_INTERLEAVE' }, [
      engineEntry(engines.healthy, { value: 'seven', 'base-url': watched.url }),
      { svc: 'x y', 'base-url': watched.url },
      engineEntry(engines.ignored, { 'api-key-file': '/nonexistent/key', 'base-url': watched.url }),
    ])
    const run = await verifyInProcess(['--targets', file, ...FLEET_FAST])
    try {
      expect(run.exitCode).toBe(2)
      expect(run.stderr).toMatch(/3 configuration problems; nothing was contacted/)
      expect(run.stderr).toMatch(/targets\[0\].*"seven" does not fit PREFILL_INTERLEAVE/)
      expect(run.stderr).toMatch(/targets\[1\].*"x y" must match/)
      expect(run.stderr).toMatch(/targets\[2\].*cannot be read/)
      // Nothing asked for /health, /v1/*, /metrics or anything else; and the watch does see a request.
      expect(watched.seen).toEqual([])
      await (await fetch(`${watched.url}/health`)).arrayBuffer()
      expect(watched.seen).toEqual(['GET /health'])
    } finally {
      cleanup(run)
    }
  })

  test('--shard 1/2 and 2/2 split the fleet, every target in exactly one, and merge-reports joins them (exit = worst)', async () => {
    const file = writeTargets({ knob: 'PREFILL_INTERLEAVE', value: '1', host: 'local' }, [
      healthyEntry(),
      engineEntry(engines.ignored),
      engineEntry(engines.loading),
    ])
    const runs = await Promise.all([1, 2].map((i) => runVerify(['--targets', file, '--shard', `${i}/2`, ...FLEET_FAST])))
    try {
      const shards = runs.map((r) => r.report as unknown as FleetReport)
      const names = shards.flatMap((r) => r.targets.map((t) => t.name)).sort()
      expect(names).toEqual(
        Object.values(engines)
          .map((e) => e.svc)
          .sort(),
      )
      for (const [k, r] of shards.entries()) expect(r.fleet.shards).toEqual([{ index: k + 1, count: 2 }])
      let out = ''
      let err = ''
      const io = { env: {}, cwd: runs[0]!.dir, out: { write: (t: string) => (out += t) }, err: { write: (t: string) => (err += t) } }
      // One shard alone is refused: it does not hold the fleet.
      expect(await mergeReports({ ...io, rawArgs: ['--out', 'merged.json', runs[0]!.reportPath] })).toBe(2)
      expect(err).toMatch(/shard 2\/2 missing/)
      const code = await mergeReports({
        ...io,
        rawArgs: ['--out', 'merged.json', '--junit', 'merged.xml', ...runs.map((r) => r.reportPath)],
      })
      expect(code, err).toBe(1)
      const merged = readCheckedReport<FleetReport>(join(runs[0]!.dir, 'merged.json'))
      expect(merged.targets).toHaveLength(3)
      expect(merged.fleet.shards).toEqual([
        { index: 1, count: 2 },
        { index: 2, count: 2 },
      ])
      expect(targetVerdicts(merged), runs.map((r) => r.stdout).join('\n')).toEqual({
        [engines.healthy.svc]: 'green',
        [engines.ignored.svc]: 'red',
        [engines.loading.svc]: 'inconclusive',
      })
      expect(readFileSync(join(runs[0]!.dir, 'merged.xml'), 'utf8').match(/<testsuite /g)).toHaveLength(3)
      expect(out).toMatch(/merged 2 shard report\(s\) into merged.json: fleet RED, 3 target\(s\), exit 1/)
    } finally {
      for (const r of runs) cleanup(r)
    }
  })

  test('a fleet recorded (--mode record, a fixtures folder per target) replays offline to the same verdicts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'armproof-fleet-rec-'))
    const file = writeTargets({ knob: 'PREFILL_INTERLEAVE', value: '1', host: 'local' }, [
      { ...healthyEntry(), fixtures: join(dir, 'healthy') },
      engineEntry(engines.ignored, { fixtures: join(dir, 'ignored') }),
    ])
    const recorded = await runVerify(['--targets', file, '--mode', 'record', ...FLEET_FAST])
    try {
      expect(recorded.exitCode, recorded.stdout + recorded.stderr).toBe(1)
      const replayed = await runVerify(['--targets', file, '--mode', 'replay', ...FLEET_FAST], {
        env: { NODE_OPTIONS: `--import=${join(ROOT, 'test/support/no-sockets.ts')}` },
      })
      try {
        expect(replayed.exitCode, replayed.stdout + replayed.stderr).toBe(1)
        const before = recorded.report as unknown as FleetReport
        const after = replayed.report as unknown as FleetReport
        expect(targetVerdicts(after), replayed.stdout).toEqual(targetVerdicts(before))
        for (const t of after.targets) expect(t.report.mode).toBe('replay')
      } finally {
        cleanup(replayed)
      }
    } finally {
      cleanup(recorded)
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('first contact per target: a refused key (401) and a /health that is not there (404) end those targets at once with verdict error, no step judged; the others run on; exit 2. --concurrency 1: a target waits for its slot, and its budgets start with its own steps, not while it waited', async () => {
    // A server that answers 404 to everything: a --base-url that is not the engine's root.
    const { port } = await listening()
    const keyless = { ...engineEntry(engines.healthy), svc: unique('fk-') }
    const missing = { ...engineEntry(engines.ignored), svc: unique('fn-'), 'base-url': `http://127.0.0.1:${port}` }
    // One at a time: the never-ready target holds the only slot for its whole health budget; the
    // healthy one after it is still judged with its full budgets (green). A refused target takes no slot.
    const file = writeTargets({ knob: 'PREFILL_INTERLEAVE', value: '1', host: 'local' }, [
      engineEntry(engines.loading),
      healthyEntry(),
      keyless,
      missing,
    ])
    const summary = join(file, '..', 'fleet-summary.md')
    const run = await runVerify(['--targets', file, '--summary', summary, '--concurrency', '1', ...FLEET_FAST])
    try {
      expect(run.exitCode, run.stdout + run.stderr).toBe(2)
      // --summary PATH: the fleet's table, with the mode, the duration, each target's endpoint and the meter line.
      const md = readFileSync(summary, 'utf8')
      expect(md).toMatch(/^### ⛔ armproof fleet ERROR: 4 target\(s\): 1 inconclusive, 1 green, 2 error$/m)
      expect(md).toMatch(/^mode \*\*live\*\* · took \d/m)
      expect(md).toContain(`| ${engines.healthy.svc} | \`${engines.healthy.baseUrl}\` |`)
      expect(md).toContain(`| ${missing.svc} | \`http://127.0.0.1:${port}\` |`)
      expect(md).toMatch(new RegExp(`^\\| ${engines.healthy.svc} \\|.*\\| green \\| \`[^\`|]+\` \\|$`, 'm'))
      expect(md).toMatch(new RegExp(`^\\| ${keyless.svc} \\|.*\\| error \\| – \\|$`, 'm'))
      expect(md).not.toContain(KEY)
      const report = run.report as unknown as FleetReport
      expect(report.verdict).toBe('error')
      expect(targetVerdicts(report), run.stdout).toEqual({
        [engines.loading.svc]: 'inconclusive',
        [engines.healthy.svc]: 'green',
        [keyless.svc]: 'error',
        [missing.svc]: 'error',
      })
      const [loading, healthy, k, m] = report.targets.map((t) => t.report)
      // One at a time: the healthy target's steps began after the never-ready one's had ended.
      const loadingEnd = Date.parse(loading!.finishedAt)
      const healthStep = healthy!.steps.find((s) => s.id === 'health')!
      // The wait (at least the never-ready target's whole health budget) is not in its own step's time.
      expect(healthStep.durationMs).toBeLessThan(HEALTH_BUDGET_MS)
      expect(Date.parse(healthy!.finishedAt)).toBeGreaterThan(loadingEnd)
      expect(k!.steps).toEqual([])
      expect(m!.steps).toEqual([])
      expect(k!.error).toMatch(/^first contact: \/v1\/models answers HTTP 401 \(the key\)/)
      expect(m!.error).toMatch(/^first contact: \/health answers HTTP 404 \(the path\)/)
      // One line each, naming the target, with the cause and the fix.
      expect(run.stderr).toMatch(
        new RegExp(`^armproof: ${keyless.svc}: /v1/models answers HTTP 401 \\(the key\\): .*VERIFY_API_KEY.*\\[first contact: GET `, 'm'),
      )
      expect(run.stderr).toMatch(
        new RegExp(`^armproof: ${missing.svc}: /health answers HTTP 404 \\(the path\\): --base-url must be the engine's root`, 'm'),
      )
      // No step of a refused target ran: its name never appears on a step line.
      expect(run.stdout).not.toMatch(new RegExp(`^${keyless.svc} +\\d+ . `, 'm'))
      for (const t of report.targets) expect(REPORT_SCHEMA.check(t.report, '').ok, t.name).toBe(true)
      expect(readFileSync(run.junitPath, 'utf8').match(/<testsuite /g)).toHaveLength(4)
    } finally {
      cleanup(run)
    }
  })

  test('the fleet straight from env (VERIFY_TARGETS, pnpm vitest run suites): a target refused on first contact fails its one test, the others are judged', async () => {
    const keyless = { ...engineEntry(engines.healthy), svc: unique('fk-') }
    const file = writeTargets({ knob: 'PREFILL_INTERLEAVE', value: '1', host: 'local' }, [healthyEntry(), keyless])
    const result = await execa('pnpm', ['exec', 'vitest', 'run', 'suites'], {
      cwd: ROOT,
      reject: false,
      env: {
        CI: 'true',
        VERIFY_NO_DOTENV: '1',
        VERIFY_TARGETS: file,
        VERIFY_HEALTH_BUDGET: `${HEALTH_BUDGET_MS}ms`,
        VERIFY_METER_WINDOW: METER_WINDOW,
        VERIFY_PROBE_TIMEOUT: '3s',
        VERIFY_DROPIN_CHECK: '0',
      },
    })
    const all = stripVTControlCharacters(String(result.stdout) + String(result.stderr))
    expect(result.exitCode, all).toBe(1)
    expect(all).toMatch(
      new RegExp(`armproof: ${keyless.svc}: /v1/models answers HTTP 401 \\(the key\\): the endpoint wants a key and none was given`),
    )
    expect(all).toMatch(/Tests +1 failed \| 8 passed/)
    expect(all).not.toContain(KEY)
  })
})

describe.concurrent('SIGINT / SIGTERM during a fleet run', () => {
  test.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    '%s: the partial combined report, JUnit and summary say interrupted; the target done keeps green, the one under way and the one not started are interrupted; exit %i; no process left',
    async (signal, exitCode) => {
      // One at a time: the healthy target ends green, the never-ready one is under way (a 60 s health
      // budget), the knob-ignored one waits for its slot.
      const file = writeTargets({ knob: 'PREFILL_INTERLEAVE', value: '1', host: 'local' }, [
        healthyEntry(),
        engineEntry(engines.loading),
        engineEntry(engines.ignored),
      ])
      const out = join(file, '..')
      const run = spawnVerify([
        '--targets',
        file,
        '--concurrency',
        '1',
        '--health-budget',
        '60s',
        '--meter-window',
        '2s',
        '--probe-timeout',
        '3s',
        '--host-timeout',
        '10s',
        '--no-dropin-check',
        '--report',
        join(out, 'r.json'),
        '--junit',
        join(out, 'r.xml'),
        '--summary',
        join(out, 'r.md'),
      ])
      await run.printed('stdout', (text) => new RegExp(`^${engines.healthy.svc} +done: `, 'm').test(text))
      await new Promise((r) => setTimeout(r, 500))
      process.kill(run.pid, signal)
      const code = await run.exited
      const { stdout, stderr } = run.output()
      expect(code, `${stdout}\n${stderr}`).toBe(exitCode)
      await new Promise((r) => setTimeout(r, 500))
      expect(await groupLive(run.pid), "processes left in the run's group").toEqual([])
      const report = readCheckedReport<FleetReport>(join(out, 'r.json'))
      expect(report.verdict).toBe('interrupted')
      expect(report.exitCode).toBe(exitCode)
      expect(targetVerdicts(report)).toEqual({
        [engines.healthy.svc]: 'green',
        [engines.loading.svc]: 'interrupted',
        [engines.ignored.svc]: 'interrupted',
      })
      const [healthy, loading, ignored] = report.targets.map((t) => t.report)
      expect(healthy!.steps).toHaveLength(10)
      expect(healthy!.truth).toBeTruthy()
      expect(healthy!.notes).toEqual([])
      expect(loading!.error).toMatch(new RegExp(`^interrupted by ${signal} after \\d of 10 steps$`))
      expect(loading!.steps.every((s) => s.id !== 'health')).toBe(true)
      expect(ignored!.steps).toEqual([])
      expect(ignored!.error).toBe(`interrupted by ${signal} after 0 of 10 steps`)
      for (const t of report.targets) expect(REPORT_SCHEMA.check(t.report, '').ok, t.name).toBe(true)
      expect(readFileSync(join(out, 'r.xml'), 'utf8').match(/<testsuite /g)).toHaveLength(3)
      expect(readFileSync(join(out, 'r.md'), 'utf8')).toMatch(/^### ⏹ armproof fleet INTERRUPTED: 3 target\(s\): 1 green, 2 interrupted$/m)
      expect(stdout).toMatch(new RegExp(`\\nfleet INTERRUPTED by ${signal} · 1 green, 2 interrupted · exit ${exitCode} · partial report `))
      expect(stdout + stderr).not.toContain(KEY)
      // The engines are the test's, and still there.
      expect(await engines.loading.stats()).toBeTruthy()
    },
  )
})
