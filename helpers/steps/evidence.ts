// Each step's evidence type, by step id: a judge returns `Judgement<id>`, the runner a
// `StepResult<id>`, and the reports read these fields without re-checking them.
import type { ArgvEvidence } from './argv/evidence.ts'
import type { DropinsEvidence } from './dropins/evidence.ts'
import type { HealthEvidence } from './health/evidence.ts'
import type { HelpEvidence } from './help/evidence.ts'
import type { LedgerEvidence } from './ledger/evidence.ts'
import type { MeterEvidence } from './meter/evidence.ts'
import type { ProbeEvidence } from './probes/evidence.ts'
import type { OneFlagEvidence } from './one-flag/evidence.ts'
import type { StepId } from './registry.ts'

export interface StepEvidenceMap {
  dropins: DropinsEvidence
  help: HelpEvidence
  argv: ArgvEvidence
  ledger: LedgerEvidence
  health: HealthEvidence
  'probe.exact': ProbeEvidence
  'probe.tools': ProbeEvidence
  'probe.vision': ProbeEvidence
  meter: MeterEvidence
  'one-flag': OneFlagEvidence
}

export type StepEvidence<Id extends StepId = StepId> = StepEvidenceMap[Id]
