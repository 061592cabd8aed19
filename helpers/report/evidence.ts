// Evidence that never gates but helps the operator read the arm: which metric prefixes the
// endpoint exports, the evidence-only meters, and mean step times (effect is judged later from
// real traffic, never here).
import { stepOf } from '../steps/verdict.ts'
import type { Report } from './json.ts'
import { profileOf } from '../profiles/target.ts'

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
    // The prefixes the engine's profile expects (radiance: latency under vllm:, cadence under radiance:).
    const engine = profileOf({ ...(report.run?.target ?? {}), knob: report.knob })?.engine
    const expected = engine?.metrics.prefixes ?? ['radiance', 'vllm']
    const missing = expected.filter((p) => !prefixes.includes(p))
    const why =
      engine === undefined || engine.name === 'radiance'
        ? 'latency lives under vllm:, cadence under radiance:'
        : `the ${engine.name} profile expects ${expected.map((p) => `${p}:`).join(' and ')}`
    lines.push(`prefixes seen on /metrics: ${prefixes.join(', ')}${missing.length ? ` (no ${missing.join(', ')}: ${why})` : ''}`)
  }
  const meters = ev.evidenceMeters ?? {}
  for (const [name, v] of Object.entries(meters))
    lines.push(`${name}: ${String(v.first ?? 'absent')} → ${String(v.last ?? 'absent')} (evidence only)`)
  const st = ev.stepTimes ?? {}
  const decode = ms(st.decodeMeanMs)
  const mixed = ms(st.mixedMeanMs)
  if (decode || mixed) lines.push(`mean step time (evidence only): decode-only ${decode ?? 'n/a'} · mixed ${mixed ?? 'n/a'}`)
  return lines
}
