// A verify that `armproof serve` started (helpers/serve/run.ts) ends with serve, whatever ends
// serve: SIGTERM, a second SIGTERM, SIGKILL, the OOM killer. serve tells its child, in
// ARMPROOF_SERVED_RUN, its own pid, the run's folder and the run's deadline (--run-timeout); the
// child looks at its parent four times a second (process.ppid: once serve is gone the child has
// been handed to init or a subreaper) and keeps its own deadline. Either way it stops as an
// operator's SIGTERM stops it (the partial report, its own children ended) and, its parent gone,
// removes the run's folder, which no one else will; a child that has not ended `graceMs` later is
// killed with its whole process group (serve made it a group leader).
import { rmSync } from 'node:fs'
import { basename, isAbsolute } from 'node:path'
import { command } from '../config/invocation.ts'

export const SERVED_RUN_ENV = 'ARMPROOF_SERVED_RUN'

export interface ServedRun {
  /** serve's pid: the parent this run must keep. */
  parent: number
  /** The run's own temp folder (its report), removed when the run outlives serve. */
  dir: string
  /** Unix ms: past this the run stops itself, as serve would stop it at --run-timeout. */
  deadline: number
  /** How long a stopped run may take to end before its group is killed. */
  graceMs: number
}

const POLL_MS = 250

/** The served run's terms from env, or undefined when this verify was not started by serve (or the value is not serve's). */
export function servedRunOf(env: Readonly<Record<string, string | undefined>>): ServedRun | undefined {
  const raw = env[SERVED_RUN_ENV]
  if (!raw) return undefined
  let v: Partial<ServedRun>
  try {
    v = JSON.parse(raw) as Partial<ServedRun>
  } catch {
    return undefined
  }
  const ok =
    Number.isInteger(v.parent) &&
    v.parent! > 1 &&
    typeof v.dir === 'string' &&
    isAbsolute(v.dir) &&
    basename(v.dir).startsWith('armproof-serve-') &&
    Number.isFinite(v.deadline) &&
    Number.isFinite(v.graceMs)
  return ok ? (v as ServedRun) : undefined
}

/** Watches the parent and the deadline of a served run (no-op for any other verify); `exit` ends the process. */
export function watchServedRun(env: Readonly<Record<string, string | undefined>>, exit: (code: number) => void): void {
  const run = servedRunOf(env)
  if (!run) return
  let stopping = false
  let orphan = false
  const removeDir = (): void => {
    if (orphan) rmSync(run.dir, { recursive: true, force: true })
  }
  const stop = (why: 'parent-gone' | 'deadline'): void => {
    if (stopping) return
    stopping = true
    orphan = why === 'parent-gone'
    clearInterval(poll)
    clearTimeout(deadline)
    process.once('exit', removeDir)
    process.stderr.write(
      `armproof: ${orphan ? `${command('serve')}, which started this run, is gone` : "this run passed its deadline (serve's --run-timeout)"}; stopping the run\n`,
    )
    setTimeout(() => {
      removeDir()
      try {
        process.kill(-process.pid, 'SIGKILL')
      } catch {
        process.kill(process.pid, 'SIGKILL')
      }
    }, run.graceMs).unref()
    // The run's own SIGTERM handling (helpers/cli/interrupt.ts) writes the partial report and ends
    // the run's children; before it is set up there is nothing to write.
    if (process.listenerCount('SIGTERM') > 0) process.kill(process.pid, 'SIGTERM')
    else {
      removeDir()
      exit(143)
    }
  }
  const poll = setInterval(() => {
    if (process.ppid !== run.parent) stop('parent-gone')
  }, POLL_MS)
  poll.unref()
  const deadline = setTimeout(() => stop('deadline'), Math.max(0, run.deadline - Date.now()))
  deadline.unref()
  if (process.ppid !== run.parent) stop('parent-gone')
}
