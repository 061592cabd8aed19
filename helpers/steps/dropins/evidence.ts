// What step `dropins` records. One type for its outcomes: each sets the fields it saw.
import type { HostTroubleEvidence } from '../_host-evidence.ts'

export type DropinsEvidence = HostTroubleEvidence & {
  /** The drop-in paths systemctl listed (empty: none). */
  dropins?: string[]
  /** systemctl could not say: its output's head. */
  stdout?: string
}
