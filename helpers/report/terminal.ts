// The runbook as the operator reads it in a terminal: a header, one line per step, the detail of
// any step that did not pass, and one final line. Pure formatting: strings in, strings out.
import { styleText } from 'node:util'
import type { Target } from '../config/load.ts'
import { formatDuration } from '../config/duration.ts'
import { targetProfile } from '../profiles/target.ts'
import { profileCheck } from '../profiles/verified.ts'
import type { StepResult, StepVerdict } from '../steps/verdict.ts'
import type { MeterEvidence } from '../steps/meter/evidence.ts'
import { GLYPHS, oneLine, summarize } from './_summary.ts'
import type { Report } from './json.ts'
import { hostText } from './head.ts'

export interface FormatOptions {
  /** ANSI colour; off unless asked for. */
  color?: boolean
  /** Terminal width that step lines are cut to; 120 when unknown. */
  width?: number
  /** The id column's width; verify's ids fit 12 (preflight's are longer). */
  idWidth?: number
}

/** The styles the terminal lines use; node:util's styleText writes them. */
type Style = 'bold' | 'dim' | 'red' | 'green' | 'yellow' | 'cyan'

const VERDICT_STYLE: Readonly<Record<StepVerdict, Style>> = { passed: 'green', failed: 'red', inconclusive: 'yellow', skipped: 'dim' }
const RUN_STYLE: Readonly<Record<Report['verdict'], Style>> = {
  green: 'green',
  red: 'red',
  inconclusive: 'yellow',
  error: 'red',
  interrupted: 'yellow',
}
const ID_WIDTH = 12
const DETAIL_INDENT = '     '

function paint(text: string, style: Style | undefined, color: boolean | undefined): string {
  // Whether to colour was decided once (a terminal, not CI, no NO_COLOR); styleText does not ask the stream again.
  return color && style && text ? styleText(style, text, { validateStream: false }) : text
}

/** Pieces of one line cut to `width` visible characters (code points), the last kept piece ending in "…". */
function fit(parts: ReadonlyArray<[string, Style | undefined]>, width: number, color: boolean | undefined): string {
  const total = parts.reduce((n, [t]) => n + [...t].length, 0)
  let room = total > width ? Math.max(0, width - 1) : Infinity
  let out = ''
  for (const [text, style] of parts) {
    const chars = [...text]
    if (chars.length <= room) {
      out += paint(text, style, color)
      room -= chars.length
    } else {
      out += paint(`${chars.slice(0, room).join('')}…`, style, color)
      break
    }
  }
  return out
}

/** ` 3 ✓ argv         <title>  — <observed>`; `index` is the step's place in STEP_IDS (0-based), printed from 1. */
export function stepLine(
  result: Pick<StepResult, 'verdict' | 'title' | 'observed'> & { id: string },
  index: number,
  options: FormatOptions = {},
): string {
  const style = VERDICT_STYLE[result.verdict]
  // biome-ignore lint/suspicious/noFocusedTests: fit() is this file's line fitter, not a focused test
  return fit(
    [
      [`${String(index + 1).padStart(2)} `, undefined],
      [`${GLYPHS[result.verdict]} ${result.id.padEnd(options.idWidth ?? ID_WIDTH)}`, style],
      [` ${oneLine(result.title)}`, undefined],
      [`  — ${oneLine(result.observed)}`, 'dim'],
    ],
    options.width ?? 120,
    options.color,
  )
}

const BARS = '▁▂▃▄▅▆▇█'

/** The series as bars scaled min..max; a missing value is a space. At most `maxWidth` bars (last value per bucket). */
export function sparkline(series: ReadonlyArray<{ v: number | null }>, maxWidth = 60): string {
  const raw = series.map((p) => (p.v !== null && Number.isFinite(p.v) ? p.v : null))
  let values = raw
  if (raw.length > maxWidth) {
    const size = raw.length / maxWidth
    values = Array.from({ length: maxWidth }, (_, i) => {
      const bucket = raw.slice(Math.floor(i * size), Math.floor((i + 1) * size))
      return bucket.filter((v) => v !== null).at(-1) ?? null
    })
  }
  const present = values.filter((v) => v !== null)
  const min = Math.min(...present)
  const span = Math.max(...present) - min
  return values.map((v) => (v === null ? ' ' : BARS[span > 0 ? Math.round(((v - min) / span) * (BARS.length - 1)) : 0])).join('')
}

/** `▁▁▃█  0 → 3, moved after 0.4s`, from the meter step's evidence; undefined without a series. */
export function meterLine(evidence: MeterEvidence): string | undefined {
  const { series, meter: m } = evidence
  if (!series || series.length === 0) return undefined
  const movedAfterMs = m?.movedAfterMs ?? null
  const moved = movedAfterMs !== null ? `moved after ${formatDuration(movedAfterMs)}` : 'never moved'
  return `${sparkline(series)}  ${String(m?.first ?? '?')} → ${String(m?.last ?? '?')}, ${moved}`
}

/** Expected, observed, where and next of a step that did not pass, indented under its line; '' for a passed step (`always`: its expected and where). Never cut. */
export function stepDetail(
  result: Pick<StepResult, 'verdict' | 'expected' | 'observed' | 'where' | 'next'> & { id: string; evidence: unknown },
  options: Pick<FormatOptions, 'color'> & { always?: boolean } = {},
): string {
  if (result.verdict === 'passed' && !options.always) return ''
  // A passed step's observed is on its line already.
  const rows: Array<[string, string]> =
    result.verdict === 'passed'
      ? [
          ['expected', result.expected],
          ['where', result.where],
        ]
      : [
          ['expected', result.expected],
          ['observed', result.observed],
          ['where', result.where],
        ]
  if (result.next) rows.push(['next', result.next])
  const meter = result.id === 'meter' ? meterLine(result.evidence as MeterEvidence) : undefined
  if (meter) rows.push(['meter', meter])
  return rows
    .map(([label, value]) => {
      const head = `${DETAIL_INDENT}${`${label}:`.padEnd(10)}`
      const body = value.split('\n').join(`\n${' '.repeat(head.length)}`)
      return `${paint(head, label === 'next' ? 'bold' : 'dim', options.color)}${body}`
    })
    .join('\n')
}

/** The run in one line: `GREEN · … proven on demo (meter 0 → 3, …) · next: … · rollback: …`. */
export function finalLine(report: Report, options: { color?: boolean; reportPath?: string | null } = {}): string {
  const v = summarize(report, options.reportPath)
  const parts = [paint(v.word, RUN_STYLE[report.verdict], options.color), v.why, `next: ${v.next}`]
  if (report.verdict === 'green') parts.push(`rollback: ${report.rollback}`)
  return parts.join(' · ')
}

/** `armproof · demo · PREFILL_INTERLEAVE 0 → 1 · live · http://gpu-7:8000 · host local`. */
export function header(target: Target, options: Pick<FormatOptions, 'color'> = {}): string {
  const def = targetProfile(target).spec.default
  const shown = (v: string | null) => v ?? (def !== null ? `${def} (default)` : 'the default')
  const line = [
    paint('armproof', 'bold', options.color),
    target.svc,
    `${target.knob} ${shown(target.previous)} → ${shown(target.value)}`,
    target.mode,
    target.baseUrl ?? `fixtures ${target.fixtures}`,
    `host ${hostText(target.host)}`,
  ].join(' · ')
  // A profile no real build's output backs (SGLang's, radiance's): said before any step, every run.
  const check = profileCheck(targetProfile(target).engine)
  return check.unverified ? `${line}\n  ${paint('note:', 'bold', options.color)} ${check.unverified}` : line
}
