// One run of `armproof serve`: a child `armproof verify` of one target (its argv from the targets
// file), in its own process and process group. A child and not a call in this process because
// each run then is exactly what `pnpm verify` does for that target (its report is the file that
// verify wrote, sent as it is), runs of several targets cannot share state (vitest's runtime,
// process.exitCode, signal handlers), and a run is stopped the way an operator stops one: SIGTERM
// makes verify write its partial report (verdict interrupted) and end its own children (verify
// leaves none behind); a child that does not end within the grace is killed with its whole group.
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SERVED_RUN_ENV } from '../cli/served-run.ts'
import { REPORT_PLACEHOLDER } from '../report/_summary.ts'
import { RUN_LEVEL_ENV } from './targets.ts'

/** bin/verify.ts in the checkout, dist/bin/verify.js in the installed package. */
export const VERIFY_ENTRY = fileURLToPath(new URL(`../../bin/verify.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`, import.meta.url))
/** How long a stopped run may take to write its partial report before its group is killed. */
export const STOP_GRACE_MS = 10_000
/** The child's own deadline is serve's --run-timeout and this: serve stops it first while serve lives. */
export const CHILD_DEADLINE_SLACK_MS = 5_000

export type StopReason = 'timeout' | 'client-gone' | 'shutdown'

export interface RunResult {
  exitCode: number | null
  signal: string | null
  /** The report file's text exactly as verify wrote it; null when it wrote none. */
  reportText: string | null
  /** The last lines verify printed to stderr (its own, already redacted words), for a run that wrote no report. */
  stderrTail: string
  stopped: StopReason | null
  ms: number
}

export interface RunRequest {
  svc: string
  argv: readonly string[]
  env: Readonly<Record<string, string | undefined>>
  cwd: string
  timeoutMs: number
  signal: AbortSignal
  /** Each line the run prints, as it comes (serve's log, prefixed with the target). */
  line: (text: string) => void
  /** The child's pid, once it runs (serve's log says it). */
  started?: (pid: number) => void
}

/**
 * A run's line as serve logs it: the report's path is `<report.json>` (the answer serve sent is
 * that report; a writeback takes it saved to a file), the run's folder `(serve's run folder)`:
 * both are gone once the run is answered.
 */
export function scrubRunPaths(line: string, dir: string): string {
  return line.replaceAll(join(dir, 'report.json'), REPORT_PLACEHOLDER).replaceAll(dir, "(serve's run folder)")
}

/** Every run's folder is named so: a successor of a serve that was killed finds what it left (sweepRunDirs). */
export const RUN_DIR_PREFIX = 'armproof-serve-'

/**
 * The env of a run: serve's own, without serve's token and settings (a run never sees the token),
 * without what pnpm set for serve's own script, and with the run-level options emptied (serve
 * names the report itself; .env cannot turn a run into a fleet run or add outputs).
 */
export function runEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(env)) {
    if (
      v === undefined ||
      k.startsWith('ARMPROOF_SERVE_') ||
      k === SERVED_RUN_ENV ||
      k === 'GITHUB_STEP_SUMMARY' ||
      k === 'INIT_CWD' ||
      k.startsWith('npm_')
    )
      continue
    out[k] = v
  }
  for (const k of RUN_LEVEL_ENV) out[k] = ''
  return out
}

