// What one poll's answers mean for one target, read: its series by role, its scrapes (from `up`),
// its scrape targets, the meter family's declared type. Shared by a target's own source
// (./prometheus-source.ts) and by a fleet's shared polls, cut back to each target (./prom-fleet.ts).
import { labelKey, type Matrix, type PromSample, type TargetMetadata } from '../../prom/answer.ts'
import { buildQueries, PROCESS_START, renderMatchers, type LabelMatcher } from '../../prom/query.ts'

export type SeriesRole = 'meter' | 'meter-other-prefix' | 'traffic' | 'up' | 'process'

export interface SeriesReading {
  name: string
  /** Every label but __name__. */
  labels: Readonly<Record<string, string>>
  role: SeriesRole
  /** model_name equals the served model; undefined when the series has no model_name or the model is unknown. */
  servedModel: boolean | undefined
  /** Raw samples in the window, oldest first. */
  samples: readonly PromSample[]
}

export interface PromReading {
  /** Evaluation time of both queries, ms. */
  at: number
  selector: string
  /** The PromQL sent, in order. */
  queries: readonly string[]
  series: readonly SeriesReading[]
  /** Scrapes in the window (`up` samples) and successful ones (`up` == 1), of the target scraped least when the selector takes several; null when no `up` matches the selector. */
  scrapes: { seen: number; up: number; lastAt: number | null } | null
  /** Sorted distinct prefixes before ':' of every returned series name ('' for none). */
  prefixes: readonly string[]
  /** Distinct `instance` labels of the returned series (evidence; the targets are counted in `targets`). */
  instances: readonly string[]
  /** The scrape targets the selector takes, one entry per target (two with one label set are two entries): from the `up` series, and the targets' metadata. */
  targets: readonly string[]
  /** The type the targets' metadata gives the meter's family (a family declared without a sample yet is listed too). */
  meterFamily?: string
  /** The targets' metadata was read, or the API has no such endpoint. */
  metadata: 'read' | 'unsupported'
  /** The range query's warnings (e.g. a partial response): such an answer proves no absence. */
  warnings: readonly string[]
}

/** What one poll's two answers held: the raw samples, and the targets' metadata (or that the API has none). */
export interface PollAnswer {
  data: Matrix
  warnings: string[]
  entries: TargetMetadata[] | 'unsupported'
}

/**
 * One entry per scrape target: the label sets of the `up` series, each counted as often as the
 * targets' metadata lists one family for it (targets relabelled to one label set are still two
 * targets: Prometheus scrapes both, into one series).
 */
function targetsOf(ups: readonly SeriesReading[], entries: readonly TargetMetadata[]): string[] {
  const count = new Map<string, number>()
  for (const u of ups) count.set(renderMatchers(labelsOf(u.labels)), 1)
  const per = new Map<string, number>()
  for (const e of entries) {
    const key = `${renderMatchers(labelsOf(e.target))} ${e.metric}`
    per.set(key, (per.get(key) ?? 0) + 1)
  }
  for (const [key, n] of per) {
    const target = key.slice(0, key.lastIndexOf(' '))
    count.set(target, Math.max(count.get(target) ?? 0, n))
  }
  return [...count].sort(([a], [b]) => (a < b ? -1 : 1)).flatMap(([t, n]) => Array.from({ length: n }, () => t))
}

const labelsOf = (labels: Readonly<Record<string, string>>) =>
  Object.keys(labels)
    .sort()
    .map((name) => ({ name, op: '=' as const, value: labels[name]! }))

function roleOf(name: string, meterName: string, trafficNames: readonly string[]): SeriesRole {
  if (name === meterName) return 'meter'
  if (trafficNames.includes(name)) return 'traffic'
  if (name === 'up') return 'up'
  if (name === PROCESS_START) return 'process'
  return 'meter-other-prefix'
}

/** A target's scrape interval from its `up` samples: the median time between two; null with fewer than two. */
export function scrapeIntervalOf(samples: readonly PromSample[]): number | null {
  const gaps = samples
    .slice(1)
    .map((p, i) => p.t - samples[i]!.t)
    .sort((a, b) => a - b)
  return gaps.length === 0 ? null : gaps[gaps.length >> 1]!
}

/** What Prometheus answered for one target, read: its series by role, its scrapes and targets (the fleet's answer, cut to the target, is read the same way). */
export function readingOf(
  answer: PollAnswer,
  options: { meterName: string; trafficNames: readonly string[]; model?: string | undefined },
  matchers: readonly LabelMatcher[],
  sinceMs: number,
  nowMs: number,
): PromReading {
  const q = buildQueries(matchers, options.meterName, options.trafficNames, (nowMs - sinceMs) / 1000)
  const series = new Map<string, SeriesReading>()
  for (const r of answer.data) {
    const { __name__: name, ...labels } = r.metric
    const served = labels.model_name === undefined || options.model === undefined ? undefined : labels.model_name === options.model
    series.set(labelKey(r.metric), {
      name: name!,
      labels,
      role: roleOf(name!, options.meterName, options.trafficNames),
      servedModel: served,
      samples: r.values,
    })
  }
  const all = [...series.values()].sort((a, b) =>
    a.name === b.name ? (labelKey(a.labels) < labelKey(b.labels) ? -1 : 1) : a.name < b.name ? -1 : 1,
  )
  const ups = all.filter((s) => s.role === 'up')
  // Scrapes per target (`up` series): the fewest counts, so one target's scrapes never stand in for another's.
  const perTarget = ups.map((s) => s.samples.filter((p) => p.t >= sinceMs))
  const scrapes = perTarget.length
    ? {
        seen: Math.min(...perTarget.map((ps) => ps.length)),
        up: Math.min(...perTarget.map((ps) => ps.filter((p) => p.value === 1).length)),
        lastAt: perTarget.reduce<number | null>((m, ps) => ps.reduce<number | null>((n, p) => (n === null || p.t > n ? p.t : n), m), null),
      }
    : null
  const entries = answer.entries === 'unsupported' ? [] : answer.entries
  const family = [options.meterName, options.meterName.replace(/_total$/, '')]
  const declared = entries.find((e) => family.includes(e.metric))?.type
  return {
    at: nowMs,
    selector: q.selector,
    queries: [q.range, `targets/metadata ${q.targets}`],
    series: all,
    scrapes,
    prefixes: [...new Set(all.map((s) => (s.name.includes(':') ? s.name.slice(0, s.name.indexOf(':')) : '')))].sort(),
    instances: [...new Set(all.flatMap((s) => (s.labels.instance === undefined ? [] : [s.labels.instance])))].sort(),
    targets: targetsOf(ups, entries),
    ...(declared !== undefined ? { meterFamily: declared } : {}),
    metadata: answer.entries === 'unsupported' ? 'unsupported' : 'read',
    warnings: answer.warnings,
  }
}
