// From Prometheus' answers to what the judgement reads: per chunk of a window, the increase of a
// counter or of each bucket of a histogram (summed over the engine's series: DP ranks, models),
// and what would make those numbers untrustworthy: bucket edges that differ between series or
// chunks, buckets whose increases are not cumulative, values that are not finite.
import type { Matrix } from './query.ts'
import type { Window } from './windows.ts'

/** `le` as a number; "+Inf" is Infinity; anything else that is not a float is NaN. */
export function parseLe(text: string): number {
  if (text === '+Inf' || text === 'Inf' || text === '+inf') return Infinity
  return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) ? Number(text) : NaN
}

/** The chunk a point evaluated at `t` covers, or -1 when it is not one of the window's evaluation times. */
export function chunkIndex(window: Window, t: number): number {
  const i = Math.round((t - window.startMs) / window.chunkMs) - 1
  return i >= 0 && i < window.chunks && Math.abs(window.startMs + (i + 1) * window.chunkMs - t) < 1000 ? i : -1
}

const groupKey = (metric: Record<string, string>, without: readonly string[]): string =>
  JSON.stringify(
    Object.entries(metric)
      .filter(([k]) => !without.includes(k))
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  )

export interface CounterBlocks {
  /** Per chunk, the increase summed over the series; 0 where no series had a value. */
  blocks: number[]
  series: number
  problems: string[]
}

export function counterBlocks(matrix: Matrix, window: Window): CounterBlocks {
  const blocks = new Array<number>(window.chunks).fill(0)
  const problems: string[] = []
  for (const s of matrix) {
    for (const p of s.values) {
      const i = chunkIndex(window, p.t)
      if (i < 0) continue
      if (!Number.isFinite(p.value) || p.value < 0)
        problems.push(
          `Prometheus computed an increase of ${p.raw} for one chunk: a counter is finite and never below zero, so the exporter is broken`,
        )
      else blocks[i]! += p.value
    }
  }
  return { blocks, series: matrix.length, problems: [...new Set(problems)] }
}

export interface HistogramBlocks {
  /** The finite upper edges, ascending. */
  edges: number[]
  /** The edges as Prometheus labels them, for messages (`le` text, +Inf included). */
  les: string[]
  /** Per chunk, counts per bucket (not cumulative), the +Inf bucket last. */
  blocks: number[][]
  series: number
  problems: string[]
}

/**
 * A histogram's per-chunk bucket increases (the answer to `increase(x_bucket[chunk])`), made
 * non-cumulative. A small non-monotonic step is increase()'s extrapolation (it stops at a
 * counter's zero, bucket by bucket) and is clamped; a large one means the buckets did not count
 * together (a restart that cannot be accounted for), said in `problems`.
 */
export function histogramBlocks(matrix: Matrix, window: Window): HistogramBlocks {
  const problems: string[] = []
  // per group (labels but le): per le: per chunk
  const groups = new Map<string, Map<string, Array<number | undefined>>>()
  for (const s of matrix) {
    const le = s.metric.le
    if (le === undefined) {
      problems.push('a _bucket series without an le label: not a histogram')
      continue
    }
    const g = groupKey(s.metric, ['le', '__name__'])
    const byLe = groups.get(g) ?? new Map<string, Array<number | undefined>>()
    groups.set(g, byLe)
    const row = new Array<number | undefined>(window.chunks).fill(undefined)
    for (const p of s.values) {
      const i = chunkIndex(window, p.t)
      if (i >= 0) row[i] = p.value
    }
    byLe.set(le, row)
  }
  // One layout for every group and chunk: the edges of the window.
  const layouts = new Set<string>()
  for (const byLe of groups.values()) {
    for (let i = 0; i < window.chunks; i++) {
      const present = [...byLe.entries()].filter(([, row]) => row[i] !== undefined).map(([le]) => le)
      if (present.length) layouts.add(sortLes(present).join(','))
    }
  }
  if (layouts.size > 1) problems.push(`the bucket edges change inside the window (${[...layouts].map((l) => `le ${l}`).join(' | ')})`)
  const les = sortLes([...new Set([...groups.values()].flatMap((m) => [...m.keys()]))])
  const numeric = les.map(parseLe)
  if (numeric.some(Number.isNaN)) problems.push(`an le label is not a number (${les.filter((l) => Number.isNaN(parseLe(l))).join(', ')})`)
  if (les.length && numeric.at(-1) !== Infinity)
    problems.push('no le="+Inf" bucket: Prometheus cannot count the observations above the last edge')
  const blocks: number[][] = []
  for (let i = 0; i < window.chunks; i++) {
    const cumulative = new Array<number>(les.length).fill(0)
    for (const byLe of groups.values()) les.forEach((le, k) => (cumulative[k]! += byLe.get(le)?.[i] ?? 0))
    if (cumulative.some((v) => !Number.isFinite(v) || v < 0))
      problems.push('Prometheus computed a bucket increase that is not a finite, non-negative number: the exporter is broken')
    const counts = cumulative.map((v, k) => v - (k === 0 ? 0 : cumulative[k - 1]!))
    const all = cumulative.at(-1) ?? 0
    const worst = Math.min(0, ...counts)
    if (-worst > Math.max(2, 0.1 * all)) {
      const k = counts.indexOf(worst)
      problems.push(
        `the buckets' increases are not cumulative in one chunk (le="${les[k - 1]}" rose by ${round(cumulative[k - 1]!)}, le="${les[k]}" by ${round(cumulative[k]!)}): the buckets did not reset together, a restart that cannot be accounted for`,
      )
    }
    blocks.push(counts.map((c) => Math.max(0, c)))
  }
  return { edges: numeric.filter((x) => Number.isFinite(x)), les, blocks, series: matrix.length, problems: [...new Set(problems)] }
}

function sortLes(les: readonly string[]): string[] {
  return [...les].sort((a, b) => parseLe(a) - parseLe(b) || (a < b ? -1 : 1))
}

const round = (v: number) => (Math.abs(v) >= 100 ? Math.round(v) : Math.round(v * 100) / 100)

/** The distinct values of one label across answers (e.g. how many targets a selector takes). */
export function labelValues(matrices: readonly Matrix[], label: string): string[] {
  return [...new Set(matrices.flatMap((m) => m.map((s) => s.metric[label]).filter((v): v is string => v !== undefined)))].sort()
}
