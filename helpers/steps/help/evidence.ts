// What step `help` records. One type for its outcomes: each sets the fields it saw.
import type { HostTroubleEvidence } from '../_host-evidence.ts'

export type HelpEvidence = HostTroubleEvidence & {
  /** --help failed: its output's head. */
  output?: string
  /** The flag was not listed: how long the help text was. */
  helpLines?: number
  /** The flag's entry in --help, its printed default and choices, and the catalog's default. */
  entry?: string
  default?: string | null
  choices?: string[] | null
  catalogDefault?: string | null
  /** `{engine}`: the binary asked, as the engine process runs it (its pid, /proc/<pid>/exe, the script an interpreter runs, the words run). */
  binary?: { pid: string; exe: string; replaced: boolean; script: string | null; asked: string[] }
  /** `{engine}` and no one engine process found: the candidates. */
  pids?: string[]
}
