// `pnpm verify` in this process, for the answers it gives before any proof step: a refused
// configuration (exit 2 before contact), first contact (exit 2 on a refused key, a 404, a TLS
// failure), --help and --version. The same `verify()` bin/verify.ts runs, with the same argv, env
// and report paths as test/support/run-verify.ts gives a child process; what it skips is the
// node start, and the vitest start it must never reach: a run that gets that far throws here
// (the proof steps themselves are judged in-process by test/support/prove-in-process.ts, and end
// to end by runVerify).
import { join } from 'node:path'
import { verify, type VerifyIo } from '../../helpers/cli/verify.ts'
import { reportAt, ROOT, type VerifyRun } from './run-verify.ts'
import { tempDir } from './temp-dir.ts'

export class ReachedProofSteps extends Error {
  constructor() {
    super('verify went on to the proof steps: this in-process run is only for answers given before them (use runVerify)')
  }
}

/** As runVerify, in this process; throws ReachedProofSteps when the run would start the suites. */
export async function verifyInProcess(
  args: readonly string[],
  options: {
    env?: Record<string, string>
    cwd?: string
    enterPhase?: VerifyIo['enterPhase']
    hostEnv?: Record<string, string>
    /** Called where the suites would start, instead of throwing there (a test of what holds at that moment); what it answers is the suites' failure. */
    atSuites?: () => Promise<string | undefined>
  } = {},
): Promise<VerifyRun> {
  const dir = tempDir('armproof-run-')
  const reportPath = join(dir, 'report.json')
  const junitPath = join(dir, 'junit.xml')
  let stdout = ''
  let stderr = ''
  const started = performance.now()
  let reached = false
  const exitCode = await verify({
    rawArgs: [...args, '--report', reportPath, '--junit', junitPath],
    env: { ...process.env, CI: 'true', VERIFY_NO_DOTENV: '1', ...options.env },
    cwd: options.cwd ?? ROOT,
    out: { write: (t: string) => (stdout += t) },
    err: { write: (t: string) => (stderr += t) },
    runSuites: () => {
      if (options.atSuites) return options.atSuites()
      reached = true
      return Promise.reject(new ReachedProofSteps())
    },
    ...(options.enterPhase ? { enterPhase: options.enterPhase } : {}),
    ...(options.hostEnv ? { hostEnv: options.hostEnv } : {}),
  })
  // verify() contains every exception, this one too: it is thrown here, where the test sees it.
  if (reached) throw new ReachedProofSteps()
  return { exitCode, stdout, stderr, report: reportAt(reportPath), reportPath, junitPath, ms: Math.round(performance.now() - started), dir }
}

/** As verifyInProcess, with exactly `args` (no report or JUnit path of its own) and `env` added to the process's; stdout and stderr together. */
export async function verifyExactly(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ exitCode: number; output: string }> {
  let output = ''
  const exitCode = await verify({
    rawArgs: args,
    env: { ...process.env, CI: 'true', VERIFY_NO_DOTENV: '1', ...env },
    cwd: ROOT,
    out: { write: (t: string) => (output += t) },
    err: { write: (t: string) => (output += t) },
    runSuites: () => Promise.reject(new ReachedProofSteps()),
  })
  return { exitCode, output }
}
