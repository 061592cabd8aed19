// Runs `pnpm verify` (bin/verify.ts) as an operator or CI does (on a verify host, ./verify-host.ts,
// or in a child of its own: the same exit code, output and report), and reads back its JSON report.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'
import type { EngineHandle } from '../../engine/launch.ts'
import type { Report } from '../../helpers/report/json.ts'
import { checkedFleetReport, checkedReport } from './report-schema.ts'
import { removeTempDir, tempDir } from './temp-dir.ts'
import { hostRun } from './verify-host.ts'
import { unhostable } from './verify-route.ts'
import type { FleetReport } from '../../helpers/fleet/report.ts'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const VERIFY = join(ROOT, 'bin/verify.ts')

export interface VerifyRun {
  exitCode: number
  stdout: string
  stderr: string
  report: Report | undefined
  reportPath: string
  junitPath: string
  ms: number
  dir: string
}

/** Fast budgets for a loopback engine that loads in well under a second. */
export const FAST = ['--health-budget', '8s', '--meter-window', '2s', '--probe-timeout', '3s', '--host-timeout', '10s']

/** The flags that point verify at a reference engine. */
export function engineArgs(engine: EngineHandle, baseUrl: string = engine.baseUrl): string[] {
  return ['--svc', engine.svc, '--base-url', baseUrl, '--process', engine.processName, '--host', 'local']
}

/** verify's flags for a reference engine armed with PREFILL_INTERLEAVE=1, on FAST budgets. */
export function armedArgs(engine: EngineHandle): string[] {
  return [...engineArgs(engine), '--knob', 'PREFILL_INTERLEAVE', '--value', '1', ...FAST]
}

/**
 * A run's exit code and output: on a verify host (./verify-host.ts) when the run needs nothing a
 * host cannot give it (./verify-route.ts) and one is free, else in a child of its own; the same either way.
 */
export async function runVerify(
  args: readonly string[],
  options: {
    env?: Record<string, string>
    engine?: EngineHandle
    timeoutMs?: number
    cwd?: string
    /** A child of its own even where a host could take the run (a judgement that depends on a fresh process's timing). */
    ownProcess?: boolean
  } = {},
): Promise<VerifyRun> {
  const dir = tempDir('armproof-run-')
  const reportPath = join(dir, 'report.json')
  const junitPath = join(dir, 'junit.xml')
  const started = performance.now()
  const argv = [...args, '--report', reportPath, '--junit', junitPath]
  const overlay = { CI: 'true', VERIFY_NO_DOTENV: '1', ...(options.engine ? options.engine.env : {}), ...options.env }
  const result = await verifyCommand(argv, overlay, options)
  return {
    exitCode: result.exitCode ?? -1,
    stdout: result.stdout,
    stderr: result.stderr,
    report: reportAt(reportPath),
    reportPath,
    junitPath,
    ms: Math.round(performance.now() - started),
    dir,
  }
}

/**
 * `node bin/verify.ts …` with this process's env and `overlay`: on a verify host when the run can
 * go there and one is free, else in a child of its own; its exit code and output the same either way.
 */
export async function verifyCommand(
  argv: readonly string[],
  overlay: Record<string, string>,
  options: { timeoutMs?: number; cwd?: string; ownProcess?: boolean } = {},
): Promise<{ exitCode: number | undefined; stdout: string; stderr: string }> {
  const cwd = options.cwd ?? ROOT
  const timeout = options.timeoutMs ?? 90_000
  const hosted = !options.ownProcess && unhostable(overlay) === null ? await hostRun(argv, childEnv(overlay), cwd, timeout) : null
  if (hosted) return { exitCode: hosted.exitCode ?? undefined, stdout: hosted.stdout, stderr: hosted.stderr }
  return childRun(argv, overlay, cwd, timeout)
}

/** `node bin/verify.ts …` in a child of its own, with this process's env and `overlay` (execa's extendEnv). */
export async function childRun(
  argv: readonly string[],
  overlay: Record<string, string>,
  cwd: string,
  timeout: number,
): Promise<{ exitCode: number | undefined; stdout: string; stderr: string }> {
  const r = await execa(process.execPath, [VERIFY, ...argv], {
    cwd,
    reject: false,
    timeout,
    env: overlay,
    extendEnv: true,
    stdin: 'ignore',
  })
  return { exitCode: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr) }
}

/** The env that child starts with: this process's (its unset names left out) and `overlay`. */
export function childEnv(overlay: Record<string, string>): Record<string, string> {
  const own = Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined)
  return { ...Object.fromEntries(own), ...overlay }
}

/** The report a run wrote, checked against the published schema (./report-schema.ts); undefined when none was written. */
export function reportAt(path: string): Report | undefined {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
  const doc = JSON.parse(text) as Report | FleetReport
  return (doc.format === 'armproof-fleet/1' ? checkedFleetReport(doc) : checkedReport(doc)) as Report
}

/** A `pnpm verify` under way in its own process group, to be signalled mid-run (SIGINT / SIGTERM). */
export interface SpawnedVerify {
  pid: number
  /** What it printed so far. */
  output(): { stdout: string; stderr: string }
  /** Resolves once what `stream` printed so far satisfies `test`. */
  printed(stream: 'stdout' | 'stderr', test: (text: string) => boolean): Promise<void>
  exited: Promise<number | null>
}

/** Starts `node bin/verify.ts …` (CI=true, no .env) in its own process group, its output collected as it comes. */
export function spawnVerify(args: readonly string[], env: Record<string, string> = {}): SpawnedVerify {
  const child = spawn(process.execPath, [VERIFY, ...args], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, CI: 'true', VERIFY_NO_DOTENV: '1', ...env },
  })
  const text = { stdout: '', stderr: '' }
  const waiters: Array<() => void> = []
  for (const stream of ['stdout', 'stderr'] as const) {
    child[stream].on('data', (d: Buffer) => {
      text[stream] += d
      for (const check of [...waiters]) check()
    })
  }
  return {
    pid: child.pid!,
    output: () => ({ ...text }),
    printed: (stream, test) =>
      new Promise<void>((resolve) => {
        const check = (): void => {
          if (!test(text[stream])) return
          waiters.splice(waiters.indexOf(check), 1)
          resolve()
        }
        waiters.push(check)
        check()
      }),
    // 'close', not 'exit': the exit can be seen before the last of the pipes has been read (a
    // closing line printed just before exit would be missing from output()); a pipe a leftover
    // process still holds 5 s after the exit does not hold the test (groupLive names that process).
    exited: new Promise((resolve) => {
      child.on('exit', (code) => setTimeout(() => resolve(code), 5000).unref())
      child.on('close', (code) => resolve(code))
    }),
  }
}

/** Removes the run's folder now; a test that does not is swept after its file (./temp-dir.ts). */
export function cleanup(run: VerifyRun): void {
  removeTempDir(run.dir)
}

/** step id → verdict, for compact assertions. */
export function verdicts(report: Report | undefined): Record<string, string> {
  return Object.fromEntries((report?.steps ?? []).map((s) => [s.id, s.verdict]))
}

/** The live (not zombie) processes of a process group: what a run left behind. */
export async function groupLive(pgid: number): Promise<string[]> {
  const r = await execa('ps', ['-o', 'pid=,stat=,args=', '-g', String(pgid)], { reject: false })
  return String(r.stdout)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^\d+\s+Z/.test(l))
}
