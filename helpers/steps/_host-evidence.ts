// The evidence of a host command that could not be run (see ./_host.ts `hostTrouble`): any step
// that runs a command on the host may carry it.

export type HostTroubleEvidence = CrashEvidence & {
  exitCode?: number | null
  stderr?: string
}

/** A step whose judge threw (helpers/report/collect.ts `crashedStep`): the error, on any step. */
export type CrashEvidence = {
  error?: { name: string; message: string; stack: string | null }
}
