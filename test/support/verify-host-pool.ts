// A pool of verify hosts: long-lived node processes (./verify-host-main.ts) that run `pnpm verify`
// for the tests one run at a time, each as the child `node bin/verify.ts …` would have run it (its
// env, folder, argv, piped output, exit code), without a Node and vitest start per run. A host is
// started on the first run that needs one, at most `cap` of them (a run beyond is refused: the
// caller takes a child), and reused by every later run with the same start key (./verify-route.ts).
// A pool lives in the broker (./verify-host-broker.ts: one for the whole `pnpm test`) or in a test
// worker of its own (./verify-host.ts, when there is no broker); its hosts are killed when that
// process exits, and each ends on its own once its parent's IPC channel closes. A run past its
// timeout gets what execa gives a child past it: SIGTERM (verify's own interrupt then writes the
// partial report and exits 143), SIGKILL 5 s later; that host is gone and a fresh one takes the
// next run.
import { fork, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import type { HostDoneMessage, HostRunMessage } from './verify-host-main.ts'
import { PER_RUN_PRELOADS, startKey } from './verify-route.ts'

const MAIN = fileURLToPath(new URL('./verify-host-main.ts', import.meta.url))
const ROOT = fileURLToPath(new URL('../..', import.meta.url))

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
  /** When it last became idle (its start, or its last run's end; performance.now()). */
  freed: number
  /** Resolves on the host's first message (verify loaded) or once it has ended. */
  ready: Promise<void>
  onMessage: ((m: HostDoneMessage) => void) | null
  onChunk: (() => void) | null
  exited: { code: number | null } | null
  closed: boolean
  /** Called once it has ended and its pipes are drained. */
  onExit: (() => void) | null
}

/** Every host of every pool of this process: killed when it exits. */
const live = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL')
})

function hold(h: Host, on: boolean): void {
  for (const handle of [h.child, h.child.channel, h.child.stdout, h.child.stderr] as Array<{ ref?(): void; unref?(): void } | null>)
    on ? handle?.ref?.() : handle?.unref?.()
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

export class HostPool {
  private readonly hosts = new Set<Host>()
  /** At most `cap` hosts at once, of every start key together. */
  readonly cap: number
  /** At the cap, an idle host of another key is ended for a new one only once it has been idle this long. */
  readonly evictIdleMs: number

  constructor(cap: number, evictIdleMs = 0) {
    this.cap = cap
    this.evictIdleMs = evictIdleMs
  }

  /** A host started with `env`, the env of the run it starts for (what Node reads at start is that run's). */
  private start(env: Record<string, string>): Host {
    const marker = `armproof-verify-host-${randomBytes(12).toString('hex')}`
    const child = fork(MAIN, [marker], {
      cwd: ROOT,
      env,
      // The per-run preloads, each in force only in a run whose NODE_OPTIONS names it (./verify-route.ts).
      execArgv: PER_RUN_PRELOADS.flatMap((file) => ['--import', file]),
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    })
    let readied = (): void => {}
    const h: Host = {
      child,
      key: startKey(env),
      marker,
      out: { stdout: [], stderr: [] },
      busy: false,
      freed: performance.now(),
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
    // A run sent as it ended is answered by its exit (onExit), not by an error of this process.
    child.on('error', () => {})
    child.on('message', (m: HostDoneMessage) => (m.id === 0 ? readied() : h.onMessage?.(m)))
    child.on('exit', (code) => {
      this.hosts.delete(h)
      live.delete(child)
      h.exited = { code }
    })
    // Ended, and its pipes drained of what it wrote last.
    child.on('close', () => {
      h.closed = true
      readied()
      h.onExit?.()
    })
    this.hosts.add(h)
    live.add(child)
    hold(h, false)
    return h
  }

  /** Takes `h` out of the pool now (it never gets another run) and kills it with `signal`. */
  private drop(h: Host, signal: NodeJS.Signals): void {
    this.hosts.delete(h)
    h.child.kill(signal)
  }

  /**
   * An idle host started as this run's child would start (the one idle the shortest: the others
   * may be evicted), a new one while there are fewer than `cap` (at the cap, in place of the idle
   * host started otherwise that has been idle the longest, if for evictIdleMs at least: it is
   * ended), or none (the run takes a child of its own).
   */
  private acquire(env: Record<string, string>): Host | null {
    const key = startKey(env)
    const now = performance.now()
    const idle = [...this.hosts].filter((x) => !x.busy && !x.exited).sort((a, b) => b.freed - a.freed)
    let h = idle.find((x) => x.key === key) ?? null
    if (!h) {
      const other = this.hosts.size >= this.cap ? idle.findLast((x) => x.key !== key) : undefined
      if (other && now - other.freed >= this.evictIdleMs) this.drop(other, 'SIGKILL')
      if (this.hosts.size < this.cap) h = this.start(env)
    }
    if (h) h.busy = true
    return h
  }

  /**
   * One run on a host: the args as given to bin/verify.ts, the env the child would have had
   * (wholesale), its folder; null when every host is busy (nothing ran). `abort` ends the run's
   * host at once (whoever asked for the run is gone).
   */
  async run(
    args: readonly string[],
    env: Record<string, string>,
    cwd: string,
    timeoutMs: number,
    abort?: AbortSignal,
  ): Promise<HostedRun | null> {
    const h = this.acquire(env)
    if (!h) return null
    const kill = (): void => this.drop(h, 'SIGKILL')
    if (abort?.aborted) kill()
    abort?.addEventListener('abort', kill)
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
          this.drop(h, 'SIGTERM')
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
      abort?.removeEventListener('abort', kill)
      h.busy = false
      h.freed = performance.now()
      if (!h.exited) hold(h, false)
    }
  }

  /** Ends every host of the pool now (its process ends; a test of the hosts starts afresh). */
  end(): void {
    for (const h of this.hosts) this.drop(h, 'SIGKILL')
  }
}
