// What effect asks Prometheus, bounded: per counter or histogram family and per window, two range
// queries, never more:
//   increase(<family>[<chunk>])        one point per chunk (an hour): the blocks of the judgement;
//                                      increase() counts resets as Prometheus counts them
//   last_over_time(<family>[<slot>])   one point per slot (≤ 10,000 a window): the samples' times
//                                      and values, so the scrape interval, the gaps and the resets
// (a histogram's buckets for the first, its _count for the second). The chunk is never shorter
// than four scrapes (checked against the interval the second query shows), so no rate window is
// ever the scrape interval; nothing is `or vector(0)`: a series Prometheus lacks stays absent.
import type { HttpClient } from '../seams/http.ts'
import { renderMatchers, type LabelMatcher } from '../prom/query.ts'
import { familyKey, type Family } from './metrics.ts'
import { queryRange, type Matrix, type RangeAnswer, type RangeQuery } from './query.ts'
import type { FamilyData } from './evaluate.ts'
import type { Window, WindowRole } from './windows.ts'

/** A PromQL range: whole seconds where it can be. */
export const rangeText = (ms: number): string => (ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`)

/** A family's selector: the target's matchers, then the family's own. */
export function selectorOf(matchers: readonly LabelMatcher[], f: Family, suffix = ''): string {
  const own = renderMatchers(matchers)
  return `${f.name}${suffix}${f.match ? `${own.slice(0, -1)},${f.match}}` : own}`
}

const sampled = (f: Family) => (f.kind === 'histogram' ? '_count' : '')

export function increaseQuery(matchers: readonly LabelMatcher[], f: Family, w: Window): RangeQuery {
  const series = selectorOf(matchers, f, f.kind === 'histogram' ? '_bucket' : '')
  return { expr: `increase(${series}[${rangeText(w.chunkMs)}])`, startMs: w.startMs + w.chunkMs, endMs: w.endMs, stepMs: w.chunkMs }
}

export function slotsQuery(matchers: readonly LabelMatcher[], f: Family, w: Window): RangeQuery {
  return {
    expr: `last_over_time(${selectorOf(matchers, f, sampled(f))}[${rangeText(w.slotMs)}])`,
    startMs: w.startMs + w.slotMs,
    endMs: w.endMs,
    stepMs: w.slotMs,
  }
}

export interface ReadProgress {
  done: number
  total: number
  what: string
}

export interface Reader {
  http: HttpClient
  base: string
  matchers: readonly LabelMatcher[]
  onProgress?: (p: ReadProgress) => void
  /** Queries in flight at once. */
  concurrency?: number
}

export type ReadResult =
  | { ok: true; data: (f: Family, role: WindowRole) => FamilyData; queries: number; matrices: Matrix[] }
  | { ok: false; failure: Extract<RangeAnswer, { ok: false }>['failure']; operator: boolean; queries: number }

/** Runs `jobs` a few at a time, in order of start; the first failure stops the ones not started. */
async function runAll<T>(jobs: ReadonlyArray<() => Promise<T>>, concurrency: number, stop: (r: T) => boolean): Promise<T[]> {
  const out: T[] = new Array(jobs.length)
  let next = 0
  let stopped = false
  const worker = async () => {
    while (!stopped && next < jobs.length) {
      const i = next++
      out[i] = await jobs[i]!()
      if (stop(out[i]!)) stopped = true
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, worker))
  return out
}

/** Every family in every window: 2 × families × windows queries. */
export async function readFamilies(
  reader: Reader,
  families: readonly Family[],
  windows: Readonly<Record<WindowRole, Window>>,
): Promise<ReadResult> {
  const roles = (Object.keys(windows) as WindowRole[]).filter((r, i, all) => all.findIndex((x) => windows[x] === windows[r]) === i)
  const plan = families.flatMap((f) =>
    roles.flatMap((r) => [
      { f, r, kind: 'increase' as const, q: increaseQuery(reader.matchers, f, windows[r]) },
      { f, r, kind: 'slots' as const, q: slotsQuery(reader.matchers, f, windows[r]) },
    ]),
  )
  let done = 0
  const answers = await runAll(
    plan.map((p) => async () => {
      const a = await queryRange(reader.http, reader.base, p.q)
      reader.onProgress?.({ done: ++done, total: plan.length, what: `${p.f.name} ${p.r}` })
      return a
    }),
    reader.concurrency ?? 4,
    (a) => !a.ok,
  )
  const failed = answers.find((a): a is Extract<RangeAnswer, { ok: false }> => a !== undefined && !a.ok)
  if (failed) return { ok: false, failure: failed.failure, operator: failed.operator, queries: done }
  const byKey = new Map<string, FamilyData>()
  plan.forEach((p, i) => {
    const key = `${familyKey(p.f)} ${p.r}`
    const entry = byKey.get(key) ?? { increase: [], slots: [] }
    entry[p.kind] = (answers[i] as Extract<RangeAnswer, { ok: true }>).data
    byKey.set(key, entry)
  })
  // A window given twice (the before window as the baseline) is read once.
  const roleOf = (r: WindowRole) => roles.find((x) => windows[x] === windows[r])!
  return {
    ok: true,
    queries: plan.length,
    matrices: answers.map((a) => (a as Extract<RangeAnswer, { ok: true }>).data),
    data: (f, r) => byKey.get(`${familyKey(f)} ${roleOf(r)}`) ?? { increase: [], slots: [] },
  }
}
