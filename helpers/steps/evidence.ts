// Each step's evidence type, by step id: a judge returns `Judgement<id>`, the runner a
// `StepResult<id>`, and the reports read these fields without re-checking them. Steps whose
// evidence no report reads keep a free-form record.
import type { ArgvEvidence } from './argv/evidence.ts'
import type { HelpEvidence } from './help/evidence.ts'
import type { LedgerEvidence } from './ledger/evidence.ts'
import type { MeterEvidence } from './meter/evidence.ts'
import type { StepId } from './registry.ts'

/** Evidence no report reads: shown as recorded, never interpreted. */
export type FreeEvidence = Record<string, unknown>

export interface StepEvidenceMap {
  dropins: FreeEvidence
  help: HelpEvidence
  argv: ArgvEvidence
  ledger: LedgerEvidence
  health: FreeEvidence
  'probe.exact': FreeEvidence
  'probe.tools': FreeEvidence
  'probe.vision': FreeEvidence
  meter: MeterEvidence
}

export type StepEvidence<Id extends StepId = StepId> = StepEvidenceMap[Id]
