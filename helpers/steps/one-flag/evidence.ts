// What step `one-flag` records: this run's record of the engine (the next arm's baseline: the
// report carries it, writeback writes it beside the entry), the baseline it was compared with,
// and every difference but the knob's.
import type { ArmRecord, RecordChange } from '../../config/arm-record.ts'
import type { HostTroubleEvidence } from '../_host-evidence.ts'

export type OneFlagEvidence = HostTroubleEvidence & {
  /** The engine as it runs now: its resolved command line, binary or image, served model. */
  record?: ArmRecord
  /** Where the baseline was read and when its run finished; absent: none was given. */
  baseline?: { from: string; finishedAt: string | null }
  /** Everything that differs from the baseline's record but the knob's flag and its env twin. */
  changes?: RecordChange[]
  /** The knob's flag in the baseline's record and now (`absent` where it is not given). */
  knob?: { before: string; now: string }
  /** Flags the build's --help does not list, as written (kept in the record under their own name). */
  unlisted?: string[]
}
