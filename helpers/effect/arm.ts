// The arm judged: from a green verify report (read with the report's own schema and the same gate
// writeback uses, freshness aside: the effect is judged later by design), or from --svc, --knob and
// --armed-at. The report gives the service, the knob and its values, the endpoint (the URL step
// health answered on), the Prometheus its meter was read through, and when the proof started.
import type { KnobName } from '../config/knobs.ts'
import { judgeReport, readReport, type CheckedReport } from '../writeback/report.ts'
import type { EffectAsk } from './config.ts'

export interface Arm {
  svc: string
  knob: KnobName
  value: string | null
  previous: string | null
  /** --armed-at, else the proof's start (replaced by the restart Prometheus shows just before it). */
  atMs: number
  from: 'armed-at' | 'report'
  report: CheckedReport | null
  endpoint: string | null
  prometheusUrl: string | null
}

/** The endpoint root the report's health step answered on (`GET <root>/health`). */
export function endpointOf(report: CheckedReport['report']): string | null {
  const where = report.steps.find((s) => s.id === 'health')?.where ?? ''
  const m = /^GET (https?:\/\/\S+?)\/health$/.exec(where)
  return m ? m[1]! : null
}

/** The Prometheus the report's meter step read, when it read one. */
export function prometheusOf(report: CheckedReport['report']): string | null {
  const evidence = report.steps.find((s) => s.id === 'meter')?.evidence as { prometheus?: { url?: unknown } } | undefined
  const url = evidence?.prometheus?.url
  return typeof url === 'string' && /^https?:\/\//.test(url) ? url.replace(/\/+$/, '') : null
}

export async function resolveArm(ask: EffectAsk, shownReport: string | null, now: Date): Promise<{ arm: Arm } | { problems: string[] }> {
  if (ask.report === null) {
    const spec = ask.knobSpec!
    return {
      arm: {
        svc: ask.svc!,
        knob: ask.knob!,
        value: ask.value ?? spec.default,
        previous: ask.previous ?? spec.default,
        atMs: ask.armedAtMs!,
        from: 'armed-at',
        report: null,
        endpoint: ask.baseUrl,
        prometheusUrl: ask.prometheusUrl,
      },
    }
  }
  const shown = shownReport ?? ask.report
  const read = await readReport(ask.report, shown)
  const line = (r: { checked: string; found: string; next: string }) =>
    `--report ${shown}: not the green report of an arm (${r.checked}): ${r.found}; next: ${r.next}`
  if (!read.report) return { problems: read.refusals.map(line) }
  const checked = read.report
  // The gate of writeback, except its freshness: the effect is judged hours or days after the proof.
  const refusals = judgeReport(
    checked,
    { svc: ask.svc, maxAgeMs: Number.POSITIVE_INFINITY, maxAgeText: 'none', allowReplay: true },
    now,
    shown,
  )
  const problems = refusals.map(line)
  if (ask.knob !== null && ask.knob !== checked.knob)
    problems.push(`--knob ${ask.knob}: the report is for ${checked.knob}; pass that arm's own report`)
  if (problems.length) return { problems }
  const r = checked.report
  const started = r.mode === 'replay' && r.recordedAt !== undefined ? r.recordedAt : r.startedAt
  return {
    arm: {
      svc: checked.svc,
      knob: r.knob,
      value: ask.value ?? checked.expected,
      previous: ask.previous ?? checked.previous,
      atMs: ask.armedAtMs ?? Date.parse(started),
      from: ask.armedAtMs !== null ? 'armed-at' : 'report',
      report: checked,
      endpoint: ask.baseUrl ?? endpointOf(r),
      prometheusUrl: ask.prometheusUrl ?? prometheusOf(r),
    },
  }
}
