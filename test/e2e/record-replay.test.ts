// Record a live run against the reference engine, stop the engine, replay: the same verdict,
// red step and exit code; no socket opened; the fixtures untouched; no secret in any file.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, readdirSync, rmSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { startEngine } from '../../engine/launch.ts'
import { ROOT, cleanup, engineArgs, runVerify, verdicts } from '../support/run-verify.ts'
import { verifyInProcess } from '../support/verify-in-process.ts'

const KEY = 'sk-armproof-rec-0a1b2c3d4e'
const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

function fixtureFiles(folder: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(folder)
      .sort()
      .map((f) => [f, readFileSync(join(folder, f), 'utf8')]),
  )
}

/** Replays with every socket connect refused and logged. */
async function replay(args: string[], socketLog: string) {
  return runVerify([...args, '--mode', 'replay'], {
    env: { NODE_OPTIONS: `--import=${join(ROOT, 'test/support/no-sockets.ts')}`, ARMPROOF_SOCKET_LOG: socketLog, VERIFY_API_KEY: KEY },
  })
}

// Each test has its own engine, folder and svc: they run side by side. The engine's process name
// is unique on the machine (pidof finds it, and only it, whatever else runs there). The red arm watches its
// meter for the whole window: every read of /metrics in it is recorded and replayed in order.
describe.concurrent.each([
  { name: 'a green arm', faults: [] as const, verdict: 'green', exit: 0, window: '2s' },
  { name: 'a red arm (knob ignored, a meter watch of 2 s)', faults: ['knob_ignored'] as const, verdict: 'red', exit: 1, window: '2s' },
])('record and replay $name', ({ faults, verdict, exit, window }) => {
  test('replays offline to the same verdict, red step and exit code, opening no socket and writing nothing', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'armproof-fixtures-'))
    dirs.push(folder)
    const engine = await startEngine({
      svc: `rec-${verdict}`,
      processName: `rrec-${verdict}-${randomBytes(2).toString('hex')}`,
      args: ['--prefill-interleave', '1', '--api-key', KEY],
      faults: [...faults],
    })
    const args = ['--svc', engine.svc, '--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--fixtures', folder]
    const recorded = await runVerify(
      [...engineArgs(engine), ...args, '--mode', 'record', '--meter-window', window, '--health-budget', '8s'],
      { engine, env: { VERIFY_API_KEY: KEY } },
    )
    await engine.stop()
    expect(recorded.exitCode, recorded.stdout).toBe(exit)
    const files = fixtureFiles(folder)
    expect(Object.keys(files)).toEqual(['host.json', 'http.json', 'run.json'])
    for (const [name, text] of Object.entries(files)) expect(text, name).not.toContain(KEY)
    expect(files['http.json']).toContain('"authorization": "[redacted]"')
    expect(JSON.parse(files['run.json']!)).toMatchObject({
      svc: engine.svc,
      knob: 'PREFILL_INTERLEAVE',
      value: '1',
      verdict,
      tool: { name: 'armproof' },
    })

    const socketLog = join(folder, '..', `${folder.split('/').pop()}-sockets.log`)
    dirs.push(socketLog)
    // Twice: the second replay reads the fixtures the first one left (a replay that consumed or
    // rewrote them would show here), and they are compared byte for byte below.
    for (let i = 0; i < 2; i++) {
      const replayed = await replay(['--svc', engine.svc, '--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--fixtures', folder], socketLog)
      expect(replayed.exitCode, replayed.stdout + replayed.stderr).toBe(exit)
      expect(replayed.report!.verdict).toBe(verdict)
      expect(verdicts(replayed.report)).toEqual(verdicts(recorded.report))
      expect(replayed.ms).toBeLessThan(recorded.ms + 30_000) // bounded; the speed itself is measured by pnpm perf
      cleanup(replayed)
    }
    expect(existsSync(socketLog) ? readFileSync(socketLog, 'utf8') : '').toBe('')
    expect(fixtureFiles(folder)).toEqual(files)
    cleanup(recorded)
  })
})

