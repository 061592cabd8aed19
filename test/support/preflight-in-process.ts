// `armproof preflight` in this process (helpers/cli/preflight.ts, what bin/preflight.ts runs): its
// exit code, its output, and its report read back and checked against the published schema.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { EngineHandle } from '../../engine/launch.ts'
import { preflight } from '../../helpers/cli/preflight.ts'
import type { PreflightReport } from '../../helpers/report/preflight.ts'
import { checkedReport } from './report-schema.ts'
import { tempDir } from './temp-dir.ts'

export interface PreflightRun {
  exitCode: number
  stdout: string
  stderr: string
  report: PreflightReport | undefined
  reportPath: string
}

/** A stream that keeps what is written. */
function sink(): { write(text: string): boolean; text: string } {
  return {
    text: '',
    write(text: string) {
      this.text += text
      return true
    },
  }
}

/** The flags that point preflight at a reference engine (as verify's tests' `engineArgs`). */
export function preflightEngineArgs(engine: EngineHandle): string[] {
  return [
    '--svc',
    engine.svc,
    '--base-url',
    engine.baseUrl,
    '--process',
    engine.processName,
    '--host',
    'local',
    '--host-timeout',
    '10s',
    '--health-budget',
    '8s',
  ]
}

export async function preflightInProcess(
  args: readonly string[],
  options: { engine?: EngineHandle; env?: Record<string, string>; cwd?: string } = {},
): Promise<PreflightRun> {
  const dir = tempDir('armproof-preflight-')
  const reportPath = join(dir, 'report.json')
  const out = sink()
  const err = sink()
  const exitCode = await preflight({
    rawArgs: [...args, '--report', reportPath],
    env: { CI: 'true', VERIFY_NO_DOTENV: '1', PATH: process.env.PATH ?? '', ...(options.engine?.env ?? {}), ...options.env },
    cwd: options.cwd ?? dir,
    out,
    err,
    ...(options.engine ? { hostEnv: options.engine.env } : {}),
  })
  const report = existsSync(reportPath) ? checkedReport(JSON.parse(readFileSync(reportPath, 'utf8')) as PreflightReport) : undefined
  return { exitCode, stdout: out.text, stderr: err.text, report, reportPath }
}
