// Global setup of the `suites` project: when the suites run straight from env
// (`VERIFY_SVC=… VERIFY_KNOB=… pnpm vitest run suites`), the configuration is read and validated
// here, exactly as `pnpm verify` does; a refused configuration stops the run before anything is
// contacted.
import { existsSync, readFileSync } from 'node:fs'
import type { TestProject } from 'vitest/node'
import { formatProblems, loadConfig } from '../helpers/config.ts'
import { replayCheck, replayTarget } from '../helpers/fixtures.ts'

export default function setup(project: TestProject): void {
  if (project.getProvidedContext()['armproof:target']) return
  const dotenv = existsSync('.env') ? readFileSync('.env', 'utf8') : undefined
  const result = loadConfig({ argv: [], env: process.env, ...(dotenv ? { dotenv } : {}) })
  if (!result.ok) throw new Error(formatProblems(result.problems))
  const target = result.target
  if (target.mode === 'replay') {
    const check = replayCheck(target.fixtures, target)
    if (check.problems.length > 0) throw new Error(formatProblems(check.problems.map((message) => ({ option: '--fixtures', message }))))
    project.provide('armproof:target', replayTarget(target, check.meta!))
    return
  }
  project.provide('armproof:target', target)
}
