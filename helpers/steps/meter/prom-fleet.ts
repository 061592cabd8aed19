// The meter through Prometheus for a live fleet: the targets of one Prometheus (and one meter)
// are polled together, one query set per poll for all the targets that asked for it. Targets whose
// selectors differ only in one `label="value"` matcher (the default `{instance="host:port"}` for
// all of them) are asked with that matcher combined into `label=~"v1|v2|…"` (each value quoted
// as a regular expression that matches exactly it), and the series and the targets' metadata of
// the answer are cut back to each target by that label: the same series its own selector would
// have taken, read by the same code (./prom-reading.ts `readingOf`). A poll is joined only
// before it is sent, and the next one starts at least MIN_GAP_MS after the last: Prometheus holds
// a new sample of a target once per scrape interval, never more often.
//
// The fleet's window starts once, when the fleet starts (`openPromFleet`): each target's wait for
// a scrape taken after that moment (./from-prometheus.ts `markPromBaseline`) is then one wait for
// the whole fleet, over by one scrape interval after the start.
import type { LabelMatcher } from '../../prom/query.ts'
import { regexQuote } from '../../prom/query.ts'
import { askPoll, askUp } from './prom-ask.ts'
import type { PromFetch, PromSourceOptions } from './prom-options.ts'
import type { PromResult } from './prometheus-source.ts'
import { readingOf, scrapeIntervalOf, type PollAnswer } from './prom-reading.ts'
import { tieHistory } from './prometheus-source.ts'

/** The least time between two polls of one fleet poller. */
export const MIN_GAP_MS = 500
/** At most this many targets in one query (the URL carries each one's value). */
export const MAX_PER_QUERY = 200
/** How far back a fleet reads its targets' `up` once, to know each one's scrape interval. */
export const INTERVAL_LOOKBACK_S = 90

interface Asker {
  matchers: readonly LabelMatcher[]
  model: string | undefined
  sinceMs: number
  nowMs: number
  resolve(r: { result: PromResult; targets: number; queries: number; intervalMs: number | null }): void
}

interface Poller {
  waiting: Asker[]
  busy: boolean
  timer: NodeJS.Timeout | null
  lastSent: number
  queries: number
  /** Each target's scrape interval (by its group and value), read once; null: not known. */
  intervals: Map<string, number | null>
}

interface Fleet {
  startedAt: number
  fetch: (caFile: string | null) => PromFetch
  pollers: Map<string, Poller>
}

let fleet: Fleet | null = null

/** A live fleet starts: from now on its targets of one Prometheus share their polls (`fetchFor`: the HTTP exchange, per --ca-file). */
export function openPromFleet(startedAt: number, fetchFor: (caFile: string | null) => PromFetch): void {
  fleet = { startedAt, fetch: fetchFor, pollers: new Map() }
}

export function closePromFleet(): void {
  for (const p of fleet?.pollers.values() ?? []) if (p.timer) clearTimeout(p.timer)
  fleet = null
}

/** When the live fleet started (its targets' windows start there), or null outside one. */
export function promFleetStart(): number | null {
  return fleet?.startedAt ?? null
}

/** Queries the fleet sent to Prometheus so far, all pollers together. */
export function promFleetQueries(): number {
  return [...(fleet?.pollers.values() ?? [])].reduce((n, p) => n + p.queries, 0)
}

/** The matcher that tells a target from the others of its group: its `instance="…"`, else its first `label="value"`. */
function distinguishing(matchers: readonly LabelMatcher[]): number {
  const eq = (m: LabelMatcher) => m.op === '=' && m.value !== ''
  const i = matchers.findIndex((m) => eq(m) && m.name === 'instance')
  return i >= 0 ? i : matchers.findIndex(eq)
}

const canonical = (ms: readonly LabelMatcher[]): string => JSON.stringify([...ms].map((m) => [m.name, m.op, m.value]).sort())