// The pod's reads are host commands like any other: kubectl get pod, then kubectl exec … -- sh -c
// for every /proc read, kubectl logs and exec for the ledger and --help. A replay takes the runtime,
// the pod and kubectl's options from the recording, asks the same commands, and gets their answers.
test('a kubernetes run records every kubectl call and replays to the same verdict, opening no socket', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'armproof-fixtures-'))
  dirs.push(folder)
  const engine = await startEngine({
    svc: 'rec-pod',
    processName: `rrec-pod-${randomBytes(2).toString('hex')}`,
    namespace: 'llm',
    args: ['--prefill-interleave', '1'],
  })
  const args = ['--svc', engine.svc, '--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--fixtures', folder]
  const kube = ['--runtime', 'kubernetes', '--host', `llm/${engine.svc}`, '--kube-opts', '--context=armproof-ref']
  const recorded = await runVerify(
    [...engineArgs(engine), ...kube, ...args, '--mode', 'record', '--meter-window', '2s', '--health-budget', '8s'],
    { engine },
  )
  await engine.stop()
  expect(recorded.exitCode, recorded.stdout + recorded.stderr).toBe(0)
  const commands = (JSON.parse(readFileSync(join(folder, 'host.json'), 'utf8')) as Array<{ command: string }>).map((e) => e.command)
  expect(commands).toContain('kubectl get pod --context=armproof-ref --namespace=llm rec-pod -o json')
  expect(commands).toContain('{ kubectl exec --context=armproof-ref --namespace=llm rec-pod -- radiance --help ; } 2>&1')
  expect(commands.some((c) => c.startsWith("kubectl exec --context=armproof-ref --namespace=llm rec-pod -- sh -c '"))).toBe(true)
  expect(commands).toContain('{ kubectl logs --context=armproof-ref --namespace=llm --tail 100000 rec-pod ; } 2>&1')
  expect(commands.some((c) => c.startsWith('systemctl'))).toBe(false)
  const socketLog = join(folder, '..', `${folder.split('/').pop()}-sockets.log`)
  dirs.push(socketLog)
  const replayed = await replay(args, socketLog)
  expect(replayed.exitCode, replayed.stdout + replayed.stderr).toBe(0)
  expect(verdicts(replayed.report)).toEqual(verdicts(recorded.report))
  expect(replayed.report!.run?.skips).toEqual(['dropins'])
  expect(existsSync(socketLog) ? readFileSync(socketLog, 'utf8') : '').toBe('')
  cleanup(replayed)
  cleanup(recorded)
})

// These end before any proof step (exit 2): the same verify() in this process.
describe.concurrent('replay refuses fixtures of another run', () => {
  test.each([
    [['--knob', 'BUSY_PREFILL_CHUNK', '--value', '1'], /recorded for --knob PREFILL_INTERLEAVE, not BUSY_PREFILL_CHUNK/],
    [['--knob', 'PREFILL_INTERLEAVE', '--value', '2'], /recorded for --value 1, not 2/],
  ])('%j exits 2', async (args, message) => {
    const run = await verifyInProcess(['--svc', 'demo', ...args, '--mode', 'replay', '--fixtures', 'fixtures/demo/PREFILL_INTERLEAVE'])
    expect(run.exitCode).toBe(2)
    expect(run.stderr).toMatch(message)
    cleanup(run)
  })

  test('a missing recording exits 2 and says how to record one', async () => {
    const run = await verifyInProcess(['--svc', 'nothing-here', '--knob', 'PREFILL_INTERLEAVE', '--mode', 'replay'])
    expect(run.exitCode).toBe(2)
    expect(run.stderr).toMatch(/no recording at fixtures\/nothing-here\/PREFILL_INTERLEAVE\/run.json; record one with --mode record/)
    cleanup(run)
  })
})

describe.concurrent('the committed demo recordings', () => {
  test.each([
    ['demo', 0, 'green'],
    ['demo-ignored', 1, 'red'],
  ])('fixtures/%s replays to exit %i (%s)', async (svc, exit, verdict) => {
    const run = await runVerify(['--svc', svc, '--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--mode', 'replay'])
    expect(run.exitCode, run.stdout + run.stderr).toBe(exit)
    expect(run.report!.verdict).toBe(verdict)
    cleanup(run)
  })
})
