// What step `ledger` records. One type for its outcomes: each sets the fields it saw.
import type { HostTroubleEvidence } from '../_host-evidence.ts'
import type { SourceEvidence } from '../resolved/evidence.ts'

export type LedgerEvidence = HostTroubleEvidence & {
  /** The latest resolved line, and what it resolved. */
  line?: string
  value?: string
  auto?: boolean
  boundBy?: string | null
  bootsInLog?: number
  /** No resolved line in a tail-limited read: how many lines came, how many were asked. */
  lines?: number
  tailLines?: number
  /** The log's last lines, when no resolved line was found (secret flags redacted). */
  tail?: string
  /** Command-line echoes that mention the flag (never a resolved line). */
  mentions?: string[]
  /** Another engine than radiance: every source the profile names for the knob, what each said, and how it stood. */
  sources?: SourceEvidence[]
  /** The source the step passed on (what the engine runs over what its parser resolved). */
  strongest?: string
  /** The knob's entry says its engine prints no resolved value (why): the step was not read. */
  noResolvedLine?: string
  /**
   * When the log was read: once /health answered 200 (`loaded`, after `waitedMs` of loading), or
   * when the health budget ran out still loading (`loading`), or after another answer ended the
   * wait (`other`: a key, a gateway, a path; the health step says which); `reads`: how many reads
   * were made (a read that did not hold is made again for a few seconds: a log lags behind its engine).
   */
  readAt?: { health: 'loaded' | 'loading' | 'other'; waitedMs: number; reads: number }
}
