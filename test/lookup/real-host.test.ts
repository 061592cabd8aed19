// The engine lookup through the real host seam on this machine: reference engines under one
// name on their own ports, a socket shared after a real fork, and the start time checked
// against the engine's own /metrics and against prometheus_client's formula run by python3.
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startEngine, type EngineHandle } from '../../engine/launch.ts'
import { startProxy } from '../../engine/proxy.ts'
import { findEngine, type EngineQuery } from '../../helpers/engine/find.ts'
import { unservedPort } from '../../helpers/engine/unserved.ts'
import { createHost } from '../../helpers/seams/host.ts'
import { pythonBin } from '../support/python.ts'

const RUN = process.pid % 100_000
const NAME = `rlook-${RUN}`
const engines: EngineHandle[] = []
let a: EngineHandle
let b: EngineHandle
const dir = mkdtempSync(join(tmpdir(), 'armproof-lookup-'))
/** The forking listener and its child: both are killed after the tests (the child holds the pipe too). */
const forked: number[] = []

beforeAll(async () => {
  a = await startEngine({
    svc: 'look-a',
    processName: NAME,
    args: ['--prefill-interleave', '1', '--load-closed-ms', '0', '--load-503-ms', '0'],
  })
  b = await startEngine({ svc: 'look-b', processName: NAME, args: ['--load-closed-ms', '0', '--load-503-ms', '0'] })
  engines.push(a, b)
  await Promise.all([a.waitReady(), b.waitReady()])
})
afterAll(async () => {
  // Each by its own pid, never 0 or a group: only what this file started.
  for (const pid of forked.filter((p) => Number.isInteger(p) && p > 1)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // gone already
    }
  }
  await Promise.all(engines.map((e) => e.stop()))
  rmSync(dir, { recursive: true, force: true })
})

const host = () => createHost({ host: { kind: 'local' }, sshOpts: [], deployUser: null, sudo: 'never', env: a.env })
const query = (port: number, name = NAME): EngineQuery => ({
  process: name,
  svc: 'look-a',
  unit: 'look-a',
  port,
  urlHost: '127.0.0.1',
  pidCmd: null,
  host: { kind: 'local' },
  timeoutMs: 10_000,
})

/** prometheus_client's process collector, as python3 runs it for `pid`. */
function pythonStartTime(pid: number): number {
  const code = [
    'import os, sys',
    "ticks = os.sysconf('SC_CLK_TCK')",
    "btime = next(float(l.split()[1]) for l in open('/proc/stat', 'rb') if l.startswith(b'btime '))",
    "parts = open('/proc/%s/stat' % sys.argv[1], 'rb').read().split(b')')[-1].split()",
    'print(repr(float(parts[19]) / ticks + btime))',
  ].join('\n')
  return Number(execFileSync(pythonBin(), ['-c', code, String(pid)], { encoding: 'utf8' }).trim())
}

describe('the engine lookup on this host', () => {
  test('each of two engines under one name is found by its own port, names the other, and carries the start time prometheus_client computes', async () => {
    for (const [mine, other] of [
      [a, b],
      [b, a],
    ] as const) {
      const found = await findEngine(host(), query(mine.port))
      expect(found).toMatchObject({
        kind: 'found',
        pid: String(mine.pids[0]),
        foundBy: 'listener',
        listenerTied: true,
        startTimeResolution: 0.01,
      })
      if (found.kind !== 'found') return
      expect(found.others).toEqual([{ pid: String(other.pids[0]), ports: [other.port], portsFrom: 'sockets' }])
      expect(found.argv).toContain(String(mine.port))
      expect(found.startTimeSeconds).toBe(pythonStartTime(mine.pids[0]!))
      // The engine's own page says the same, to its printed digits.
      const page = await (await fetch(`${mine.baseUrl}/metrics`)).text()
      const printed = Number(/^process_start_time_seconds (\S+)$/m.exec(page)![1])
      expect(Math.abs(printed - found.startTimeSeconds!)).toBeLessThan(found.startTimeResolution / 2)
    }
  })

  test('a listening socket shared by a parent and its forked child: the parent is the engine', async () => {
    const bin = join(dir, `rfork-${RUN}`)
    // The interpreter itself (python3 on PATH may be a wrapper script), under a name of its own.
    symlinkSync(pythonBin(), bin)
    const code =
      "import os, socket, sys, time\ns = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\nprint(s.getsockname()[1], flush=True)\nif os.fork() == 0: print(os.getpid(), flush=True)\ntime.sleep(60)"
    const child = spawn(bin, ['-c', code], { stdio: ['ignore', 'pipe', 'inherit'] })
    forked.push(child.pid!)
    // Whole lines only (a chunk may end mid-number): the port, then the child's pid.
    let text = ''
    const lines: string[] = []
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        text += String(d)
        const complete = text.split('\n')
        text = complete.pop()!
        lines.push(...complete.filter((l) => /^\d+$/.test(l)))
        if (lines.length >= 2) resolve()
      })
      child.once('exit', (code) => reject(new Error(`the forking listener exited ${code} before it printed its port and its child`)))
    })
    const [port, kid] = lines as [string, string]
    // Killed later by its pid, once it is known to be this listener's own child.
    expect(readFileSync(`/proc/${kid}/stat`, 'utf8')).toMatch(new RegExp(`^${kid} \\(rfork-${RUN}\\) \\S+ ${child.pid} `))
    forked.push(Number(kid))
    const found = await findEngine(host(), query(Number(port), `rfork-${RUN}`))
    expect(found).toMatchObject({ kind: 'found', pid: String(child.pid), foundBy: 'listener', others: [] })
    expect(found.kind === 'found' && found.how).toContain(`shared after a fork with pid ${kid}`)
  })

  test("behind a proxy, the engine is the container's (podman inspect and its process tree, read on this host), untied to the URL", async () => {
    const boxed = await startEngine({
      svc: 'look-box',
      processName: NAME,
      container: true,
      args: ['--load-closed-ms', '0', '--load-503-ms', '0'],
    })
    engines.push(boxed)
    const proxy = await startProxy(boxed.port)
    try {
      const seam = createHost({ host: { kind: 'local' }, sshOpts: [], deployUser: null, sudo: 'never', env: boxed.env })
      const found = await findEngine(seam, { ...query(proxy.port), svc: 'look-box' })
      expect(found).toMatchObject({
        kind: 'found',
        pid: String(boxed.pids[0]),
        foundBy: 'container',
        listenerTied: false,
        portHolders: [{ pid: String(process.pid) }],
      })
      expect(found.kind === 'found' && found.startTimeSeconds).toBe(pythonStartTime(boxed.pids[0]!))
    } finally {
      await proxy.stop()
    }
  })

  test("a port one off: first contact names the engines' ports, through the real seam", async () => {
    const r = await unservedPort(host(), query(a.port + 20_000 > 65_000 ? a.port - 1 : a.port + 20_000), `http://127.0.0.1:${a.port}`)
    expect(r?.message).toContain(`the engines named ${NAME} there listen on `)
    expect(r?.message).toContain(`port ${a.port} (pid ${a.pids[0]})`)
    expect(r?.message).toContain(`port ${b.port} (pid ${b.pids[0]})`)
  })
})
