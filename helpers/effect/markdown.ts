// The effect as Markdown (--summary, GITHUB_STEP_SUMMARY): the verdict, the arm and the windows,
// the table, why each metric that moved (or could not be judged) is what it is, and links to the
// pictures written beside --out.
import { mdCell, mdCode, mdText } from '../report/markdown.ts'
import type { EffectResult } from './result.ts'
import { METRIC_HEADER, methodLine, notJudgedLine, rows } from './table.ts'

const ICON: Readonly<Record<EffectResult['verdict'], string>> = { 'no change': '✅', better: '✅', worse: '❌', inconclusive: '❓' }

/** `pictureHref(file)`: how the summary links a picture (relative to the summary's own folder). */
export function markdownEffect(result: EffectResult, pictureHref: (file: string) => string | null = () => null): string {
  const a = result.arm
  const w = result.windows
  const lines: string[] = []
  lines.push(
    `### ${ICON[result.verdict]} armproof effect: ${mdText(a.svc)} ${mdText(a.knob)} ${mdText(a.previous ?? 'default')} → ${mdText(a.value ?? 'default')}: ${result.verdict} (exit ${result.exitCode})`,
  )
  lines.push('')
  lines.push(
    `Armed ${mdText(a.at)} (${a.from === 'armed-at' ? '--armed-at' : a.from === 'restart' ? "the engine's restart before the verify run" : "the verify report's start"}). After ${mdText(w.after.from)} – ${mdText(w.after.to)} judged against ${w.baseline.kind === 'before' ? 'the whole before window' : `the same hours ${w.baseline.kind === 'yesterday' ? 'a day' : 'a week'} before`} (${mdText(w.baseline.from)} – ${mdText(w.baseline.to)}): ${mdText(w.baseline.why)}. Series ${mdCode(result.prometheus.selector)}.`,
  )
  lines.push('')
  lines.push(`| ${METRIC_HEADER.join(' | ')} |`)
  lines.push(`|${METRIC_HEADER.map(() => '---').join('|')}|`)
  for (const r of rows(result)) lines.push(`| ${r.map(mdCell).join(' | ')} |`)
  lines.push('')
  lines.push(mdText(`Judged ${methodLine(result)}.`))
  const why = result.metrics
  if (why.length) {
    lines.push('')
    for (const m of why) {
      lines.push(`- **${mdText(m.id)} ${m.verdict}**: ${mdText(m.reason)}${m.next ? `; next: ${mdText(m.next)}` : ''}`)
      for (const n of m.notes) lines.push(`  - ${mdText(n)}`)
    }
  }
  if (result.engine.unverified !== undefined) {
    lines.push('')
    lines.push(mdText(`Note: ${result.engine.unverified}.`))
  }
  const not = notJudgedLine(result)
  if (not) {
    lines.push('')
    lines.push(mdText(`${not[0]!.toUpperCase()}${not.slice(1)}.`))
  }
  const pictures = result.metrics.flatMap((m) => {
    const href = m.picture ? pictureHref(m.picture) : null
    return href ? [`[${mdText(m.id)}](${href.replace(/[()\s]/g, (c) => encodeURIComponent(c))})`] : []
  })
  if (pictures.length) {
    lines.push('')
    lines.push(`Distributions (after vs baseline, p50 and p95 marked): ${pictures.join(' · ')}`)
  }
  lines.push('')
  return `${lines.join('\n')}\n`
}
