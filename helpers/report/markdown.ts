// The report as a short Markdown block for $GITHUB_STEP_SUMMARY: verdict, one row per step, the
// next step and the rollback line.
import { GLYPHS, armText, oneLine, summarize } from './_summary.ts'
import type { Report } from './json.ts'
import { stepOf } from '../steps/verdict.ts'
import { formatDuration } from '../config/duration.ts'
import { meterLine } from './terminal.ts'

const CELL_MAX = 200

/** Plain text on one line: backslashes and pipes escaped, HTML-ish characters neutralised. */
export function mdText(text: string): string {
  return oneLine(text).replaceAll('\\', '\\\\').replaceAll('|', '\\|').replaceAll('<', '&lt;').replaceAll('>', '&gt;')
}

/** One table cell: as mdText, cut at CELL_MAX characters. */
export function mdCell(text: string): string {
  const flat = oneLine(text)
  return mdText(flat.length > CELL_MAX ? `${flat.slice(0, CELL_MAX - 1)}…` : flat)
}

/** Inline code that survives backticks inside the text. */
export function mdCode(text: string): string {
  const t = oneLine(text)
  const longest = Math.max(0, ...[...t.matchAll(/`+/g)].map((m) => m[0].length))
  const fence = '`'.repeat(longest + 1)
  const pad = t.startsWith('`') || t.endsWith('`') ? ' ' : ''
  return `${fence}${pad}${t}${pad}${fence}`
}

const ICON: Readonly<Record<Report['verdict'], string>> = { green: '✅', red: '❌', inconclusive: '❓', error: '⛔', interrupted: '⏹️' }

export function markdownSummary(report: Report, options: { reportPath?: string | null; endpoint?: string | null } = {}): string {
  const v = summarize(report, options.reportPath)
  const ms = Date.parse(report.finishedAt) - Date.parse(report.startedAt)
  const run = [
    `mode **${mdText(report.mode)}**${report.mode === 'replay' && report.recordedAt ? ` (a replay of the run recorded ${mdText(report.recordedAt)})` : ''}`,
    `endpoint ${options.endpoint ? mdCode(options.endpoint) : 'unknown'}${report.mode === 'replay' ? ' (as recorded; nothing was contacted)' : ''}`,
    `took ${Number.isFinite(ms) && ms >= 0 ? formatDuration(ms) : 'unknown'}`,
  ].join(' · ')
  const meterStep = stepOf(report.steps, 'meter')
  const spark = meterStep ? meterLine(meterStep.evidence) : undefined
  const lines = [
    `### ${ICON[report.verdict]} armproof ${v.word}: ${mdText(armText(report))} on ${mdText(report.svc)}`,
    '',
    run,
    '',
    mdText(v.why),
    '',
    ...(spark ? [`**Meter** ${mdText(report.meter?.name ?? '')}: ${mdCode(spark)}`, ''] : []),
    '| step | verdict | observed |',
    '|---|---|---|',
    ...report.steps.map((s) => `| \`${s.id}\` | ${GLYPHS[s.verdict]} ${s.verdict} | ${mdCell(s.observed)} |`),
    '',
    `**Next:** ${report.verdict === 'green' ? mdCode(v.next) : mdText(v.next)}`,
    '',
    `**Rollback:** ${mdCode(report.rollback)}`,
  ]
  if (report.notes.length > 0) lines.push('', ...report.notes.map((n) => `- ${mdCell(n)}`))
  return lines.join('\n')
}
