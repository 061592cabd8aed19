// The effect on a terminal: one row per metric (metric, baseline, before, after, shift, verdict),
// then one line per metric that is not `no change` saying why, then the closing line. The same
// cells feed the Markdown summary.
import { formatDuration } from '../config/duration.ts'
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

/** The smallest shift this run could have detected (p < alpha, 80% power), per statistic: the power said aloud. */
export function detectCell(m: MetricResult): string {
  const p = m.power
  if (!p) return '–'
  const one = (k: string) => {
    const abs = p.absolute[k]
    if (abs !== null && abs !== undefined) return `±${amount(abs, m.unit)}`
    const d = p.detectable[k]
    return d === null || d === undefined ? '–' : `±${pct(d).replace(/^\+/, '')}`
  }
  return m.kind === 'histogram' ? `${one('p50')} / ${one('p95')}` : one('rate')
}

export const METRIC_HEADER = ['metric', 'baseline', 'before', 'after', 'shift', 'could detect', 'verdict'] as const

export function rows(result: EffectResult): string[][] {
  return result.metrics.map((m) => [
    m.kind === 'histogram' ? `${m.id} p50 / p95` : m.id,
    windowCell(m, m.baseline),
    windowCell(m, m.before),
    windowCell(m, m.after),
    shiftCell(m),
    detectCell(m),
    m.verdict,
  ])
}

/** How the shifts were judged and what `could detect` means, in one line. */
export function methodLine(result: EffectResult): string {
  const paired = result.windows.baseline.kind !== 'before'
  const chunk = formatDuration(result.windows.after.chunkS * 1000)
  return paired
    ? `each chunk of ${chunk} after the arm against the same chunk of the baseline (paired t over the chunk pairs, 90% intervals); no change only when the interval lies within ±threshold; could detect: the smallest shift this run finds at p < 0.01 with 80% power`
    : `the chunks of ${chunk} of the after window against those of the whole before window (Welch's t, unpaired: the hours of a day are not paired with another day's; 90% intervals); could detect: the smallest shift this run finds at p < 0.01 with 80% power`
}

/** What this engine cannot be judged by, one line (empty when it can be judged by every metric). */
export function notJudgedLine(result: EffectResult): string | null {
  const n = result.engine.notJudged
  return n.length ? `not judged on ${result.engine.name}: ${n.map((x) => `${x.id} (${x.why})`).join(', ')}` : null
}

const COLORS: Readonly<Record<string, string>> = { worse: '31', better: '32', inconclusive: '33', changed: '36', 'not exported': '90' }

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

/** Why each metric is what it is (a no change with the intervals that rule a shift out), what to do, and what the engine cannot be judged by. */
export function reasonLines(result: EffectResult): string[] {
  const lines = result.metrics.flatMap((m) => [
    `  ${m.id} ${m.verdict}: ${m.reason}${m.next ? `; next: ${m.next}` : ''}`,
    ...m.notes.map((n) => `    note: ${n}`),
  ])
  const not = notJudgedLine(result)
  return not ? [...lines, `  ${not}`] : lines
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
    `  series ${result.prometheus.selector} (the ${result.engine.name} profile's names); before ${w.before.from} – ${w.before.to}; ${result.queries} range queries`,
    ...(result.engine.unverified !== undefined ? [`  note: ${result.engine.unverified}`] : []),
    `  ${methodLine(result)}`,
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
