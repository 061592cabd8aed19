// A picture of one compared distribution: the cumulative share of observations at each bucket edge
// (log time axis), for the baseline, the before window and the after window, with each judged
// window's p50 and p95 marked. Between edges the line is straight, which is what the quantiles
// assume (histogram_quantile interpolates linearly inside a bucket). Plain SVG, no script, no
// external reference: it renders the same in a browser, a CI artifact viewer and a vault.
import type { EffectResult, MetricResult } from './result.ts'
import { quantile } from './stats.ts'
import { amount, pct } from './format.ts'

const W = 720
const H = 410
const PAD = { left: 64, right: 24, top: 70, bottom: 56 }

const esc = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

const STYLE: Record<'baseline' | 'before' | 'after', { color: string; dash: string; width: number; label: string }> = {
  baseline: { color: '#4c78a8', dash: '6 4', width: 2, label: 'baseline' },
  before: { color: '#9a9a9a', dash: '2 3', width: 1.5, label: 'before, the whole window' },
  after: { color: '#d6404e', dash: '', width: 2.5, label: 'after the arm' },
}

/** `2026-03-03 09:00–15:00Z`, or both dates when the span crosses midnight. */
export function compactSpan(from: string, to: string): string {
  const [a, b] = [from, to].map((t) => ({ day: t.slice(0, 10), time: t.slice(11, 16) }))
  return a!.day === b!.day ? `${a!.day} ${a!.time}–${b!.time}Z` : `${a!.day} ${a!.time}Z – ${b!.day} ${b!.time}Z`
}

