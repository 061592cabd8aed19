// Global setup of the `suites` project: when the suites run straight from env
// (`VERIFY_SVC=… VERIFY_KNOB=… pnpm vitest run suites`), the configuration is read and validated
// here, exactly as `pnpm verify` does; a refused configuration stops the run before anything is
// contacted.
import type { TestProject } from 'vitest/node'
import { formatProblems, readDotenv } from '../helpers/config/load.ts'
import { contactTarget } from '../helpers/steps/first-contact/contact.ts'
import { prepareRun } from '../helpers/cli/prepare.ts'
import { containedLine, errorLine } from '../helpers/cli/contain.ts'

/** Ends the run with `text` alone: vitest shows the message, and no stack trace (there is no bug to trace). */
class SetupRefused extends Error {
  constructor(text: string) {
    super(text)
    this.stack = text
  }
}

/**
 * The configuration and first contact of a run straight from env. Any exception no part of it
 * expected is contained as one line (helpers/cli/contain.ts), never a stack trace.
 */
export default async function setup(project: TestProject): Promise<void> {
  try {
    await prepare(project)
  } catch (error) {
    if (error instanceof SetupRefused) throw error
    throw new SetupRefused(containedLine(errorLine(error, null), { phase: "the suites' setup", where: 'suites/_setup.ts' }, 'error'))
  }
}

async function prepare(project: TestProject): Promise<void> {
  const provided = project.getProvidedContext()
  if (provided['armproof:target'] || provided['armproof:fleet']) return
  const dotenv = readDotenv(process.cwd(), process.env)
  // The one preparation of a run (helpers/cli/prepare.ts), as `pnpm verify` makes it; nothing contacted yet.
  const prepared = prepareRun({ argv: [], env: process.env, dotenv, cwd: process.cwd(), userCwd: process.cwd() })
  // No command line here: help and the version are never asked (pnpm verify answers them).
  if (prepared.kind === 'help' || prepared.kind === 'version') return
  for (const warning of prepared.warnings) process.stderr.write(`armproof: warning: ${warning}\n`)
  if (prepared.kind === 'refused') throw new SetupRefused(formatProblems(prepared.problems))
  if (prepared.kind === 'fleet') {
    // VERIFY_TARGETS=fleet.yaml pnpm vitest run suites: the fleet, a describe per target (combined
    // outputs and the worst-verdict exit code are pnpm verify --targets').
    const { plan } = prepared
    // First contact per target, side by side: a refused target's describe holds one failing test
    // with the cause and the fix (helpers/fleet/suite.ts); the other targets run on.
    const refusals = await Promise.all(plan.targets.map((t) => contactTarget(t.target)))
    for (const [i, r] of refusals.entries())
      if (r) process.stderr.write(`${r.line.replace(/^armproof: /, `armproof: ${plan.targets[i]!.label}: `)}\n`)
    project.provide('armproof:fleet', {
      targets: plan.targets.map((t, i) => ({ label: t.label, target: t.target, ...(refusals[i] ? { refused: refusals[i].line } : {}) })),
      concurrency: plan.concurrency,
    })
    return
  }
  // First contact, as `pnpm verify` makes it: the operator's mistakes end the run before any step.
  const refused = await contactTarget(prepared.target)
  if (refused) throw new SetupRefused(refused.line)
  project.provide('armproof:target', prepared.target)
}
