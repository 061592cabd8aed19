// Each step's evidence type, by step id: a judge returns `Judgement<id>`, the runner a
// `StepResult<id>`, and the reports read these fields without re-checking them. The probes'
// evidence (the request's choices and the reply's parts, from ./probes/requests.ts) stays a
// free-form record: no report reads it.
import type { ArgvEvidence } from './argv/evidence.ts'
import type { DropinsEvidence } from './dropins/evidence.ts'
import type { HealthEvidence } from './health/evidence.ts'
import type { HelpEvidence } from './help/evidence.ts'
import type { LedgerEvidence } from './ledger/evidence.ts'
import type { MeterEvidence } from './meter/evidence.ts'
import type { StepId } from './registry.ts'

/** Evidence no report reads (the probes'): shown as recorded, never interpreted. */
export type FreeEvidence = Record<string, unknown>

export interface StepEvidenceMap {
  dropins: DropinsEvidence
  help: HelpEvidence
  argv: ArgvEvidence
  ledger: LedgerEvidence
  health: HealthEvidence
  'probe.exact': FreeEvidence
  'probe.tools': FreeEvidence
  'probe.vision': FreeEvidence
  meter: MeterEvidence
}

export type StepEvidence<Id extends StepId = StepId> = StepEvidenceMap[Id]
