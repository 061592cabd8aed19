// Global setup of the `suites` project: when the suites run straight from env
// (`VERIFY_SVC=… VERIFY_KNOB=… pnpm vitest run suites`), the configuration is read and validated
// here, exactly as `pnpm verify` does; a refused configuration stops the run before anything is
// contacted.
import type { TestProject } from 'vitest/node'
import { formatProblems, loadConfig, readDotenv } from '../helpers/config/load.ts'
import { targetForRun } from '../helpers/seams/recording.ts'
import { outputProblems } from '../helpers/config/outputs.ts'
import { readFileSync } from 'node:fs'
import { firstContact } from '../helpers/seams/first-contact.ts'
import { liveHttp } from '../helpers/seams/http.ts'
import { redactText } from '../helpers/seams/redact.ts'
import { isFleetRun, planFleet } from '../helpers/fleet/plan.ts'

export default async function setup(project: TestProject): Promise<void> {
  const provided = project.getProvidedContext()
  if (provided['armproof:target'] || provided['armproof:fleet']) return
  const dotenv = readDotenv(process.cwd(), process.env)
  if (isFleetRun([], process.env)) {
    // VERIFY_TARGETS=fleet.yaml pnpm vitest run suites: the fleet, a describe per target (combined
    // outputs and the worst-verdict exit code are pnpm verify --targets').
    const planned = planFleet({ argv: [], env: process.env, cwd: process.cwd(), ...(dotenv ? { dotenv } : {}) })
    if (!planned.ok) throw new Error(formatProblems(planned.problems))
    for (const warning of planned.warnings) process.stderr.write(`armproof: warning: ${warning}\n`)
    project.provide('armproof:fleet', { targets: planned.plan.targets.map((t) => ({ label: t.label, target: t.target })), concurrency: planned.plan.concurrency })
    return
  }
  const config = loadConfig({ argv: [], env: process.env, ...(dotenv ? { dotenv } : {}) })
  if (!config.ok) throw new Error(formatProblems(config.problems))
  for (const warning of config.warnings) process.stderr.write(`armproof: warning: ${warning}\n`)
  const run = targetForRun(config.target)
  if ('problems' in run) throw new Error(formatProblems(run.problems))
  const unwritable = outputProblems(run.target, process.env, process.cwd())
  if (unwritable.length > 0) throw new Error(formatProblems(unwritable))
  // First contact, as `pnpm verify` makes it: the operator's mistakes end the run before any step.
  if (run.target.mode !== 'replay' && run.target.baseUrl !== null) {
    const http = liveHttp(run.target.caFile ? { caPem: readFileSync(run.target.caFile, 'utf8') } : {})
    try {
      const problem = await firstContact(run.target, http)
      if (problem) throw new Error(`armproof: ${redactText(problem.message, run.target.apiKey)} [first contact: ${problem.where}; no proof step was judged]`)
    } finally {
      await http.close()
    }
  }
  project.provide('armproof:target', run.target)
}
