// Evidence that never gates but helps the operator read the arm: which metric prefixes the
// endpoint exports, the evidence-only meters, and mean step times (effect is judged later from
// real traffic, never here).
import type { Report } from './json.ts'

function ms(v: unknown): string | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? `${v.toFixed(1)} ms` : undefined
}

export function evidenceLines(report: Report): string[] {
  const meter = report.steps.find((s) => s.id === 'meter')
  if (!meter) return []
  const ev = meter.evidence
  const lines: string[] = []
  const prefixes = Array.isArray(ev.prefixes) ? (ev.prefixes as string[]) : []
  if (prefixes.length) {
    const missing = ['radiance', 'vllm'].filter((p) => !prefixes.includes(p))
    lines.push(`prefixes seen on /metrics: ${prefixes.join(', ')}${missing.length ? ` (no ${missing.join(', ')}: latency lives under vllm:, cadence under radiance:)` : ''}`)
  }
  const meters = ev.evidenceMeters && typeof ev.evidenceMeters === 'object' ? (ev.evidenceMeters as Record<string, { first: unknown; last: unknown }>) : {}
  for (const [name, v] of Object.entries(meters)) lines.push(`${name}: ${String(v.first ?? 'absent')} → ${String(v.last ?? 'absent')} (evidence only)`)
  const st = ev.stepTimes && typeof ev.stepTimes === 'object' ? (ev.stepTimes as Record<string, unknown>) : {}
  const decode = ms(st.decodeMeanMs)
  const mixed = ms(st.mixedMeanMs)
  if (decode || mixed) lines.push(`mean step time (evidence only): decode-only ${decode ?? 'n/a'} · mixed ${mixed ?? 'n/a'}`)
  return lines
}
