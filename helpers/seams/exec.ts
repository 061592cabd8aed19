// Running one host program: in its own process group with stdin closed; when its time runs out
// the whole group gets SIGTERM, then SIGKILL, so a grandchild holding the pipes cannot keep us
// waiting. A batch (./host-batch.ts) is one program whose parts print marker lines: each part has
// its own timeout and output cap, watched here as the output streams in, so a part that hangs or
// floods ends the program at that part, and the parts before it keep their results. A caller that
// no longer wants the program (its run ended before a step took the read, ./read-ahead.ts) aborts
// its signal: the group is ended the same way, and the answer says `cancelled`.
//
// Not execa (the project's choice elsewhere, e.g. the tests), although execa 10 has each piece
// but one: `killDescendants`, `timeout` with `forceKillAfterDelay` and `maxBuffer` (in bytes with
// `encoding: 'buffer'`, per stream) do what the timers below do. The piece it lacks: its
// subprocess is a promise with no 'exit' event, and the promise waits for the pipes to close, so a
// command that exits while a background grandchild keeps its stdout open (`… & echo done`) would
// come back as a timeout after the whole host timeout instead of its output 200 ms after it exited
// (test/seams/host.test.ts, "a background grandchild holding the pipe"). Loading execa also costs
// about 100 ms of CPU per `pnpm verify` start (a sixth of a replayed run), for the one spawn here.
//
// Plain data in, plain data out: the same function runs in this process or in the spawner
// (./spawner.ts), a small process that forks cheaply where a large one cannot (./executor.ts).
import { spawn, type ChildProcessByStdio } from 'node:child_process'
import type { Readable } from 'node:stream'

/** After SIGTERM to the command's process group, how long before SIGKILL. */
export const KILL_GRACE_MS = 300
/** After the process exited (or was killed), how long to wait for its output to drain. */
export const DRAIN_MS = 200

export interface ExecPlan {
  file: string
  args: readonly string[]
  env: NodeJS.ProcessEnv
  /** The program's timeout; for a batch, the first part's (ssh's connect counts in it). */
  timeoutMs: number
  /** The most output (stdout and stderr together) kept; for a batch, per part. */
  maxOutput: number
  /** The program is a batch: its parts mark their start and end with `@@ap-<nonce> begin|end <i>` lines. */
  batch?: { nonce: string; timeoutsMs: readonly number[] }
}

export interface Exec {
  stdout: string
  stderr: string
  exitCode: number | null
  timedOut: boolean
  /** The output passed the cap: what is kept is its first `maxOutput` bytes. */
  cut: boolean
  spawnError?: string
  /** Ended (or never started) because the caller's signal aborted: nobody reads what it printed. */
  cancelled?: true
  /** A batch: the part that ran out of time or output (`timedOut`/`cut` are its), and each part's ms from its start to its end (null: did not end). */
  part?: { stopped: number | null; ms: Array<number | null> }
}

/** The process groups of the programs running now (each program leads its own). */
const groups = new Set<number>()
/** killAllGroups is this process's exit hook, from its first program on. */
let exitHooked = false

/**
 * Ends every program still running, with its whole group: when armproof is gone (the spawner), and
 * when this process exits (an interrupted run exits at once: nothing will read what they print).
 */
