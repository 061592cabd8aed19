// `armproof serve` as a process (node bin/serve.ts), ended the ways a node ends it, with real
// verify runs under way (targets whose health step would wait 5 minutes on a port nothing serves):
// SIGKILL (the OOM killer's way, or a second kill): every run's process ends within a bounded time
// and its temp folder is gone, no run left with parent 1; SIGTERM: the run under way is answered
// with its interrupted report, the one waiting for a slot with 503, serve exits 143 and leaves
// nothing in its temp folder; the log never names a run folder that is gone; a second signal
// (SIGTERM twice, SIGINT then SIGTERM) with runs that do not end on their SIGTERM (SIGSTOPped):
// their groups are killed at once, not after the stop's 10 s grace, every request is answered,
// the exit code is the first signal's.
import { type ChildProcess, spawn } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, expect, test } from 'vitest'
import { writeTargets } from '../support/fleet.ts'
import { ROOT } from '../support/run-verify.ts'
import { tempDir } from '../support/temp-dir.ts'

const SLOW = { 'base-url': 'http://127.0.0.1:9', 'health-budget': '5m', host: 'deploy@gpu-7.invalid' }
const targets = writeTargets({ knob: 'PREFILL_INTERLEAVE', value: '1', previous: '0', 'no-dropin-check': 'true', 'host-timeout': '5s' }, [
  { svc: 'slow-a', ...SLOW },
  { svc: 'slow-b', ...SLOW },
  { svc: 'slow-c', ...SLOW },
])
const started: ChildProcess[] = []
/** Runs this file stopped (SIGSTOP): should a test fail half-way, they are killed here, by pid, never left stopped. */
const frozen = new Set<number>()
afterAll(() => {
  for (const c of started) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  for (const pid of frozen) if (alive(pid)) process.kill(pid, 'SIGKILL')
})

