// The tests' verify hosts (test/support/verify-host*.ts): a run on a host is the run its child
// `node bin/verify.ts …` would have been (exit code, stdout, stderr, report: the launcher named
// in messages, the env replaced wholesale run by run, the working folder), several runs share one
// host, a run past its timeout gets what execa gives a child past it and its host is replaced; the
// broker shares one pool among every worker of a run (a host serves runs of several processes, a
// run finding every host busy is told so, a worker dying mid-run frees its host); and which runs
// may go to a host at all (test/support/verify-route.ts).
import { createServer } from 'node:http'
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { execa } from 'execa'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { ROOT, childEnv, childRun } from '../support/run-verify.ts'
import { hostRun as routedRun } from '../support/verify-host.ts'
import { BROKER_ENV, brokerRun, startBroker, type Broker } from '../support/verify-host-broker.ts'
import type { HostedRun } from '../support/verify-host-pool.ts'
import { imports, startKey, unhostable } from '../support/verify-route.ts'
import { DEMO_ARM } from '../support/demo-args.ts'
import { parseStat } from '../../helpers/engine/proc.ts'

const dir = mkdtempSync(join(tmpdir(), 'armproof-vhost-'))
const CLIENT = join(ROOT, 'test/support/verify-host-client-main.ts')
// A broker of this file's own, its hosts known to these tests alone: one host, as a pool at its cap
// (a run of another start key ends it once idle for EVICT_IDLE_MS); every host run here goes through it.
const EVICT_IDLE_MS = 2000
let broker: Broker
beforeAll(async () => (broker = await startBroker(1, EVICT_IDLE_MS)))
afterAll(async () => {
  await broker.close()
  rmSync(dir, { recursive: true, force: true })
})

const BASE = { CI: 'true', VERIFY_NO_DOTENV: '1' }
const REPLAY = [...DEMO_ARM, '--mode', 'replay']

/** An endpoint that takes every request and never answers (first contact waits out its budget), and verify's args for it. */
async function hungEndpoint() {
  let reached = (): void => {}
  const server = createServer(() => reached())
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    args: ['--svc', 'hung', '--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--base-url', url, '--process', 'radiance', '--host', 'local'],
    /** Resolves once a request came. */
    reached: new Promise<void>((resolve) => (reached = resolve)),
    close: () => {
      server.closeAllConnections()
      server.close()
    },
  }
}

