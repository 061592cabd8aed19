// One run of `armproof serve`: a child `armproof verify` of one target (its argv from the targets
// file), in its own process and process group. A child and not a call in this process because
// each run then is exactly what `pnpm verify` does for that target (its report is the file that
// verify wrote, sent as it is), runs of several targets cannot share state (vitest's runtime,
// process.exitCode, signal handlers), and a run is stopped the way an operator stops one: SIGTERM
// makes verify write its partial report (verdict interrupted) and end its own children (verify
// leaves none behind); a child that does not end within the grace is killed with its whole group.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { RUN_LEVEL_ENV } from './targets.ts'

/** bin/verify.ts in the checkout, dist/bin/verify.js in the installed package. */
export const VERIFY_ENTRY = fileURLToPath(new URL(`../../bin/verify.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`, import.meta.url))
/** How long a stopped run may take to write its partial report before its group is killed. */
export const STOP_GRACE_MS = 10_000

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
}

/**
 * The env of a run: serve's own, without serve's token and settings (a run never sees the token),
 * without what pnpm set for serve's own script, and with the run-level options emptied (serve
 * names the report itself; .env cannot turn a run into a fleet run or add outputs).
 */
export function runEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || k.startsWith('ARMPROOF_SERVE_') || k === 'GITHUB_STEP_SUMMARY' || k === 'INIT_CWD' || k.startsWith('npm_'))
      continue
    out[k] = v
  }
  for (const k of RUN_LEVEL_ENV) out[k] = ''
  return out
}

/** Runs one target's verify to its end (or its stop) and reads back what it wrote. Never rejects. */
export function runTarget(req: RunRequest): Promise<RunResult> {
  const dir = mkdtempSync(join(tmpdir(), 'armproof-serve-'))
  const reportPath = join(dir, 'report.json')
  const started = performance.now()
  return new Promise<RunResult>((resolve) => {
    let stopped: StopReason | null = null
    let stderrTail = ''
    const child = spawn(process.execPath, [VERIFY_ENTRY, ...req.argv, '--report', reportPath], {
      cwd: req.cwd,
      env: runEnv(req.env),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const lines = (stream: NodeJS.ReadableStream, keep: boolean): void => {
      let rest = ''
      stream.setEncoding('utf8')
      stream.on('data', (chunk: string) => {
        const parts = (rest + chunk).split('\n')
        rest = parts.pop()!
        for (const l of parts) {
          req.line(l)
          if (keep) stderrTail = `${stderrTail}${l}\n`.slice(-4000)
        }
      })
      stream.on('end', () => {
        if (rest !== '') req.line(rest)
        if (keep && rest !== '') stderrTail = `${stderrTail}${rest}\n`.slice(-4000)
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
      stderrTail += `armproof serve: could not start ${VERIFY_ENTRY}: ${error.message}\n`
      finish(null, null)
    })
    child.on('close', (code, signal) => finish(code, signal))
  })
}
