// What a finished run comes down to, shared by the terminal's final line and the Markdown
// summary: which step explains the verdict, and what the operator does next.
import { formatDuration } from '../config/duration.ts'
import type { StepVerdict } from '../steps/verdict.ts'
import { CRASH_NEXT } from './collect.ts'
import type { Report, ReportStep } from './json.ts'
import { command } from '../config/invocation.ts'

export const GLYPHS: Readonly<Record<StepVerdict, string>> = { passed: '✓', failed: '✗', inconclusive: '?', skipped: '–' }

export const REPORT_PLACEHOLDER = '<report.json>'

/** Whitespace and newlines folded to single spaces, for one-line places. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim()
}

/** `PREFILL_INTERLEAVE=1`, or `CHECKPOINT_POLICY at its default` when the value is unknown. */
export function armText(report: Report): string {
  return report.expected === null ? `${report.knob} at its default` : `${report.knob}=${report.expected}`
}

/** What proved the arm beyond argv and ledger: `meter 0 → 3, moved after 0.4s`, a /stats field, or the ledger. */
export function proofText(report: Report): string {
  const m = report.meter
  if (m) {
    const range = `meter ${m.first ?? '?'} → ${m.last ?? '?'}`
    if (m.proof === 'before-run') return `${range}, above 0 since before this run in the process argv read`
    if (m.movedAfterMs !== null) return `${range}, moved after ${formatDuration(m.movedAfterMs)}`
    return m.last === 0 ? 'meter stayed at 0 while traffic flowed' : range
  }
  const step = report.steps.find((s) => s.id === 'meter')
  if (step?.verdict === 'passed') return oneLine(step.observed)
  return 'no meter: the ledger line is the proof'
}

export interface Verdict {
  /** The verdict word in capitals. */
  word: string
  /** Why, in one line: `meter failed: …`, or `PREFILL_INTERLEAVE=1 proven on demo (…)`. */
  why: string
  next: string
  /** The step that explains a non-green verdict, if one does. */
  step?: ReportStep
}

/** The step that explains a red or inconclusive run: the first failed, else inconclusive, else skipped. */
export function focusStep(report: Report): ReportStep | undefined {
  for (const v of ['failed', 'inconclusive'] as const) {
    const s = report.steps.find((x) => x.verdict === v)
    if (s) return s
  }
  if (report.notes.length > 0) return undefined
  return report.steps.find((x) => x.verdict === 'skipped')
}

export function summarize(report: Report, reportPath?: string | null): Verdict {
  const word = report.verdict.toUpperCase()
  if (report.verdict === 'interrupted') {
    const held = report.steps.length
    return {
      word,
      why: oneLine(report.error ?? `stopped after ${held} step${held === 1 ? '' : 's'}`),
      next: 'nothing was proven past the interrupt: rerun with the same flags to finish the proof',
    }
  }
  if (report.verdict === 'error') {
    return {
      word,
      why: oneLine(report.error ?? 'the run could not be judged'),
      next: 'fix the problem above, then rerun with the same flags',
    }
  }
  if (report.verdict === 'green') {
    return {
      word,
      why: `${armText(report)} proven on ${report.svc} (${proofText(report)})`,
      next: `${command('writeback')} --report ${reportPath ?? REPORT_PLACEHOLDER} --vault <dir>`,
    }
  }
  const step = focusStep(report)
  if (report.verdict === 'inconclusive' && step?.verdict !== 'inconclusive' && report.notes[0] !== undefined) {
    return { word, why: oneLine(report.notes[0]), next: CRASH_NEXT }
  }
  if (!step) return { word, why: 'no step explains the verdict', next: 'rerun with the same flags and report the output' }
  return {
    word,
    why: `${step.id}${step.verdict === 'inconclusive' ? '' : ` ${step.verdict}`}: ${oneLine(step.observed)}`,
    next: oneLine(step.next ?? 'see the step above'),
    step,
  }
}
