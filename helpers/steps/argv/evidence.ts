// What step `argv` records. One type for its outcomes: each sets the fields it saw.
import type { HostTroubleEvidence } from '../_host-evidence.ts'

export type ArgvEvidence = HostTroubleEvidence & {
  /** What `pidof` found when it found none or several. */
  pids?: string[]
  /** The one engine process: as pidof printed it when its cmdline could not be read, else as a number. */
  pid?: string | number
  /** An excerpt of its command line. */
  argv?: string
  /** The flag with its value as written on it (`--x 1` or `--x=1`); empty when argv lacks it. */
  flag?: string[]
}
