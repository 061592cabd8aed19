// Evidence that never gates but helps the operator read the arm: which metric prefixes the
// endpoint exports, the evidence-only meters, and mean step times (effect is judged later from
// real traffic, never here).
import { stepOf } from '../steps/verdict.ts'
import type { Report } from './json.ts'

function ms(v: number | undefined): string | undefined {
  return v !== undefined && Number.isFinite(v) ? `${v.toFixed(1)} ms` : undefined
}

export function evidenceLines(report: Report): string[] {
  const meter = stepOf(report.steps, 'meter')
  if (!meter) return []
  const ev = meter.evidence
  const lines: string[] = []
  const prefixes = ev.prefixes ?? []
  if (prefixes.length) {
    const missing = ['radiance', 'vllm'].filter((p) => !prefixes.includes(p))
    lines.push(`prefixes seen on /metrics: ${prefixes.join(', ')}${missing.length ? ` (no ${missing.join(', ')}: latency lives under vllm:, cadence under radiance:)` : ''}`)
  }
  const meters = ev.evidenceMeters ?? {}
  for (const [name, v] of Object.entries(meters)) lines.push(`${name}: ${String(v.first ?? 'absent')} → ${String(v.last ?? 'absent')} (evidence only)`)
  const st = ev.stepTimes ?? {}
  const decode = ms(st.decodeMeanMs)
  const mixed = ms(st.mixedMeanMs)
  if (decode || mixed) lines.push(`mean step time (evidence only): decode-only ${decode ?? 'n/a'} · mixed ${mixed ?? 'n/a'}`)
  return lines
}
