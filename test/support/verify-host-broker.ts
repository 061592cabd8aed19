// The verify hosts of a whole `pnpm test` (a globalSetup of the unit project): one pool
// (./verify-host-pool.ts) in vitest's main process, which outlives every test file, shared by all
// the workers, so a host started for one file's run serves the runs of every later file of every
// worker. Workers reach it over a Unix socket in a folder of its own (mode 0700), whose path is in
// BROKER_ENV: set here before the workers start (vitest hands each worker its env as it is when the
// files run). One connection per run: the worker sends the run as one line of JSON (args, env,
// folder, timeout) and gets one line back, the run's result or `null` when every host is busy (the
// worker then takes a child of its own, as it would without the broker); a connection that closes
// before its answer (the worker died) ends that run's host at once, so no host stays busy for
// nobody. The teardown kills the hosts and removes the folder; the hosts also end on their own when
// this process's IPC channel to them closes.
import { mkdtempSync, rmSync } from 'node:fs'
import { createConnection, createServer, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { HostPool, type HostedRun } from './verify-host-pool.ts'

/** The broker's socket, for the workers (and the processes they start, which may use it too). */
export const BROKER_ENV = 'ARMPROOF_TEST_VERIFY_BROKER'
/**
 * Hosts of the whole run, of every start key together: the most runs of the workers' own env side
 * by side in a `pnpm test` (8, early: a fleet's shards and other files' runs), so those never take
 * a child. A host's start and first run cost some 0.9 CPU-s, a child 0.55, a run on a warm host
 * 0.06: a host pays only from its second run on.
 */
const BROKER_HOSTS = 8
/**
 * At the cap, a run of another start key ends an idle host only once that one has been idle this
 * long; until then it takes a child: runs of one key come in bursts, and a host ended for each
 * run of a burst is a host started again for the next run of its own key.
 */
const BROKER_EVICT_IDLE_MS = 20_000

export interface RunRequest {
  args: readonly string[]
  env: Record<string, string>
  cwd: string
  timeoutMs: number
}

interface RunReply {
  run: HostedRun | null
}

/** One value as a line: JSON escapes every newline inside it, so the line's end is the value's. */
const frame = (value: unknown): string => `${JSON.stringify(value)}\n`

/** Calls `onValue` with each line of JSON `socket` sends, however its bytes come split (a run's output may be MBs). */
function onLines(socket: Socket, onValue: (value: unknown) => void): void {
  let pending: Buffer[] = []
  socket.on('data', (data: Buffer) => {
    for (let at = data.indexOf(0x0a); at >= 0; at = data.indexOf(0x0a)) {
      const line = Buffer.concat([...pending, data.subarray(0, at)]).toString('utf8')
      pending = []
      data = data.subarray(at + 1)
      let value: unknown
      try {
        value = JSON.parse(line)
      } catch {
        return void socket.destroy()
      }
      onValue(value)
    }
    if (data.length > 0) pending.push(data)
  })
}

export interface Broker {
  /** The socket's path. */
  address: string
  /** Kills the hosts, closes the socket and removes its folder. */
  close(): Promise<void>
}

/** A broker listening on a socket in a new folder of the temp folder, its pool `cap` hosts (./verify-host-pool.ts). */
export async function startBroker(cap: number = BROKER_HOSTS, evictIdleMs: number = BROKER_EVICT_IDLE_MS): Promise<Broker> {
  // mkdtemp makes the folder 0700: only this user reaches the socket.
  const dir = mkdtempSync(join(tmpdir(), 'armproof-broker-'))
  const address = join(dir, 'socket')
  const pool = new HostPool(cap, evictIdleMs)
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    const gone = new AbortController()
    let answered = false
    socket.on('error', () => {})
    socket.on('close', () => {
      sockets.delete(socket)
      if (!answered) gone.abort()
    })
    let asked = false
    onLines(socket, (value) => {
      if (asked) return void socket.destroy()
      asked = true
      const r = value as RunRequest
      pool.run(r.args, r.env, r.cwd, r.timeoutMs, gone.signal).then(
        (run) => {
          answered = true
          socket.end(frame({ run } satisfies RunReply))
        },
        () => socket.destroy(),
      )
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(address, resolve)
  })
  // The teardown ends it; it never holds vitest's process open by itself.
  server.unref()
  return {
    address,
    close: async () => {
      pool.end()
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * The run on the pool of the broker at `address`: its result, null when every host was busy, or
 * 'unreachable' when no broker listens there (nothing ran). A broker that closes the connection
 * before its answer (ended mid-run) fails the run.
 */
export function brokerRun(address: string, run: RunRequest): Promise<HostedRun | null | 'unreachable'> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(address)
    let connected = false
    let settled = false
    socket.on('connect', () => {
      connected = true
      socket.write(frame(run))
    })
    onLines(socket, (value) => {
      settled = true
      resolve((value as RunReply).run)
      socket.destroy()
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      if (settled) return
      if (!connected) return resolve('unreachable')
      reject(
        new Error(
          `verify host broker at ${address} closed the connection before the run's answer (expected: one line, the run's result); ` +
            'next: the broker ended mid-run (its globalSetup torn down, or vitest ending): run the test again',
        ),
      )
    })
  })
}

/** vitest's globalSetup for the unit project: the broker for the whole run, its address in BROKER_ENV; the teardown ends it. */
export default async function setup(): Promise<() => Promise<void>> {
  const broker = await startBroker()
  process.env[BROKER_ENV] = broker.address
  return async () => {
    delete process.env[BROKER_ENV]
    await broker.close()
  }
}
