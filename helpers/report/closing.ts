// The run's last line, as vitest and k6 end theirs: how many proof steps passed, failed, were
// inconclusive or skipped (and, when the run stopped before judging all, how many were not
// judged), and how long the run took. One target: its steps; a fleet: every target's.
import { styleText } from 'node:util'
import { formatDuration } from '../config/duration.ts'
import { STEP_IDS, type StepVerdict } from '../steps/verdict.ts'
import type { Report } from './json.ts'

const ORDER: ReadonlyArray<[StepVerdict, 'green' | 'red' | 'yellow' | 'dim']> = [
  ['passed', 'green'],
  ['failed', 'red'],
  ['inconclusive', 'yellow'],
  ['skipped', 'dim'],
]

export interface StepCounts {
  passed: number
  failed: number
  inconclusive: number
  skipped: number
  /** Steps the run never judged (interrupted, refused on first contact, setup failed). */
  notJudged: number
}

/** The counts over some targets' reports, each of which holds at most the nine steps. */
export function countSteps(reports: ReadonlyArray<Pick<Report, 'steps'>>): StepCounts {
  const counts: StepCounts = { passed: 0, failed: 0, inconclusive: 0, skipped: 0, notJudged: 0 }
  for (const r of reports) {
    for (const s of r.steps) counts[s.verdict]++
    counts.notJudged += Math.max(0, STEP_IDS.length - r.steps.length)
  }
  return counts
}

/** `steps: 8 passed, 1 failed, 0 inconclusive, 0 skipped · 4.1s` (`, 3 not judged` when some were not). */
export function closingLine(counts: StepCounts, durationMs: number, options: { color?: boolean; what?: string } = {}): string {
  const paint = (n: number, text: string, style: 'green' | 'red' | 'yellow' | 'dim') =>
    options.color && n > 0 ? styleText(style, text, { validateStream: false }) : text
  const parts = ORDER.map(([v, style]) => paint(counts[v], `${counts[v]} ${v}`, style))
  if (counts.notJudged > 0) parts.push(`${counts.notJudged} not judged`)
  return `${options.what ?? 'steps'}: ${parts.join(', ')} · ${formatDuration(Math.max(0, durationMs))}`
}

/** A one-target run's closing line, from its report. */
export function reportClosingLine(report: Pick<Report, 'steps' | 'startedAt' | 'finishedAt'>, options: { color?: boolean } = {}): string {
  return closingLine(countSteps([report]), Date.parse(report.finishedAt) - Date.parse(report.startedAt), options)
}
