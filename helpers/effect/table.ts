// The effect on a terminal: one row per metric (metric, baseline, before, after, shift, verdict),
// then one line per metric that is not `no change` saying why, then the closing line. The same
// cells feed the Markdown summary.
import { amount, pct } from './format.ts'
import type { EffectResult, MetricResult, WindowStats } from './result.ts'

/** A window's cell: p50/p95 for a histogram, the value for a ratio; n when it is small enough to matter. */
export function windowCell(m: MetricResult, w: WindowStats | null): string {
  if (w === null) return 'absent'
  if (m.kind === 'histogram') {
    const q = (v: number | null, name: 'p50' | 'p95') => `${w.beyond.includes(name) ? '>' : ''}${amount(v, m.unit)}`
    return `${q(w.p50, 'p50')} / ${q(w.p95, 'p95')} (n ${w.count.toLocaleString('en-US')})`
  }
  return amount(w.value, m.unit)
}

export function shiftCell(m: MetricResult): string {
  const s = m.shifts
  if (m.kind === 'histogram')
    return s.p50 && s.p95 ? `${pct(s.p50.relative, s.p50.fromZero)} / ${pct(s.p95.relative, s.p95.fromZero)}` : '–'
  return s.rate ? pct(s.rate.relative, s.rate.fromZero) : '–'
}

export const METRIC_HEADER = ['metric', 'baseline', 'before', 'after', 'shift', 'verdict'] as const

export function rows(result: EffectResult): string[][] {
  return result.metrics.map((m) => [
    m.kind === 'histogram' ? `${m.id} p50 / p95` : m.id,
    windowCell(m, m.baseline),
    windowCell(m, m.before),
    windowCell(m, m.after),
    shiftCell(m),
    m.verdict,
  ])
}

const COLORS: Readonly<Record<string, string>> = { worse: '31', better: '32', inconclusive: '33', changed: '36' }

export function formatTable(result: EffectResult, color: boolean): string {
  const body = rows(result)
  const all = [[...METRIC_HEADER], ...body]
  const widths = METRIC_HEADER.map((_, c) => Math.max(...all.map((r) => r[c]!.length)))
  const line = (r: readonly string[]) =>
    r
      .map((cell, c) => {
        const padded = c === r.length - 1 ? cell : cell.padEnd(widths[c]!)
        return color && c === r.length - 1 && COLORS[cell] ? `\x1b[${COLORS[cell]}m${padded}\x1b[0m` : padded
      })
      .join('  ')
      .trimEnd()
  return [line(all[0]!), ...body.map(line)].map((l) => `  ${l}`).join('\n')
}

/** Why each metric that is not `no change` is what it is, and what to do. */
export function reasonLines(result: EffectResult): string[] {
  return result.metrics.flatMap((m) => {
    if (m.verdict === 'no change' && m.notes.length === 0) return []
    return [`  ${m.id} ${m.verdict}: ${m.reason}${m.next ? `; next: ${m.next}` : ''}`, ...m.notes.map((n) => `    note: ${n}`)]
  })
}

export function headerLines(result: EffectResult): string[] {
  const a = result.arm
  const w = result.windows
  const from =
    a.from === 'restart'
      ? "the engine's restart before the report's proof"
      : a.from === 'report'
        ? "the report's proof start"
        : '--armed-at'
  return [
    `armproof effect: ${a.svc} ${a.knob} ${a.previous ?? 'default'} → ${a.value ?? 'default'}, armed ${a.at} (${from}); ${result.mode === 'replay' ? 'replayed from a recording' : `Prometheus ${result.prometheus.url}`}`,
    `  after ${w.after.from} – ${w.after.to} against ${w.baseline.kind === 'before' ? 'the whole before window' : `the same hours ${w.baseline.kind === 'yesterday' ? 'a day' : 'a week'} before (${w.baseline.from} – ${w.baseline.to})`}: ${w.baseline.why}`,
    `  series ${result.prometheus.selector}; before ${w.before.from} – ${w.before.to}; ${result.queries} range queries`,
  ]
}

export function finalLine(result: EffectResult): string {
  const worst = result.metrics.filter((m) => m.verdict === result.verdict || (result.verdict === 'no change' && m.verdict === 'changed'))
  const named = worst
    .slice(0, 4)
    .map(
      (m) =>
        `${m.id} ${m.verdict}${m.verdict === 'worse' || m.verdict === 'better' || m.verdict === 'changed' ? ` (${shiftCell(m)})` : ''}`,
    )
    .join(', ')
  return `armproof effect: ${result.verdict.toUpperCase()}${named ? `: ${named}` : ''} · exit ${result.exitCode}`
}