/** The SVG of a histogram metric's distributions, or null when there is nothing to draw. */
export function distributionSvg(result: EffectResult, m: MetricResult): string | null {
  const d = m.distribution
  if (!d || d.edges.length < 2) return null
  // The before window is drawn apart from the baseline only when it is not the baseline itself.
  const series = (['baseline', 'before', 'after'] as const).filter(
    (k) => d[k] && d[k]!.reduce((a, b) => a + b, 0) > 0 && !(k === 'before' && result.windows.baseline.kind === 'before'),
  )
  if (series.length === 0) return null
  const cdf = (counts: readonly number[]) => {
    const n = counts.reduce((a, b) => a + b, 0)
    let c = 0
    return d.edges.map((e, k) => ((c += counts[k]!), { x: e, y: c / n }))
  }
  const lines = series.map((k) => ({ k, pts: cdf(d[k]!) }))
  // The x range: the edges where any line moves, one edge of margin on each side.
  const moving = d.edges.map((_, i) => lines.some((l) => l.pts[i]!.y > 0.001 && (i === 0 || l.pts[i - 1]!.y < 0.999)))
  const lo = Math.max(0, moving.indexOf(true) - 1)
  const hi = Math.min(d.edges.length - 1, moving.lastIndexOf(true) + 1)
  const [x0, x1] = [Math.log10(d.edges[lo]!), Math.log10(d.edges[Math.max(hi, lo + 1)]!)]
  const px = (x: number) =>
    PAD.left + ((Math.log10(Math.min(Math.max(x, 10 ** x0), 10 ** x1)) - x0) / (x1 - x0 || 1)) * (W - PAD.left - PAD.right)
  const py = (y: number) => H - PAD.bottom - y * (H - PAD.top - PAD.bottom)
  const out: string[] = []
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
  )
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`)
  const baselineName =
    result.windows.baseline.kind === 'before'
      ? 'the whole before window'
      : `the same hours ${result.windows.baseline.kind === 'yesterday' ? 'a day' : 'a week'} before`
  out.push(`<text x="${PAD.left}" y="22" font-size="15" font-weight="bold">${esc(`${m.title} (${m.id}): ${m.verdict}`)}</text>`)
  const shift = (name: 'p50' | 'p95') => pct(m.shifts[name]?.relative ?? null, m.shifts[name]?.fromZero)
  out.push(
    `<text x="${PAD.left}" y="38" fill="#444">${esc(`${result.arm.svc} ${result.arm.knob} ${result.arm.previous ?? 'default'} → ${result.arm.value ?? 'default'}, armed ${result.arm.at}`)}</text>`,
  )
  out.push(
    `<text x="${PAD.left}" y="53" fill="#444">${esc(`after ${compactSpan(result.windows.after.from, result.windows.after.to)} vs ${baselineName}: p50 ${shift('p50')}, p95 ${shift('p95')}`)}</text>`,
  )
  const halo = 'paint-order="stroke" stroke="#ffffff" stroke-width="3"'
  // Axes and grid.
  for (const y of [0, 0.25, 0.5, 0.75, 1]) {
    out.push(
      `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${py(y).toFixed(1)}" y2="${py(y).toFixed(1)}" stroke="${y === 0 ? '#333' : '#e4e4e4'}"/>`,
    )
    out.push(`<text x="${PAD.left - 8}" y="${(py(y) + 4).toFixed(1)}" text-anchor="end" fill="#444">${y * 100}%</text>`)
  }
  out.push(
    `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${py(0.95).toFixed(1)}" y2="${py(0.95).toFixed(1)}" stroke="#e4e4e4" stroke-dasharray="4 3"/>`,
  )
  let lastLabel = -Infinity
  for (let i = lo; i <= hi; i++) {
    const x = px(d.edges[i]!)
    out.push(`<line x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="${py(0)}" y2="${py(0) + 4}" stroke="#333"/>`)
    if (x - lastLabel < 40) continue
    lastLabel = x
    out.push(
      `<text x="${x.toFixed(1)}" y="${py(0) + 16}" text-anchor="middle" fill="#444" font-size="10">${esc(amount(d.edges[i]!, m.unit))}</text>`,
    )
  }
  out.push(
    `<text x="${(PAD.left + W - PAD.right) / 2}" y="${H - PAD.bottom + 34}" text-anchor="middle" fill="#444">${esc(`${m.unit === 's' ? 'latency' : m.unit}, at the bucket edges (log scale): the share of observations at or below`)}</text>`,
  )
  for (const { k, pts } of lines) {
    const s = STYLE[k]
    const path = pts
      .filter((_, i) => i >= lo && i <= hi)
      .map((p, i) => `${i === 0 ? 'M' : 'L'}${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`)
      .join(' ')
    out.push(
      `<path d="${path}" fill="none" stroke="${s.color}" stroke-width="${s.width}"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}/>`,
    )
  }
  // p50 and p95 of the two judged windows: the baseline's labelled to the left, the after window's to the right.
  for (const k of ['baseline', 'after'] as const) {
    if (!d[k]) continue
    for (const [name, q] of [
      ['p50', 0.5],
      ['p95', 0.95],
    ] as const) {
      const v = quantile({ edges: d.edges, counts: d[k]! }, q)
      if (!v) continue
      const x = px(v.value)
      out.push(
        `<line x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="${py(q).toFixed(1)}" y2="${py(0)}" stroke="${STYLE[k].color}" stroke-width="1" stroke-dasharray="3 3"/>`,
      )
      out.push(`<circle cx="${x.toFixed(1)}" cy="${py(q).toFixed(1)}" r="3.5" fill="${STYLE[k].color}"/>`)
      const left = k === 'baseline'
      out.push(
        `<text x="${(x + (left ? -7 : 7)).toFixed(1)}" y="${(py(q) + (q > 0.9 ? 14 : -6)).toFixed(1)}" text-anchor="${left ? 'end' : 'start'}" fill="${STYLE[k].color}" font-size="11" font-weight="bold" ${halo}>${esc(`${name} ${v.beyond ? '>' : ''}${amount(v.value, m.unit)}`)}</text>`,
      )
    }
  }
  // Legend, lower right, where a CDF has long since left.
  series.forEach((k, i) => {
    const y = py(0.3) + i * 18
    const x = W - PAD.right - 250
    const s = STYLE[k]
    const n = d[k]!.reduce((a, b) => a + b, 0)
    out.push(
      `<line x1="${x}" x2="${x + 28}" y1="${(y - 4).toFixed(1)}" y2="${(y - 4).toFixed(1)}" stroke="${s.color}" stroke-width="${s.width}"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}/>`,
    )
    out.push(
      `<text x="${x + 34}" y="${y.toFixed(1)}" fill="#222" ${halo}>${esc(`${s.label} (n ${Math.round(n).toLocaleString('en-US')})`)}</text>`,
    )
  })
  out.push('</svg>')
  return `${out.join('\n')}\n`
}
