// Verify hosts: long-lived node processes (./verify-host-main.ts) that run `pnpm verify` for the
// tests one run at a time, each as the child `node bin/verify.ts …` would have run it (its env,
// folder, argv, piped output, exit code), without a Node and vitest start per run. Started on the
// first run that needs one, at most HOSTS of them per test worker (a run beyond takes a child),
// reused by every later file of the worker (the unit project does not isolate files), and ended
// with the worker: killed when it exits, and each ends on its own once the worker's IPC channel
// closes. A run past its timeout gets what execa gives a child past it: SIGTERM (verify's own
// interrupt then writes the partial report and exits 143), SIGKILL 5 s later; that host is gone
// and a fresh one takes the next run. Which runs may come here: ./verify-route.ts.
import { fork, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import type { HostDoneMessage, HostRunMessage } from './verify-host-main.ts'
import { startKey } from './verify-route.ts'

const MAIN = fileURLToPath(new URL('./verify-host-main.ts', import.meta.url))
const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/**
 * Hosts per test worker: a file's runs side by side (a fleet's shards, the secrets runs) each take
 * one; a run that finds them all busy takes a child of its own rather than wait (runs wait on
 * engines' budgets, so queueing them would cost the file its wall time).
 */
export const HOSTS = 3
/** execa's forceKillAfterDelay: SIGKILL this long after the timeout's SIGTERM. */
const FORCE_KILL_MS = 5000

export interface HostedRun {
  /** null when the host was ended by a signal (execa's exitCode is then undefined). */
  exitCode: number | null
  stdout: string
  stderr: string
  timedOut: boolean
  /** The host's pid: a test tells the runs of one host from a fresh one's. */
  pid: number
}

interface Host {
  child: ChildProcess
  /** What of its env Node read at its start (./verify-route.ts): it serves only runs with the same. */
  key: string
  marker: string
  out: { stdout: Buffer[]; stderr: Buffer[] }
  busy: boolean
  /** Resolves on the host's first message (verify loaded) or once it has ended. */
  ready: Promise<void>
  onMessage: ((m: HostDoneMessage) => void) | null
  onChunk: (() => void) | null
  exited: { code: number | null } | null
  closed: boolean
  /** Called once it has ended and its pipes are drained. */
  onExit: (() => void) | null
}

const hosts = new Set<Host>()

function hold(h: Host, on: boolean): void {
  for (const handle of [h.child, h.child.channel, h.child.stdout, h.child.stderr] as Array<{ ref?(): void; unref?(): void } | null>)
    on ? handle?.ref?.() : handle?.unref?.()
}

/** A host started with `env`, the env of the run it starts for (what Node reads at start is that run's). */
function start(env: Record<string, string>): Host {
  const marker = `armproof-verify-host-${randomBytes(12).toString('hex')}`
  const child = fork(MAIN, [marker], {
    cwd: ROOT,
    env,
    execArgv: [],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  })
  let readied = (): void => {}
  const h: Host = {
    child,
    key: startKey(env),
    marker,
    out: { stdout: [], stderr: [] },
    busy: false,
    ready: new Promise((resolve) => (readied = resolve)),
    onMessage: null,
    onChunk: null,
    exited: null,
    closed: false,
    onExit: null,
  }
  for (const stream of ['stdout', 'stderr'] as const)
    child[stream]!.on('data', (d: Buffer) => {
      h.out[stream].push(d)
      h.onChunk?.()
    })
  child.on('message', (m: HostDoneMessage) => (m.id === 0 ? readied() : h.onMessage?.(m)))
  child.on('exit', (code) => {
    hosts.delete(h)
    h.exited = { code }
  })
  // Ended, and its pipes drained of what it wrote last.
  child.on('close', () => {
    h.closed = true
    readied()
    h.onExit?.()
  })
  hosts.add(h)
  hold(h, false)
  return h
}

/**
 * An idle host started as this run's child would start, a new one while there are fewer than
 * HOSTS (in place of an idle host started otherwise, which is ended), or none (the run takes a
 * child of its own).
 */
function acquire(env: Record<string, string>): Host | null {
  const key = startKey(env)
  const idle = [...hosts].filter((x) => !x.busy && !x.exited)
  let h = idle.find((x) => x.key === key) ?? null
  if (!h) {
    const other = hosts.size >= HOSTS ? idle.find((x) => x.key !== key) : undefined
    if (other) {
      hosts.delete(other)
      other.child.kill('SIGKILL')
    }
    if (hosts.size < HOSTS) h = start(env)
  }
  if (h) h.busy = true
  return h
}

/** A stream's text as execa gives it: decoded once whole, its last newline stripped. */
function text(chunks: Buffer[]): string {
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '')
}

/** The text up to the marker line, and what follows it (the next run's), or null while the marker has not come. */
function cut(chunks: Buffer[], marker: string): { run: Buffer[]; rest: Buffer[] } | null {
  const all = Buffer.concat(chunks)
  const line = Buffer.from(`\n${marker}\n`)
  const at = all.indexOf(line)
  if (at < 0) return null
  return { run: [all.subarray(0, at)], rest: [all.subarray(at + line.length)] }
}

/**
 * One run on a host: the args as given to bin/verify.ts, the env the child would have had
 * (wholesale), its folder; null when every host is busy (nothing ran).
 */
export async function hostRun(
  args: readonly string[],
  env: Record<string, string>,
  cwd: string,
  timeoutMs: number,
): Promise<HostedRun | null> {
  const h = acquire(env)
  if (!h) return null
  hold(h, true)
  await h.ready
  const pid = h.child.pid!
  try {
    return await new Promise<HostedRun>((resolve) => {
      let code: number | null = null
      let timedOut = false
      const finish = (result: HostedRun): void => {
        clearTimeout(timer)
        clearTimeout(force)
        h.onMessage = h.onChunk = h.onExit = null
        resolve(result)
      }
      const gone = (): void =>
        finish({ exitCode: h.exited?.code ?? null, stdout: text(h.out.stdout), stderr: text(h.out.stderr), timedOut, pid })
      const check = (): void => {
        if (code === null) return
        const out = cut(h.out.stdout, h.marker)
        const err = cut(h.out.stderr, h.marker)
        if (!out || !err) return
        h.out = { stdout: out.rest, stderr: err.rest }
        finish({ exitCode: code, stdout: text(out.run), stderr: text(err.run), timedOut, pid })
      }
      let force: NodeJS.Timeout | undefined
      const timer = setTimeout(() => {
        timedOut = true
        // Never handed another run, whether it ends on the signal or had just finished.
        hosts.delete(h)
        h.child.kill('SIGTERM')
        force = setTimeout(() => h.child.kill('SIGKILL'), FORCE_KILL_MS)
      }, timeoutMs)
      h.onMessage = (m) => {
        code = m.exitCode
        check()
      }
      h.onChunk = check
      h.onExit = gone
      if (h.closed) return gone()
      // What it printed between runs is no run's.
      h.out = { stdout: [], stderr: [] }
      h.child.send({ id: 1, args, env, cwd } satisfies HostRunMessage)
    })
  } finally {
    h.busy = false
    if (!h.exited) hold(h, false)
  }
}

/** Ends every host of this worker now (the worker exits; a test of the hosts starts afresh). */
export function endHosts(): void {
  for (const h of hosts) h.child.kill('SIGKILL')
}

process.once('exit', endHosts)
