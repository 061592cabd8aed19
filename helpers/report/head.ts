// The first fields of every one-target report, ahead of the contract's: the format tag a reader
// checks before anything else (its JSON Schema: docs/schema/armproof-report-1.json), and which
// endpoint and host the run was about, so a report read alone (an artifact, a serve answer, a
// fleet's entry) names its engine without the command line beside it. Additive to the contract.
import type { Target } from '../config/load.ts'
import { podText } from '../config/runtime.ts'

/** The report's format; a change that is not purely additive takes a new number. */
export const REPORT_FORMAT = 'armproof-report/1'

export interface ReportHead {
  format: typeof REPORT_FORMAT
  /** --base-url as validated (the engine's root), or null when the run had none (a replay without one). */
  endpoint: string | null
  /** --host as the runbook prints it: `local`, `[user@]host[:port]`, or a pod's `[namespace/]pod`. */
  host: string
}

/** `local`, `user@host:port` (an IPv6 host in brackets), or `namespace/pod`. */
export function hostText(host: Target['host']): string {
  if (host.kind === 'local') return 'local'
  if (host.kind === 'pod') return podText(host)
  return `${host.user ? `${host.user}@` : ''}${host.host.includes(':') ? `[${host.host}]` : host.host}${host.port ? `:${host.port}` : ''}`
}

export function reportHead(target: Pick<Target, 'baseUrl' | 'host'>): ReportHead {
  return { format: REPORT_FORMAT, endpoint: target.baseUrl, host: hostText(target.host) }
}