/** Runs one target's verify to its end (or its stop) and reads back what it wrote. Never rejects. */
export function runTarget(req: RunRequest): Promise<RunResult> {
  // Throws (the temp folder cannot be made): serve counts it as its own failure (run_start).
  const dir = mkdtempSync(join(tmpdir(), `${RUN_DIR_PREFIX}${process.pid}-`))
  const reportPath = join(dir, 'report.json')
  const started = performance.now()
  // The run's folder is serve's business: its lines name the report serve answers, never a path
  // that is gone once the run is answered.
  const scrub = (l: string): string => l.replaceAll(reportPath, '(the report serve answers)').replaceAll(dir, "(serve's run folder)")
  return new Promise<RunResult>((resolve) => {
    let stopped: StopReason | null = null
    let stderrTail = ''
    const served = { parent: process.pid, dir, deadline: Date.now() + req.timeoutMs + CHILD_DEADLINE_SLACK_MS, graceMs: STOP_GRACE_MS }
    const child = spawn(process.execPath, [VERIFY_ENTRY, ...req.argv, '--report', reportPath], {
      cwd: req.cwd,
      env: { ...runEnv(req.env), [SERVED_RUN_ENV]: JSON.stringify(served) },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    if (child.pid !== undefined) req.started?.(child.pid)
    const lines = (stream: NodeJS.ReadableStream, keep: boolean): void => {
      let rest = ''
      stream.setEncoding('utf8')
      stream.on('data', (chunk: string) => {
        const parts = (rest + chunk).split('\n')
        rest = parts.pop()!
        for (const raw of parts) {
          const l = scrub(raw)
          req.line(l)
          if (keep) stderrTail = `${stderrTail}${l}\n`.slice(-4000)
        }
      })
      stream.on('end', () => {
        const l = scrub(rest)
        if (l !== '') req.line(l)
        if (keep && l !== '') stderrTail = `${stderrTail}${l}\n`.slice(-4000)
      })
    }
    lines(child.stdout!, false)
    lines(child.stderr!, true)
    let killTimer: NodeJS.Timeout | undefined
    const stop = (why: StopReason): void => {
      if (stopped !== null || child.exitCode !== null || child.signalCode !== null) return
      stopped = why
      child.kill('SIGTERM')
      killTimer = setTimeout(() => {
        // Only while the leader is not yet reaped: once it is, its pid (and so the group id) may be
        // another process's, never ours to signal.
        if (child.exitCode !== null || child.signalCode !== null) return
        try {
          process.kill(-child.pid!, 'SIGKILL')
        } catch {
          // the group is gone already
        }
      }, STOP_GRACE_MS)
    }
    const timer = setTimeout(() => stop('timeout'), req.timeoutMs)
    const onAbort = (): void => stop(req.signal.reason === 'shutdown' ? 'shutdown' : 'client-gone')
    if (req.signal.aborted) onAbort()
    else req.signal.addEventListener('abort', onAbort, { once: true })
    let done = false
    const finish = (exitCode: number | null, signal: string | null): void => {
      if (done) return
      done = true
      clearTimeout(timer)
      clearTimeout(killTimer)
      req.signal.removeEventListener('abort', onAbort)
      let reportText: string | null = null
      try {
        reportText = readFileSync(reportPath, 'utf8')
      } catch {
        reportText = null
      }
      rmSync(dir, { recursive: true, force: true })
      resolve({ exitCode, signal, reportText, stderrTail, stopped, ms: Math.round(performance.now() - started) })
    }
    child.on('error', (error) => {
      stderrTail += `armproof serve: could not start verify: ${error.message}\n`
      finish(null, null)
    })
    child.on('close', (code, signal) => finish(code, signal))
  })
}

/**
 * Removes the run folders a serve that is gone left behind (killed with its runs, SIGKILL or the
 * OOM killer: its children remove their own once they see it gone, but a child killed with it
 * cannot). A folder is another serve's while that serve's pid lives; this serve's own are never
 * touched. Returns how many went.
 */
export function sweepRunDirs(root = tmpdir()): number {
  let removed = 0
  let names: string[]
  try {
    names = readdirSync(root)
  } catch {
    return 0
  }
  for (const name of names) {
    const m = new RegExp(`^${RUN_DIR_PREFIX}(\\d+)-[A-Za-z0-9]{6}$`).exec(name)
    if (!m || Number(m[1]) === process.pid) continue
    try {
      process.kill(Number(m[1]), 0)
      continue
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EPERM') continue
    }
    rmSync(join(root, name), { recursive: true, force: true })
    removed++
  }
  return removed
}