/** The askers in groups that one selector can take together: the same matchers but one `label="value"`. */
function groups(askers: readonly Asker[]): Array<{ label: string | null; rest: LabelMatcher[]; askers: Asker[] }> {
  const out = new Map<string, { label: string | null; rest: LabelMatcher[]; askers: Asker[] }>()
  for (const a of askers) {
    const i = distinguishing(a.matchers)
    const label = i < 0 ? null : a.matchers[i]!.name
    const rest = a.matchers.filter((_, j) => j !== i)
    const key = i < 0 ? `alone ${canonical(a.matchers)}` : `${label} ${canonical(rest)}`
    const g = out.get(key) ?? { label, rest: i < 0 ? [...a.matchers] : rest, askers: [] }
    g.askers.push(a)
    out.set(key, g)
  }
  return [...out.values()].flatMap((g) => {
    const chunks: Array<typeof g> = []
    for (let k = 0; k < g.askers.length; k += MAX_PER_QUERY) chunks.push({ ...g, askers: g.askers.slice(k, k + MAX_PER_QUERY) })
    return chunks
  })
}

/**
 * The answer for a group, cut to one of its targets as its own poll would have been answered: the
 * series and metadata entries whose `label` is its value, and of their samples those in its own
 * range (`[Ns]` before the evaluation time, both ends included, as Prometheus 2 selects them;
 * the group's range starts at its earliest target's window).
 */
function cut(answer: PollAnswer, label: string | null, value: string | undefined, sinceMs: number, nowMs: number): PollAnswer {
  const from = nowMs - Math.max(1, Math.ceil((nowMs - sinceMs) / 1000)) * 1000
  const mine = label === null || value === undefined ? answer.data : answer.data.filter((r) => r.metric[label] === value)
  return {
    data: mine.map((r) => ({ metric: r.metric, values: r.values.filter((p) => p.t >= from) })).filter((r) => r.values.length > 0),
    warnings: answer.warnings,
    entries:
      answer.entries === 'unsupported' || label === null || value === undefined
        ? answer.entries
        : answer.entries.filter((e) => e.target[label] === value),
  }
}

/** The group's matchers for these values of its label: `label="v"` for one, `label=~"v1|v2|…"` for more. */
function combined(g: ReturnType<typeof groups>[number], values: readonly string[]): LabelMatcher[] {
  if (g.label === null) return g.rest
  return [
    ...g.rest,
    values.length === 1
      ? { name: g.label, op: '=', value: values[0]! }
      : { name: g.label, op: '=~', value: values.map(regexQuote).join('|') },
  ]
}

async function pollGroup(options: SharedOptions, base: URL, g: ReturnType<typeof groups>[number], nowMs: number, p: Poller): Promise<void> {
  const labelValueOf = (a: Asker) => (g.label === null ? undefined : a.matchers[distinguishing(a.matchers)]!.value)
  const keyOf = (value: string | undefined) => JSON.stringify([g.label, canonical(g.rest), value ?? null])
  const values = [...new Set(g.askers.map(labelValueOf).filter((v): v is string => v !== undefined))]
  const sinceMs = Math.min(...g.askers.map((a) => a.sinceMs))
  // The targets asking for the first time: their scrape intervals are read once, beside the poll.
  const fresh = [...new Set(g.askers.map(labelValueOf))].filter((v) => !p.intervals.has(keyOf(v)))
  const [r, ups] = await Promise.all([
    askPoll(base, combined(g, values), options.meterName, options.trafficNames, sinceMs, nowMs, options.fetch),
    fresh.length > 0
      ? askUp(
          base,
          combined(
            g,
            fresh.filter((v): v is string => v !== undefined),
          ),
          INTERVAL_LOOKBACK_S,
          nowMs,
          options.fetch,
        )
      : Promise.resolve(null),
  ])
  p.queries += r.queries + (fresh.length > 0 ? 1 : 0)
  for (const v of fresh) {
    const mine = (ups ?? [])
      .filter((u) => g.label === null || u.metric[g.label] === v)
      .map((u) => scrapeIntervalOf(u.values))
      .filter((ms): ms is number => ms !== null)
    p.intervals.set(keyOf(v), mine.length > 0 ? Math.max(...mine) : null)
  }
  for (const a of g.askers) {
    const value = labelValueOf(a)
    const result: PromResult = r.ok
      ? {
          ok: true,
          reading: readingOf(cut(r.answer, g.label, value, a.sinceMs, nowMs), { ...options, model: a.model }, a.matchers, a.sinceMs, nowMs),
        }
      : { ok: false, failure: r.failure }
    a.resolve({ result, targets: g.askers.length, queries: r.queries, intervalMs: p.intervals.get(keyOf(value)) ?? null })
  }
}