/** serve as its own process, in a temp folder of its own; its log, its URL once it listens, its runs' pids. */
async function startServe(extra: string[] = []) {
  const tmp = tempDir('armproof-serve-tmp-')
  const child = spawn(
    process.execPath,
    [join(ROOT, 'bin/serve.ts'), '--targets', targets, '--listen', '127.0.0.1:0', '--no-token', '--run-timeout', '2m', ...extra],
    { env: { ...process.env, TMPDIR: tmp, VERIFY_NO_DOTENV: '1', CI: 'true' }, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  started.push(child)
  let log = ''
  child.stdout!.on('data', (d) => (log += d))
  child.stderr!.on('data', (d) => (log += d))
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
  await expect.poll(() => /listening on (http:\/\/[\d.:]+)/.exec(log)?.[1], { timeout: 20_000 }).toBeTruthy()
  const url = /listening on (http:\/\/[\d.:]+)/.exec(log)![1]!
  const pids = () => [...log.matchAll(/verify runs as pid (\d+)/g)].map((m) => Number(m[1]))
  const folders = () => readdirSync(tmp).filter((n) => n.startsWith('armproof-serve-'))
  const probes = () => /probes and metrics on (http:\/\/[\d.:]+)/.exec(log)?.[1]
  return { child, url, tmp, log: () => log, pids, folders, exited, probes }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

test('SIGKILL of serve with runs under way: the runs end within seconds, their temp folders go', { timeout: 60_000 }, async () => {
  const s = await startServe()
  const asks = ['slow-a', 'slow-b'].map((svc) => fetch(`${s.url}/verify/${svc}`, { method: 'POST' }).catch((e: Error) => e.name))
  await expect.poll(() => s.pids().length, { timeout: 20_000 }).toBe(2)
  // Each run well started: its folder made, its verify past its start.
  await expect.poll(() => s.folders().length).toBe(2)
  await expect.poll(() => s.log().includes('[slow-a]') && s.log().includes('[slow-b]'), { timeout: 20_000 }).toBe(true)
  s.child.kill('SIGKILL')
  await s.exited
  await Promise.all(asks)
  // Four looks at its parent a second, then its interrupted report, then its exit: well within 15 s.
  await expect.poll(() => s.pids().filter(alive), { timeout: 15_000, interval: 200 }).toEqual([])
  await expect.poll(() => s.folders(), { timeout: 5_000 }).toEqual([])
})

test('SIGTERM: the run under way is answered with its interrupted report, the one waiting with 503; exit 143, no folder left', {
  timeout: 60_000,
}, async () => {
  const s = await startServe(['--max-runs', '1', '--metrics-listen', '127.0.0.1:0'])
  // The probes' own listener answers in full without a token.
  expect(await (await fetch(`${s.probes()}/healthz`)).json()).toEqual({ status: 'ok', running: 0, queued: 0, targets: 3 })
  const a = fetch(`${s.url}/verify/slow-a`, { method: 'POST' })
  await expect.poll(() => s.pids().length, { timeout: 20_000 }).toBe(1)
  const b = fetch(`${s.url}/verify/slow-b`, { method: 'POST' })
  await expect.poll(async () => ((await (await fetch(`${s.url}/healthz`)).json()) as { status: string }).status).toBe('ok')
  await expect.poll(() => s.log().includes('[slow-a]'), { timeout: 20_000 }).toBe(true)
  // b waits for the one slot (no token: /healthz says all).
  await expect.poll(async () => ((await (await fetch(`${s.url}/healthz`)).json()) as { queued: number }).queued).toBe(1)
  s.child.kill('SIGTERM')
  const [ra, rb] = await Promise.all([a, b])
  expect([ra.status, ((await ra.json()) as { verdict: string }).verdict]).toEqual([412, 'interrupted'])
  expect([rb.status, ((await rb.json()) as { error: string }).error]).toEqual([503, 'serve is shutting down; this run was not started'])
  expect(await s.exited).toBe(143)
  expect(s.folders()).toEqual([])
  expect(s.pids().filter(alive)).toEqual([])
  // The log names the report serve answered, never the run folder it removed.
  expect(s.log()).not.toContain(`${s.tmp}/armproof-serve-`)
})

/**
 * Two runs under way that do not end on SIGTERM (stopped with SIGSTOP: a verify whose event loop
 * is stuck, on a hung disk say, takes the SIGTERM and never acts on it), then the first signal:
 * serve asks them to stop and would wait STOP_GRACE_MS (10 s) before killing their groups itself.
 * The second signal is the operator saying "now": both groups are killed at once.
 */
async function wedgedRuns(s: Awaited<ReturnType<typeof startServe>>, svcs: readonly string[]): Promise<number[]> {
  await expect.poll(() => s.pids().length, { timeout: 20_000 }).toBe(svcs.length)
  await expect.poll(() => s.folders().length).toBe(svcs.length)
  // Each verify past its start (its own SIGTERM handling set up) before it is stopped.
  await expect.poll(() => svcs.every((svc) => s.log().includes(`[${svc}]`)), { timeout: 20_000 }).toBe(true)
  const pids = s.pids()
  for (const pid of pids) {
    frozen.add(pid)
    process.kill(pid, 'SIGSTOP')
  }
  return pids
}

/** Serve's answer to a request whose run its second signal killed: a report-shaped error, never a verdict. */
const killedAnswer = async (r: Response): Promise<[number, string, string, string | null]> => {
  const body = (await r.json()) as { verdict: string; reason: string; signal: string | null; error: string }
  expect(body.error).toMatch(/^the run wrote no report \(stopped: serve is shutting down\), ended by SIGKILL/)
  return [r.status, body.verdict, body.reason, body.signal]
}

test('SIGTERM, then SIGTERM again with runs that ignore the first: their groups are killed at once, every request answered, exit 143', {
  timeout: 60_000,
}, async () => {
  const s = await startServe(['--max-runs', '2'])
  const a = fetch(`${s.url}/verify/slow-a`, { method: 'POST' })
  const b = fetch(`${s.url}/verify/slow-b`, { method: 'POST' })
  const pids = await wedgedRuns(s, ['slow-a', 'slow-b'])
  const c = fetch(`${s.url}/verify/slow-c`, { method: 'POST' })
  await expect.poll(async () => ((await (await fetch(`${s.url}/healthz`)).json()) as { queued: number }).queued).toBe(1)

  s.child.kill('SIGTERM')
  // The one waiting for a slot is answered at once; the two under way do not end on their SIGTERM.
  const rc = await c
  expect([rc.status, ((await rc.json()) as { error: string }).error]).toEqual([503, 'serve is shutting down; this run was not started'])
  await expect.poll(() => s.log().includes('SIGTERM: not accepting requests')).toBe(true)
  await new Promise((r) => setTimeout(r, 500))
  expect(pids.filter(alive)).toEqual(pids)
  expect(s.child.exitCode).toBe(null)

  s.child.kill('SIGTERM')
  // "At once": well inside the 10 s serve would otherwise give a stopped run before killing it.
  await expect.poll(() => pids.filter(alive), { timeout: 4_000, interval: 100 }).toEqual([])
  await expect.poll(() => s.child.exitCode, { timeout: 4_000, interval: 100 }).toBe(143)
  expect(s.log()).toContain('SIGTERM again: killing 2 run(s) now')
  const answers = await Promise.all([a, b].map(async (r) => killedAnswer(await r)))
  expect(answers).toEqual([
    [500, 'error', 'run_failed', 'SIGKILL'],
    [500, 'error', 'run_failed', 'SIGKILL'],
  ])
  expect(s.folders()).toEqual([])
  expect(s.log()).not.toContain(`${s.tmp}/armproof-serve-`)
})

test('SIGINT, then SIGTERM: the runs are killed at once, /analysis still answers 200 with verdict error, exit 130', {
  timeout: 60_000,
}, async () => {
  const s = await startServe(['--max-runs', '2'])
  const a = fetch(`${s.url}/verify/slow-a`, { method: 'POST' })
  const b = fetch(`${s.url}/analysis/slow-b`, { method: 'POST' })
  const pids = await wedgedRuns(s, ['slow-a', 'slow-b'])
  s.child.kill('SIGINT')
  await expect.poll(() => s.log().includes('SIGINT: not accepting requests')).toBe(true)
  s.child.kill('SIGTERM')
  await expect.poll(() => pids.filter(alive), { timeout: 4_000, interval: 100 }).toEqual([])
  // The first signal decides the exit code.
  await expect.poll(() => s.child.exitCode, { timeout: 4_000, interval: 100 }).toBe(130)
  expect(await killedAnswer(await a)).toEqual([500, 'error', 'run_failed', 'SIGKILL'])
  expect(await killedAnswer(await b)).toEqual([200, 'error', 'run_failed', 'SIGKILL'])
  expect(s.folders()).toEqual([])
})