export function killAllGroups(): void {
  for (const pid of groups) {
    try {
      process.kill(-pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
  groups.clear()
}

/** The marker tag of a batch. */
export const batchTag = (nonce: string): string => `@@ap-${nonce} `

/**
 * Finds a batch's marker lines in one stream as it arrives (a marker may be split between
 * chunks); `seen(kind, index)` for each whole one, in order.
 */
export class MarkerScan {
  private tail = ''
  private readonly tag: string
  private readonly keep: number
  private readonly seen: (kind: 'begin' | 'end', index: number) => void
  constructor(nonce: string, seen: (kind: 'begin' | 'end', index: number) => void) {
    this.seen = seen
    this.tag = batchTag(nonce)
    this.keep = this.tag.length + 32
  }
  push(chunk: Buffer): void {
    const text = this.tail + chunk.toString('latin1')
    let from = 0
    for (;;) {
      const at = text.indexOf(this.tag, from)
      if (at < 0) break
      const eol = text.indexOf('\n', at)
      if (eol < 0) break
      const m = /^(begin|end) (\d{1,6})\b/.exec(text.slice(at + this.tag.length, eol))
      if (m) this.seen(m[1] as 'begin' | 'end', Number(m[2]))
      from = eol + 1
    }
    this.tail = text.slice(Math.max(from, text.length - this.keep))
  }
}

/** The answer for a program its caller no longer wanted before it started. */
export const cancelledExec = (): Exec => ({ stdout: '', stderr: '', exitCode: null, timedOut: false, cut: false, cancelled: true })

/** Runs `plan`; when `signal` aborts, the program's whole group is ended (TERM, then KILL) and the answer is marked `cancelled`. */
export function execPlan(plan: ExecPlan, signal?: AbortSignal): Promise<Exec> {
  const { file, args, env, maxOutput } = plan
  if (signal?.aborted) return Promise.resolve(cancelledExec())
  return new Promise((resolve) => {
    let child: ChildProcessByStdio<null, Readable, Readable>
    const started = performance.now()
    try {
      child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env })
    } catch (error) {
      resolve({ stdout: '', stderr: '', exitCode: null, timedOut: false, cut: false, spawnError: (error as Error).message })
      return
    }
    const pid = child.pid
    if (pid) groups.add(pid)
    if (!exitHooked) {
      exitHooked = true
      process.once('exit', killAllGroups)
    }
    const out: Buffer[] = []
    const err: Buffer[] = []
    let size = 0
    let cut = false
    let timedOut = false
    let cancelled = false
    let settled = false
    let exited = false
    let exitCode: number | null = null
    let open = 2
    const timers: NodeJS.Timeout[] = []
    const killGroup = (signal: NodeJS.Signals): void => {
      try {
        if (child.pid) process.kill(-child.pid, signal)
      } catch {
        // already gone
      }
    }
    /** Ends the program now (out of time or output): TERM, then KILL, then what came back. */
    const stop = (): void => {
      killGroup('SIGTERM')
      timers.push(setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS))
      timers.push(setTimeout(() => finish(), KILL_GRACE_MS + DRAIN_MS))
    }
    // A batch: the part under way, when it began, its timer; each part's ms.
    const batch = plan.batch
    let current = 0
    let partStarted = started
    let partTimer: NodeJS.Timeout | undefined
    let stopped: number | null = null
    const partMs: Array<number | null> = batch ? batch.timeoutsMs.map(() => null) : []
    const arm = (ms: number): void => {
      if (partTimer) clearTimeout(partTimer)
      partTimer = setTimeout(
        () => {
          if (settled || cancelled || stopped !== null) return
          timedOut = true
          exitCode = null
          stopped = current
          stop()
        },
        Math.max(1, ms),
      )
      timers.push(partTimer)
    }
    if (batch) {
      const onStdout = new MarkerScan(batch.nonce, (kind, i) => {
        if (stopped !== null || i >= batch.timeoutsMs.length) return
        const now = performance.now()
        if (kind === 'end' && i === current) {
          partMs[i] = Math.round(now - partStarted)
          if (partTimer) clearTimeout(partTimer)
        } else if (kind === 'begin' && i === current + 1 && partMs[current] !== null) {
          current = i
          partStarted = now
          size = 0
          arm(batch.timeoutsMs[i]!)
        }
      })
      child.stdout.on('data', (chunk: Buffer) => onStdout.push(chunk))
    }
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      if (cut || stopped !== null) return
      if (size + chunk.length > maxOutput) {
        // Past the cap: keep what fits, say so, and stop the program (its output is not judged).
        into.push(chunk.subarray(0, maxOutput - size))
        size = maxOutput
        cut = true
        if (batch) stopped = current
        stop()
        return
      }
      size += chunk.length
      into.push(chunk)
    }
    child.stdout.on('data', collect(out))
    child.stderr.on('data', collect(err))
    const finish = (spawnError?: string): void => {
      if (settled) return
      settled = true
      signal?.removeEventListener('abort', cancel)
      if (pid) groups.delete(pid)
      for (const t of timers) clearTimeout(t)
      child.stdout.destroy()
      child.stderr.destroy()
      resolve({
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        exitCode,
        timedOut,
        cut,
        ...(spawnError !== undefined ? { spawnError } : {}),
        ...(cancelled ? { cancelled: true as const } : {}),
        ...(batch ? { part: { stopped, ms: partMs } } : {}),
      })
    }
    const closed = (): void => {
      if (--open === 0 && exited) finish()
    }
    child.stdout.on('close', closed)
    child.stderr.on('close', closed)
    child.on('error', (error) => finish(error.message))
    child.on('exit', (code) => {
      exited = true
      if (!timedOut && !cancelled) exitCode = code
      if (open === 0) finish()
      else {
        // A background grandchild still holds the pipes: give the output a moment, then end the
        // rest of the group (host commands are reads; nothing they leave behind is wanted). What
        // the pipes hold by then is still read: the timer can fire before the loop has read the
        // end of output that was already there (a loop busy for longer than DRAIN_MS after the
        // exit), so the end waits for the pipes to close, which they do once the group is gone;
        // only a process that left the group can hold them past a second DRAIN_MS.
        timers.push(
          setTimeout(() => {
            killGroup('SIGKILL')
            timers.push(setTimeout(() => finish(), DRAIN_MS))
          }, DRAIN_MS),
        )
      }
    })
    // The caller let go: ended as a timeout ends it; an abort after the end changes nothing.
    function cancel(): void {
      if (settled || cancelled) return
      cancelled = true
      exitCode = null
      stop()
    }
    signal?.addEventListener('abort', cancel, { once: true })
    if (batch) arm(batch.timeoutsMs[0] ?? plan.timeoutMs)
    else {
      timers.push(
        setTimeout(
          () => {
            if (cancelled) return
            timedOut = true
            exitCode = null
            stop()
          },
          Math.max(1, plan.timeoutMs),
        ),
      )
    }
  })
}