/** `ask` again (every 100 ms, up to 5 s) until a host takes the run: a host idle for too short to be evicted, or freed by a connection the broker sees closed a moment after. */
const untilHosted = async (ask: () => Promise<HostedRun | null>): Promise<HostedRun> => {
  for (let i = 0; i < 50; i++) {
    const run = await ask()
    if (run) return run
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(
    'no host took the run within 5 s (expected: a host freed, or an idle one evicted, within that); every answer was null (busy)',
  )
}

/** What differs between two runs of the same thing: durations, clock times, ports of the moment. */
const timeless = (text: string): string =>
  text
    .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>')
    .replace(/\d+(\.\d+)?\s?(ms|s)\b/g, '<d>')
    .replace(/"(durationMs|ms|elapsedMs)":\s?[\d.]+/g, '"$1":<d>')

interface Outcome {
  exitCode: number | null | undefined
  stdout: string
  stderr: string
  report: string | null
}

/** A run on the file's broker, as a worker asks it: null when its host is busy. */
async function hostRun(args: readonly string[], env: Record<string, string>, cwd: string, timeoutMs: number): Promise<HostedRun | null> {
  const run = await brokerRun(broker.address, { args, env, cwd, timeoutMs })
  expect(run, 'the broker answered').not.toBe('unreachable')
  return run as HostedRun | null
}

/** The run of `args` on a host (the file's broker's) and in a child, side by side, each with its report (its path shown as <report>). */
async function both(args: readonly string[], overlay: Record<string, string>, cwd = ROOT, timeout = 60_000) {
  const env = { ...BASE, ...overlay }
  const once = async (where: 'host' | 'child') => {
    const report = join(mkdtempSync(join(dir, `${where}-`)), 'report.json')
    const argv = [...args, '--report', report]
    const r = where === 'host' ? await hostRun(argv, childEnv(env), cwd, timeout) : await childRun(argv, env, cwd, timeout)
    expect(r, 'a host was free').not.toBeNull()
    const same = (text: string): string => timeless(text.replaceAll(report, '<report>'))
    const outcome: Outcome = {
      exitCode: r!.exitCode,
      stdout: same(r!.stdout),
      stderr: same(r!.stderr),
      report: existsSync(report) ? same(readFileSync(report, 'utf8')) : null,
    }
    return { outcome, pid: 'pid' in r! ? r.pid : 0 }
  }
  const [host, child] = await Promise.all([once('host'), once('child')])
  return { host: host.outcome, child: child.outcome, pid: host.pid }
}

describe('a run on a verify host is the run its child would have been', () => {
  test('exit code, stdout, stderr and report alike: a green replay, a refused configuration, a relative path against the run folder, the env of each run its own', async () => {
    const green = await both(REPLAY, {})
    expect(green.host.exitCode).toBe(0)
    expect(green.host).toEqual(green.child)
    // The launcher in messages: the host's argv[1] is bin/verify.ts, as the child's.
    expect(green.host.stdout).toMatch(/next: (node bin\/writeback\.ts|pnpm writeback) /)

    const refused = await both(['--svc', 'bad name'], {})
    expect(refused.host.exitCode).toBe(2)
    expect(refused.host).toEqual(refused.child)

    // The run's folder: a relative --fixtures is found from it (from the host's folder before, it is not there).
    const folder = mkdtempSync(join(dir, 'cwd-'))
    cpSync(join(ROOT, 'fixtures/demo/PREFILL_INTERLEAVE'), join(folder, 'recording'), { recursive: true })
    const relative = await both([...REPLAY, '--fixtures', 'recording'], {}, folder)
    expect(relative.host.exitCode).toBe(0)
    expect(relative.host).toEqual(relative.child)

    // The env, wholesale: a red run under GitHub Actions writes its annotations; the next run, without, writes none.
    const red = ['--svc', 'demo-ignored', ...REPLAY.slice(2)]
    const actions = await both(red, { GITHUB_ACTIONS: 'true' })
    expect(actions.host).toEqual(actions.child)
    const after = await both(red, {})
    expect(after.host).toEqual(after.child)
    expect([actions.host.exitCode, actions.host.stdout.includes('::error '), after.host.stdout.includes('::error ')]).toEqual([
      1,
      true,
      false,
    ])

    // All of it on one host.
    expect(new Set([green.pid, refused.pid, relative.pid, actions.pid, after.pid]).size).toBe(1)
  })

  test('a run with a per-run preload (no-sockets) takes the host a plain run had; the preload is in force in that run only, as in a child with it; each run its own socket log', async () => {
    const preload = { NODE_OPTIONS: `--import=${join(ROOT, 'test/support/no-sockets.ts')}` }
    // The pool's one host, with the worker's own env.
    const plain = await untilHosted(() => hostRun(REPLAY, childEnv(BASE), ROOT, 60_000))
    expect(plain?.exitCode).toBe(0)
    // A live run: its first connection is refused by the preload, and logged to that run's own file.
    const live = [...DEMO_ARM, '--host', 'local', '--base-url', 'http://127.0.0.1:9', '--no-dropin-check']
    const logs = [join(dir, 'sockets-1.log'), join(dir, 'sockets-2.log'), join(dir, 'sockets-plain.log')]
    const preloaded = (log: string) => hostRun(live, childEnv({ ...BASE, ...preload, ARMPROOF_SOCKET_LOG: log }), ROOT, 60_000)
    const hosted = [await preloaded(logs[0]!), await preloaded(logs[1]!)]
    expect(hosted.map((r) => r?.pid)).toEqual([plain!.pid, plain!.pid])
    for (const [i, run] of hosted.entries()) expect(readFileSync(logs[i]!, 'utf8')).toMatch(new RegExp(`^${run!.pid} connect `, 'm'))
    // The same live run on that host without the preload in its NODE_OPTIONS: nothing refused, nothing logged.
    const after = await hostRun(live, childEnv({ ...BASE, ARMPROOF_SOCKET_LOG: logs[2]! }), ROOT, 60_000)
    expect(after?.pid).toBe(plain!.pid)
    expect(existsSync(logs[2]!)).toBe(false)
    const child = await childRun(live, { ...BASE, ...preload, ARMPROOF_SOCKET_LOG: join(dir, 'sockets-child.log') }, ROOT, 60_000)
    expect(readFileSync(join(dir, 'sockets-child.log'), 'utf8')).toMatch(/^\d+ connect /m)
    expect([hosted[0]!.exitCode, timeless(hosted[0]!.stdout), timeless(hosted[0]!.stderr)]).toEqual([
      child.exitCode,
      timeless(child.stdout),
      timeless(child.stderr),
    ])
    expect(hosted[0]!.exitCode).toBe(2)
    const childAfter = await childRun(live, { ...BASE, ARMPROOF_SOCKET_LOG: join(dir, 'sockets-child-plain.log') }, ROOT, 60_000)
    expect([after!.exitCode, timeless(after!.stdout), timeless(after!.stderr)]).toEqual([
      childAfter.exitCode,
      timeless(childAfter.stdout),
      timeless(childAfter.stderr),
    ])
  })

  test('at the cap, a run of another start key ends an idle host only once that one has been idle long enough; until then it is told to take a child', async () => {
    const plain = await untilHosted(() => hostRun(REPLAY, childEnv(BASE), ROOT, 60_000))
    expect(plain?.exitCode).toBe(0)
    const other = () => hostRun(REPLAY, childEnv({ ...BASE, TZ: 'UTC' }), ROOT, 60_000)
    expect(await other()).toBeNull()
    const first = await untilHosted(other)
    expect(first, 'a host was started in place of an idle one').not.toBeNull()
    expect(first!.exitCode).toBe(0)
    expect(first!.pid).not.toBe(plain!.pid)
    expect((await other())?.pid).toBe(first!.pid)
    // The one it replaced is ended.
    await expect.poll(() => existsSync(`/proc/${plain!.pid}`)).toBe(false)
  })

  test('a run past its timeout is ended as a child past it is (SIGTERM: the interrupted report, exit 143); a fresh host takes the next run', async () => {
    const hung = await hungEndpoint()
    try {
      const first = await untilHosted(() =>
        hostRun(['--svc', 'demo', '--knob', 'PREFILL_INTERLEAVE', '--version'], childEnv(BASE), ROOT, 60_000),
      )
      const timedOut = await both(hung.args, {}, ROOT, 4000)
      expect(timedOut.host).toEqual(timedOut.child)
      expect(timedOut.host.exitCode).toBe(143)
      expect(timedOut.host.stdout).toContain('INTERRUPTED')
      expect(timedOut.pid).toBe(first!.pid)
      const next = await both(REPLAY, {})
      expect(next.host.exitCode).toBe(0)
      expect(next.pid).not.toBe(timedOut.pid)
    } finally {
      hung.close()
    }
  })
})

describe('the broker: one pool of hosts for every worker of a `pnpm test`', () => {
  /** The parent of process `pid` (field 4 of /proc/PID/stat, after the command's parenthesis). */
  const parentOf = (pid: number): number => Number(parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.ppid)
  /** A run of `args` asked of the broker at `address` by another process, as another worker would. */
  const otherWorker = (address: string, args: readonly string[]) =>
    execa(process.execPath, [CLIENT, address, ...args], { env: BASE, reject: false, stdin: 'ignore' })

  test('a second process’s run (another worker’s) lands on the host this one’s run started; the hosts are the broker’s children', async () => {
    const mine = await hostRun(REPLAY, childEnv(BASE), ROOT, 60_000)
    const other = await otherWorker(broker.address, [...REPLAY, '--report', join(mkdtempSync(join(dir, 'other-')), 'report.json')])
    expect(other.exitCode, `the other process's stderr:\n${other.stderr}`).toBe(0)
    const answer = JSON.parse(String(other.stdout)) as HostedRun
    expect([mine?.exitCode, other.exitCode, answer.exitCode, answer.pid]).toEqual([0, 0, 0, mine!.pid])
    // This process's (the broker's), as in `pnpm test` they are vitest's main process's.
    expect(parentOf(mine!.pid)).toBe(process.pid)
  })

  test('a run that finds every host busy is answered null (it takes a child); a worker that dies mid-run frees its host at once', async () => {
    const hung = await hungEndpoint()
    try {
      const dying = otherWorker(broker.address, hung.args)
      // Its run is under way on the one host: it reached the endpoint.
      await hung.reached
      expect(await hostRun(REPLAY, childEnv(BASE), ROOT, 60_000)).toBeNull()
      dying.kill('SIGKILL')
      await dying
      // Not busy until its 60 s timeout: the next run takes a fresh host as soon as the broker sees the worker gone.
      const next = await untilHosted(() => hostRun(REPLAY, childEnv(BASE), ROOT, 60_000))
      expect(next?.exitCode).toBe(0)
    } finally {
      hung.close()
    }
  })

  test('in this run, a worker’s runs go to the broker of the whole run (hosts of vitest’s main process); with no broker at its address, to a pool of the worker’s own', async () => {
    expect(process.env[BROKER_ENV], 'the unit project’s globalSetup started the broker').toMatch(/armproof-broker-/)
    const version = ['--svc', 'demo', '--knob', 'PREFILL_INTERLEAVE', '--version']
    const shared = await untilHosted(() => routedRun(version, childEnv(BASE), ROOT, 60_000))
    expect([shared?.exitCode, parentOf(shared!.pid)]).toEqual([0, process.ppid])
    vi.stubEnv(BROKER_ENV, join(dir, 'no-broker'))
    try {
      const own = await routedRun(version, childEnv(BASE), ROOT, 60_000)
      expect([own?.exitCode, parentOf(own!.pid)]).toEqual([0, process.pid])
    } finally {
      vi.unstubAllEnvs()
    }
  })

  // Last: it ends the file's broker.
  test('the socket’s folder is private (0700); the teardown ends the hosts and removes it', async () => {
    const folder = dirname(broker.address)
    expect(statSync(folder).mode & 0o777).toBe(0o700)
    const last = await untilHosted(() =>
      hostRun(['--svc', 'demo', '--knob', 'PREFILL_INTERLEAVE', '--version'], childEnv(BASE), ROOT, 60_000),
    )
    await broker.close()
    expect(existsSync(folder)).toBe(false)
    await expect.poll(() => existsSync(`/proc/${last!.pid}`)).toBe(false)
  })
})

describe('which runs go to a host', () => {
  const base = { PATH: '/usr/bin', NODE_COMPILE_CACHE: '/c', LANG: 'C.UTF-8' }
  test('a run whose env Node (or the launcher) reads only at start differs from the worker’s takes a child; every other run a host', () => {
    expect(unhostable({ ...BASE, VERIFY_API_KEY: 'k', PATH: '/shims:/usr/bin', GITHUB_STEP_SUMMARY: '/s' }, base)).toBeNull()
    expect(unhostable({ NODE_COMPILE_CACHE: '/c', LANG: 'C.UTF-8' }, base)).toBeNull()
    const startRead: Array<Record<string, string>> = [
      { NODE_OPTIONS: '--import=./test/support/no-sockets.ts' },
      { NODE_OPTIONS: `--import=${join(ROOT, 'test/support/throw-in.ts')}` },
      { NODE_OPTIONS: `--import=${join(ROOT, 'test/support/no-sockets.ts')} --import=${join(ROOT, 'test/support/throw-in.ts')}` },
      { NODE_EXTRA_CA_CERTS: '/ca.pem' },
      { NODE_COMPILE_CACHE: '/other' },
      { UV_THREADPOOL_SIZE: '1' },
      { SSL_CERT_FILE: '/ca.pem' },
      { TZ: 'UTC' },
      { LC_ALL: 'C' },
      { npm_lifecycle_event: 'verify' },
      { ARMPROOF_LAUNCHER: 'bootstrap:verify' },
    ]
    for (const overlay of startRead) expect(unhostable(overlay, base), JSON.stringify(overlay)).toMatch(/is read once per process/)
    expect(unhostable({}, { ...base, ARMPROOF_TEST_VERIFY_HOST: '0' })).toBe('ARMPROOF_TEST_VERIFY_HOST=0')
    // A host serves only runs that would have started as it started (the worker's env may have changed since).
    expect(startKey({ ...base, VERIFY_API_KEY: 'k', PATH: '/x' })).toBe(startKey({ LANG: 'C.UTF-8', NODE_COMPILE_CACHE: '/c' }))
    for (const overlay of startRead) expect(startKey({ ...base, ...overlay }), JSON.stringify(overlay)).not.toBe(startKey(base))
    // A preload in force only where the run's own NODE_OPTIONS names it (no-sockets, fs-faults), by its absolute path
    // (a relative one resolves against the folder a process starts in), goes to any host: every host loads it at its start.
    for (const preload of [
      `--import=${join(ROOT, 'test/support/no-sockets.ts')}`,
      `--import ${join(ROOT, 'test/support/no-sockets.ts')}`,
      `--import=${join(ROOT, 'test/support/fs-faults.ts')} --import=${join(ROOT, 'test/support/no-sockets.ts')}`,
    ]) {
      expect(unhostable({ NODE_OPTIONS: preload }, base), preload).toBeNull()
      expect(unhostable({ NODE_OPTIONS: preload }, { ...base, NODE_OPTIONS: '--max-old-space-size=4096' }), preload).toMatch(
        /once per process/,
      )
      expect(startKey({ ...base, NODE_OPTIONS: preload })).toBe(startKey(base))
    }
  })

  test('a per-run preload is in force where the NODE_OPTIONS in place imports it: by its path, by one relative to the working folder, in either spelling of --import', () => {
    const file = join(ROOT, 'test/support/no-sockets.ts')
    expect(imports(file, { NODE_OPTIONS: `--import=${file}` })).toBe(true)
    expect(imports(file, { NODE_OPTIONS: `--max-old-space-size=64 --import ${file}` })).toBe(true)
    expect(imports(file, { NODE_OPTIONS: '--import=./test/support/no-sockets.ts' }, ROOT)).toBe(true)
    expect(imports(file, { NODE_OPTIONS: '--import=./test/support/no-sockets.ts' }, join(ROOT, 'test'))).toBe(false)
    expect(imports(file, { NODE_OPTIONS: `--import=${join(ROOT, 'test/support/fs-faults.ts')}` })).toBe(false)
    expect(imports(file, { NODE_OPTIONS: `--require ${file}` })).toBe(false)
    expect(imports(file, {})).toBe(false)
  })
})