type SharedOptions = Pick<PromSourceOptions, 'prometheusUrl' | 'meterName' | 'trafficNames'> & { fetch: PromFetch }

function pollerOf(key: string): Poller {
  let p = fleet!.pollers.get(key)
  if (!p) {
    p = { waiting: [], busy: false, timer: null, lastSent: 0, queries: 0, intervals: new Map() }
    fleet!.pollers.set(key, p)
  }
  return p
}

/**
 * A target's source in the live fleet: the same `poll(sinceMs, nowMs)` as its own source
 * (./prometheus-source.ts), answered from the fleet's next shared poll; `shared()` says how many
 * targets its polls served and how many queries they sent. Null outside a live fleet.
 */
export function sharedPromSource(
  options: Omit<PromSourceOptions, 'fetch'>,
  caFile: string | null,
  base: URL,
  matchers: readonly LabelMatcher[],
) {
  if (!fleet) return null
  const f = fleet
  const key = JSON.stringify([options.prometheusUrl, caFile, options.meterName, options.trafficNames])
  const shared: SharedOptions = {
    prometheusUrl: options.prometheusUrl,
    meterName: options.meterName,
    trafficNames: options.trafficNames,
    fetch: f.fetch(caFile),
  }
  let queries = 0
  let peers = 0
  let intervalMs: number | null = null
  const flush = async (p: Poller): Promise<void> => {
    p.timer = null
    if (p.busy || p.waiting.length === 0) return
    const askers = p.waiting.splice(0)
    p.busy = true
    p.lastSent = Date.now()
    const nowMs = Math.max(p.lastSent, ...askers.map((a) => a.nowMs))
    try {
      await Promise.all(groups(askers).map((g) => pollGroup(shared, base, g, nowMs, p)))
    } finally {
      p.busy = false
      schedule(p)
    }
  }
  const schedule = (p: Poller): void => {
    if (p.busy || p.timer !== null || p.waiting.length === 0) return
    p.timer = setTimeout(() => void flush(p), Math.max(0, p.lastSent + MIN_GAP_MS - Date.now()))
  }
  return {
    matchers,
    poll(sinceMs: number, nowMs: number): Promise<PromResult> {
      const p = pollerOf(key)
      return new Promise<PromResult>((resolve) => {
        p.waiting.push({
          matchers,
          model: options.model,
          sinceMs,
          nowMs,
          resolve: (r) => {
            queries += r.queries
            peers = Math.max(peers, r.targets)
            intervalMs = r.intervalMs
            resolve(r.result)
          },
        })
        schedule(p)
      })
    },
    /** Queries sent by the polls that answered this target (each shared with `targets` targets). */
    queries: () => queries,
    shared: () => ({ targets: peers, queries: promFleetQueries() }),
    /** This target's scrape interval as Prometheus' `up` showed it (known after its first poll), or null. */
    scrapeIntervalMs: () => intervalMs,
    /** The series tie's reads, this target's own (./prom-tie-read.ts). */
    history: (fromMs: number, nowMs: number) =>
      tieHistory(base, matchers, options.meterName, options.trafficNames, fromMs, nowMs, shared.fetch),
  }
}
