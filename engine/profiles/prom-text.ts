// The text exposition format as prometheus_client writes it in multiprocess mode (how vLLM and
// SGLang run): HELP and TYPE under the exposed name (a counter's `_total` included), labels sorted
// by name, values as floatToGoString prints them, and no `_created` series.
import { pyFloatRepr } from './pyrepr.ts'

export type Labels = Readonly<Record<string, string>>
export type Sample = readonly [Labels, number]

/** prometheus_client's floatToGoString: Python's float repr, with Go's earlier switch to an exponent for large positives. */
export function goFloatString(d: number): string {
  if (d === Infinity) return '+Inf'
  if (d === -Infinity) return '-Inf'
  if (Number.isNaN(d)) return 'NaN'
  const s = pyFloatRepr(d)
  const dot = s.indexOf('.')
  if (d > 0 && dot > 6) return `${`${s[0]}.${s.slice(1, dot)}${s.slice(dot + 1)}`.replace(/[0.]+$/, '')}e+0${dot - 1}`
  return s
}

const escapeLabelValue = (v: string): string => v.replaceAll('\\', '\\\\').replaceAll('\n', '\\n').replaceAll('"', '\\"')

export function sampleLine(name: string, labels: Labels, value: number, format: (n: number) => string = goFloatString): string {
  const keys = Object.keys(labels).sort()
  const body = keys.map((k) => `${k}="${escapeLabelValue(labels[k]!)}"`).join(',')
  return `${name}${body ? `{${body}}` : ''} ${format(value)}`
}

export function family(name: string, type: 'counter' | 'gauge', help: string, samples: readonly Sample[]): string[] {
  return [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...samples.map(([l, v]) => sampleLine(name, l, v))]
}

export interface Histogram {
  bounds: readonly number[]
  counts: number[]
  sum: number
  count: number
}

/** A histogram over `bounds` (the +Inf bucket is added). */
export function histogram(bounds: readonly number[]): Histogram {
  const all = [...bounds, Infinity]
  return { bounds: all, counts: all.map(() => 0), sum: 0, count: 0 }
}

export function observe(h: Histogram, value: number): void {
  h.bounds.forEach((b, i) => {
    if (value <= b) h.counts[i]! += 1
  })
  h.sum += value
  h.count += 1
}

/** `_bucket` series (cumulative, `le` as floatToGoString), then `_count` and `_sum`, as prometheus_client orders them. */
export function histogramFamily(name: string, help: string, labels: Labels, h: Histogram): string[] {
  return [
    `# HELP ${name} ${help}`,
    `# TYPE ${name} histogram`,
    ...h.bounds.map((b, i) => sampleLine(`${name}_bucket`, { ...labels, le: goFloatString(b) }, h.counts[i]!)),
    sampleLine(`${name}_count`, labels, h.count),
    sampleLine(`${name}_sum`, labels, Math.round(h.sum * 1e6) / 1e6),
  ]
}

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'
