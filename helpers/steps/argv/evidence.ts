// What step `argv` records. One type for its outcomes: each sets the fields it saw.
import type { Occurrence } from '../../argparse/resolve.ts'
import type { FoundBy } from '../../engine/find.ts'
import type { OtherEngine, PortHolder } from '../../engine/describe.ts'
import type { HostTroubleEvidence } from '../_host-evidence.ts'
import type { EndpointTie } from '../../engine/tie.ts'
import type { PodContainerChoice } from '../../engine/runtime.ts'

export type ArgvEvidence = HostTroubleEvidence & {
  /** The candidates when no single engine was found (pidof's, or those sharing the port). */
  pids?: string[]
  /** The one engine process: as found when its cmdline could not be read, else as a number. */
  pid?: string | number
  /** How it was found: the listener of the URL's port, the container, --pid-cmd, or pidof. */
  foundBy?: FoundBy
  /** The same, in words ("holds the listening socket of port 8000 (0.0.0.0)"). */
  how?: string
  /** Other engines of the same name on the host, with their ports. */
  others?: OtherEngine[]
  /** Who holds the listening socket of the base URL's port. */
  portHolders?: PortHolder[]
  /** Its start time as prometheus_client computes process_start_time_seconds, and that value's resolution. */
  startTimeSeconds?: number | null
  startTimeResolution?: number
  listenerTied?: boolean
  /** Under kubernetes, the container of a pod of several the reads ran in (kubectl exec -c), and why. */
  container?: PodContainerChoice
  /** What tied the base URL to this pid (null: nothing did, and the step is not green). */
  tie?: EndpointTie | null
  /** Untied: the processes holding the base URL's port instead of it. */
  servedBy?: PortHolder[]
  /** An excerpt of its command line. */
  argv?: string
  /** Each occurrence of the flag as written (`--x 1`, `--x=1`, a config file's `x: 1`); empty when absent. */
  flag?: string[]
  /** Each occurrence with its value, where it came from, how it names the flag, and which one the parser keeps. */
  occurrences?: Occurrence[]
  /** The config file the engine was started with (`--config FILE`), when it names one. */
  configFile?: string | null
  /** Words of argv the engine's parser would refuse that cannot change this flag (e.g. flags --help does not list). */
  refused?: string[]
}
