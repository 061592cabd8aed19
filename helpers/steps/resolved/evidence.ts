// What a step records of the sources it read (the ledger's log lines, the meter's endpoints): each
// source, its key, what it said and how that stands against the expected value.
import type { SourceRow, Standing } from './agree.ts'
import type { SourceReading } from './log-sources.ts'

export interface SourceEvidence {
  id: string
  says: 'parser' | 'engine'
  key: string
  state: SourceReading['state']
  /** As printed or served (null: None); absent when it said nothing. */
  raw?: string | null
  standing?: Standing
  auto?: boolean
  /** The line (1-based) of the log, and the line as printed, cut; or the endpoint asked. */
  line?: number
  text?: string
  where?: string
  /** The profile says no real build's output backs this source (why). */
  unverified?: string
}

export function sourceEvidence(readings: readonly SourceReading[], rows?: readonly SourceRow[]): SourceEvidence[] {
  return readings.map((r, i) => ({
    id: r.source.id,
    says: r.source.says,
    key: r.key,
    state: r.state,
    ...(r.raw !== undefined ? { raw: r.raw } : {}),
    ...(rows?.[i] ? { standing: rows[i]!.standing } : {}),
    ...(r.auto ? { auto: true } : {}),
    ...(r.line !== undefined ? { line: r.line } : {}),
    ...(r.text !== undefined ? { text: r.text.slice(0, 2000) } : {}),
    ...(r.where !== undefined ? { where: r.where } : {}),
    ...(r.source.unverified !== undefined ? { unverified: r.source.unverified } : {}),
  }))
}
