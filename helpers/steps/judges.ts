// Each step id of the registry (./registry.ts) bound to its judge; TypeScript refuses a step
// without one. The suite (suites/arm.test.ts) and the in-process runner (./run.ts) read this table.
import { checkArgv } from './argv/judge.ts'
import type { RunContext } from './context.ts'
import { checkDropins } from './dropins/judge.ts'
import { checkHealth } from './health/judge.ts'
import { checkHelp } from './help/judge.ts'
import { checkLedger } from './ledger/judge.ts'
import { checkMeter, takeBaseline } from './meter/judge.ts'
import { checkExact, checkTools, checkVision } from './probes/judge.ts'
import type { StepId } from './registry.ts'
import type { Judgement } from './verdict.ts'

export type Judge = (ctx: RunContext) => Promise<Judgement>

export const JUDGES: Readonly<Record<StepId, Judge>> = {
  dropins: checkDropins,
  help: checkHelp,
  argv: checkArgv,
  ledger: checkLedger,
  health: checkHealth,
  'probe.exact': checkExact,
  'probe.tools': checkTools,
  'probe.vision': checkVision,
  meter: checkMeter,
}

/** Work a group does once before its steps: the meter's baseline scrape precedes the probes' traffic. */
export const BEFORE_GROUP: Readonly<Record<string, (ctx: RunContext) => Promise<void>>> = {
  'behaviour survived': takeBaseline,
}
