// The tests' verify hosts (test/support/verify-host.ts): a run on a host is the run its child
// `node bin/verify.ts …` would have been (exit code, stdout, stderr, report: the launcher named
// in messages, the env replaced wholesale run by run, the working folder), several runs share one
// host, a run past its timeout gets what execa gives a child past it and its host is replaced;
// and which runs may go to a host at all (test/support/verify-route.ts).
import { createServer } from 'node:http'
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { afterAll, describe, expect, test } from 'vitest'
import { ROOT, childEnv, childRun } from '../support/run-verify.ts'
import { HOSTS, hostRun } from '../support/verify-host.ts'
import { startKey, unhostable } from '../support/verify-route.ts'
import { DEMO_ARM } from '../support/demo-args.ts'

const dir = mkdtempSync(join(tmpdir(), 'armproof-vhost-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const BASE = { CI: 'true', VERIFY_NO_DOTENV: '1' }
const REPLAY = [...DEMO_ARM, '--mode', 'replay']

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

/** The run of `args` on a host and in a child, side by side, each with its report (its path shown as <report>). */
async function both(args: readonly string[], overlay: Record<string, string>, cwd = ROOT, timeout = 60_000) {
  const env = { ...BASE, ...overlay }
  const once = async (on: 'host' | 'child') => {
    const report = join(mkdtempSync(join(dir, `${on}-`)), 'report.json')
    const argv = [...args, '--report', report]
    const r = on === 'host' ? await hostRun(argv, childEnv(env), cwd, timeout) : await childRun(argv, env, cwd, timeout)
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

  test('a run with a per-run preload (no-sockets) takes a host started with it, in place of an idle one started otherwise; each run its own socket log', async () => {
    const preload = { NODE_OPTIONS: `--import=${join(ROOT, 'test/support/no-sockets.ts')}` }
    // Every host this worker may keep, with the worker's own env.
    const plain = await Promise.all(Array.from({ length: HOSTS }, () => hostRun(REPLAY, childEnv(BASE), ROOT, 60_000)))
    expect(plain.map((r) => r?.exitCode)).toEqual(Array.from({ length: HOSTS }, () => 0))
    // A live run: its first connection is refused by the preload, and logged to that run's own file.
    const live = [...DEMO_ARM, '--host', 'local', '--base-url', 'http://127.0.0.1:9', '--no-dropin-check']
    const logs = [join(dir, 'sockets-1.log'), join(dir, 'sockets-2.log')]
    const hosted = []
    for (const log of logs) hosted.push(await hostRun(live, childEnv({ ...BASE, ...preload, ARMPROOF_SOCKET_LOG: log }), ROOT, 60_000))
    const [first, second] = hosted
    expect(first, 'a host was started in place of an idle one').not.toBeNull()
    expect(second?.pid).toBe(first!.pid)
    expect(plain.map((r) => r!.pid)).not.toContain(first!.pid)
    for (const [i, log] of logs.entries()) expect(readFileSync(log, 'utf8')).toMatch(new RegExp(`^${hosted[i]!.pid} connect `, 'm'))
    const child = await childRun(live, { ...BASE, ...preload, ARMPROOF_SOCKET_LOG: join(dir, 'sockets-child.log') }, ROOT, 60_000)
    expect([first!.exitCode, timeless(first!.stdout), timeless(first!.stderr)]).toEqual([
      child.exitCode,
      timeless(child.stdout),
      timeless(child.stderr),
    ])
    expect(first!.exitCode).toBe(2)
  })

  test('a run past its timeout is ended as a child past it is (SIGTERM: the interrupted report, exit 143); a fresh host takes the next run', async () => {
    // An endpoint that takes every request and never answers: first contact waits out its budget.
    const server = createServer(() => {})
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    try {
      const hung = [
        '--svc',
        'hung',
        '--knob',
        'PREFILL_INTERLEAVE',
        '--value',
        '1',
        '--base-url',
        url,
        '--process',
        'radiance',
        '--host',
        'local',
      ]
      const first = await hostRun(['--svc', 'demo', '--knob', 'PREFILL_INTERLEAVE', '--version'], childEnv(BASE), ROOT, 60_000)
      const timedOut = await both(hung, {}, ROOT, 4000)
      expect(timedOut.host).toEqual(timedOut.child)
      expect(timedOut.host.exitCode).toBe(143)
      expect(timedOut.host.stdout).toContain('INTERRUPTED')
      expect(timedOut.pid).toBe(first!.pid)
      const next = await both(REPLAY, {})
      expect(next.host.exitCode).toBe(0)
      expect(next.pid).not.toBe(timedOut.pid)
    } finally {
      server.closeAllConnections()
      server.close()
    }
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
    // A preload that reads its env at each use (no-sockets, fs-faults) goes to a host started with it, by its absolute path
    // (a relative one resolves against the folder a process starts in); never to the worker's hosts (another key).
    for (const preload of [
      `--import=${join(ROOT, 'test/support/no-sockets.ts')}`,
      `--import ${join(ROOT, 'test/support/no-sockets.ts')}`,
      `--import=${join(ROOT, 'test/support/fs-faults.ts')} --import=${join(ROOT, 'test/support/no-sockets.ts')}`,
    ]) {
      expect(unhostable({ NODE_OPTIONS: preload }, base), preload).toBeNull()
      expect(unhostable({ NODE_OPTIONS: preload }, { ...base, NODE_OPTIONS: '--max-old-space-size=4096' }), preload).toMatch(
        /once per process/,
      )
      expect(startKey({ ...base, NODE_OPTIONS: preload })).not.toBe(startKey(base))
    }
  })
})
