// Which sample names a family owns by its type, and the OpenMetrics rules on each sample of one.
import { parseNumber } from './numbers.ts'
import type { MetricType, Sample } from './types.ts'

/** Sample-name suffixes a family of each type owns besides its own name. */
export const SUFFIXES: Readonly<Record<MetricType, readonly string[]>> = {
  counter: ['_total', '_created'],
  histogram: ['_bucket', '_sum', '_count', '_created'],
  // OpenMetrics spells them _gsum/_gcount; Prometheus also accepts _sum/_count (corpus C5).
  gaugehistogram: ['_bucket', '_gsum', '_gcount', '_sum', '_count'],
  summary: ['_sum', '_count', '_created'],
  info: ['_info'],
  gauge: [],
  untyped: [],
  unknown: [],
  stateset: [],
}
export const ALL_SUFFIXES = ['_total', '_created', '_bucket', '_sum', '_count', '_gsum', '_gcount', '_info']

// Exemplars: counters' _total, and (as Prometheus accepts, corpus C5) histogram and summary _bucket/_count/_sum.
const EXEMPLAR_SUFFIXES: Readonly<Partial<Record<MetricType, readonly string[]>>> = {
  counter: ['_total'],
  histogram: ['_bucket', '_count', '_sum'],
  gaugehistogram: ['_bucket', '_gcount', '_gsum', '_count', '_sum'],
  summary: ['_count', '_sum'],
}

/** OpenMetrics rules on a sample's value, labels and exemplar, given its family type and name suffix. */
export function omSampleProblem(type: MetricType, suffix: string, s: Sample): string | undefined {
  const v = s.value
  const notCount = !(v >= 0)
  if (type === 'counter' && suffix === '_total' && notCount) return `counter value must be a non-negative number, got "${s.raw}"`
  if (type === 'histogram' || type === 'gaugehistogram') {
    if (suffix === '_bucket') {
      const le = s.labels['le']
      if (le === undefined) return `histogram bucket ${s.name} has no "le" label`
      const bound = parseNumber(le, true)
      if (bound === undefined || Number.isNaN(bound)) return `histogram bucket has an invalid le="${le}"`
    }
    if ((suffix === '_bucket' || suffix.endsWith('count')) && notCount) return `${s.name} must be a non-negative number, got "${s.raw}"`
    if (suffix.endsWith('sum') && Number.isNaN(v)) return `${s.name} must not be NaN`
  }
  if (type === 'summary') {
    if (suffix === '') {
      const q = s.labels['quantile']
      if (q === undefined) return `summary sample ${s.name} has no "quantile" label`
      const qv = parseNumber(q, false)
      if (qv === undefined || !(qv >= 0 && qv <= 1)) return `summary quantile must be a number in [0, 1], got "${q}"`
    }
    if (suffix === '_count' && notCount) return `${s.name} must be a non-negative number, got "${s.raw}"`
  }
  if (type === 'stateset' && v !== 0 && v !== 1) return `stateset value must be 0 or 1, got "${s.raw}"`
  if (type === 'info' && v !== 1) return `info value must be 1, got "${s.raw}"`
  if (s.exemplar) {
    if (!EXEMPLAR_SUFFIXES[type]?.includes(suffix)) return `exemplars are not allowed on ${type} sample ${s.name}`
    let chars = 0
    for (const [k, val] of Object.entries(s.exemplar.labels)) chars += k.length + val.length
    if (chars > 128) return `exemplar labels are ${chars} characters long (at most 128)`
  }
  return undefined
}
