// The one-flag law, applied to the effect: an arm whose record shows a second change cannot have
// its effect credited to the knob, whatever the traffic says: the verdict is inconclusive, naming
// the change. The record is the verify report's (step one-flag: failed, or its record of the
// engine against the entry before the arm's own on the vault page, when --vault names one: an
// arm verified without a baseline is compared here, later). Kept apart from the judging so the
// statistics stay about traffic alone.
import { readFile } from 'node:fs/promises'
import { asArmRecord, recordChanges, type RecordChange } from '../config/arm-record.ts'
import { entryRecord } from '../config/baseline.ts'
import { markerPart, pageEntries } from '../config/vault-page.ts'
import { reportKnobNames } from '../report/checked.ts'
import type { CheckedReport } from '../writeback/report.ts'
import { EFFECT_EXIT, type EffectResult } from './result.ts'

/** A second change the arm's record shows: where it was seen, and what changed (both values). */
export type SecondChange = NonNullable<EffectResult['secondChange']>

const listed = (changes: readonly RecordChange[]): string => changes.map((c) => `${c.what}: ${c.before} → ${c.now}`).join('; ')

/** The second change `report`'s record shows (against the entry before its own on `page`, when given); null: none shown. */
export async function secondChange(report: CheckedReport | null, page: string | null): Promise<SecondChange | null> {
  if (!report) return null
  const step = report.report.steps.find((s) => s.id === 'one-flag')
  const evidence = step?.evidence as { changes?: RecordChange[] } | undefined
  if (step?.verdict === 'failed')
    return {
      said: `the verify report's step one-flag: ${step.observed}`,
      changes: Array.isArray(evidence?.changes) ? evidence.changes : [],
    }
  const now = asArmRecord((step?.evidence as { record?: unknown } | undefined)?.record)
  if (!now || page === null) return null
  const knob = reportKnobNames(report.report)
  if (!knob) return null
  const text = await readFile(page, 'utf8')
  const finished = Date.parse(report.finishedAt)
  const endpoint = report.endpoint ? markerPart(report.endpoint) : null
  const before = pageEntries(text)
    .filter(
      (e) =>
        e.marker.svc === markerPart(report.svc) &&
        Date.parse(e.marker.finishedAt) < finished &&
        (e.marker.endpoint === null || endpoint === null || e.marker.endpoint === endpoint),
    )
    .sort((a, b) => Date.parse(b.marker.finishedAt) - Date.parse(a.marker.finishedAt))[0]
  if (!before) return null
  const got = entryRecord(before)
  if (!('record' in got)) return null
  const changes = recordChanges(got.record, now, knob)
  if (changes.length === 0) return null
  return {
    said: `the arm's record of the engine against the entry before it on the vault page (line ${before.line}, finished ${before.marker.finishedAt}): two changes, the arm cannot be credited: ${listed(changes)}`,
    changes,
  }
}

/** The result, inconclusive where a second change was shown: the traffic's verdict stays in each metric, never credited to the knob. */
export function refuseSecondChange(result: EffectResult, second: SecondChange | null): EffectResult {
  if (!second) return result
  return { ...result, verdict: 'inconclusive', exitCode: EFFECT_EXIT.inconclusive, secondChange: second }
}

/** The line that says why, for the terminal. */
export function secondChangeLines(result: EffectResult): string[] {
  const s = result.secondChange
  if (!s) return []
  return [
    `  inconclusive: ${s.said}`,
    '    next: deploy one change at a time, verify the knob alone against the last green record (verify --baseline-report or --vault), then judge its effect',
  ]
}
