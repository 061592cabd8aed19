// The meter read through a central Prometheus (`--prometheus-url`) instead of the engine's
// /metrics: each poll asks Prometheus what it stored of the target over the window
// (./prometheus-source.ts, through the HTTP seam, so record and replay see every query) and hands
// it on as the ladder reads scrapes (./scrape.ts), one per `up` sample. It only reads; the ladder
// (./ladder.ts) decides.
import { HttpError, type HttpClient } from '../../seams/http.ts'
import type { EngineProcess, RunContext, StepOutputs } from '../context.ts'
import type { MeterEvidence } from './evidence.ts'
import { allTrafficNames, trafficNames, type TrafficNames } from './names.ts'
import { checkPromOptions, PromSourceError, type PromFetch } from './prom-options.ts'
import { createPromSource, type PromSource } from './prometheus-source.ts'
import type { PromReading, SeriesReading } from './prom-reading.ts'
import { MIN_GAP_MS, promFleetStart, sharedPromSource } from './prom-fleet.ts'
import { buildQueries } from '../../prom/query.ts'
import type { MetricType } from '../../prom/types.ts'
import type { PromWait, SeriesValue } from './reading.ts'
import { countsAsRequest, trafficCounts, type MeterReadings, type MeterScrape, type ReadFailure } from './scrape.ts'
import type { MeterSource } from './watch.ts'
import type { Tie } from './prom-tie.ts'
import { historyWindow, needsTie, tieNow, tieRecord, type TieHistory, type TieRecord } from './prom-tie-read.ts'
import { MAX_AGE_S } from './prom-tie.ts'

/** What a source polls: a target's own, or its part of a live fleet's shared polls (./prom-fleet.ts). */
export type MeterPromSource = Pick<PromSource, 'matchers' | 'selector' | 'poll' | 'queries' | 'history'> & {
  shared?: () => { targets: number; queries: number }
  scrapeIntervalMs?: () => number | null
}

/** Prometheus' answers through an HTTP client (the seam): status and body; nothing answering rejects. */
export function promFetch(http: HttpClient, maxBodyBytes: number): PromFetch {
  return async (url) => {
    try {
      const res = await http.request({ method: 'GET', url, timeoutMs: 15_000, maxBodyBytes })
      return { status: res.status, body: res.body }
    } catch (error) {
      if (error instanceof HttpError) throw new Error(error.message)
      throw error
    }
  }
}

/** The source for this run's target; a PromSourceError (the operator's options) comes back as its failure. */
export function sourceFor(
  ctx: RunContext,
  model: string | undefined,
): { source: MeterPromSource } | { failure: PromSourceError['failure'] } {
  const target = ctx.target
  const options = {
    prometheusUrl: target.prometheusUrl!,
    ...(target.prometheusMatch ? { match: target.prometheusMatch } : {}),
    baseUrl: target.baseUrl ?? 'http://replay.invalid',
    meterName: ctx.spec.proof.meter!.name,
    trafficNames: allTrafficNames(trafficNames(ctx.engine)),
    ...(model !== undefined ? { model } : {}),
  }
  try {
    // A live fleet polls its targets of one Prometheus together; a recording keeps each target's own queries.
    if (target.mode === 'live' && promFleetStart() !== null) {
      const { base, matchers } = checkPromOptions(options)
      const shared = sharedPromSource(options, target.caFile, base, matchers)
      if (shared) return { source: { ...shared, selector: buildQueries(matchers, options.meterName, options.trafficNames, 1).selector } }
    }
    return { source: createPromSource({ ...options, fetch: promFetch(ctx.http, 32 * 1024 * 1024) }) }
  } catch (error) {
    if (!(error instanceof PromSourceError)) throw error
    return { failure: error.failure }
  }
}

/**
 * Before the probes: the watch window starts now (in a live fleet: when the fleet started), and
 * waits (at most 30 s or the meter window; in a live fleet at most the target's scrape interval
 * after the start) until Prometheus holds a scrape of the target taken after that moment, so the
 * first sample of the window precedes the probes' traffic and a rise is this run's. Never throws:
 * a Prometheus that does not answer is judged by the meter step.
 */
export async function markPromBaseline(ctx: RunContext): Promise<Pick<Partial<StepOutputs>, 'baseline'>> {
  // In a live fleet the window starts once, when the fleet did: one wait for all its targets.
  const live = ctx.target.mode === 'live'
  const start = (live ? promFleetStart() : null) ?? ctx.clock.now()
  const began = performance.now()
  // How long this target waited, and (live) when its wait ended after the window's start: evidence only, in real time.
  const waited = () => ({
    ms: Math.round(performance.now() - began),
    ...(live ? { endedAfterStartMs: Math.max(0, Date.now() - start) } : {}),
  })
  const made = sourceFor(ctx, ctx.target.model ?? undefined)
  if ('failure' in made) return { baseline: { source: 'prometheus', sinceMs: start } }
  const deadline = start + Math.min(30_000, ctx.target.meterWindowMs)
  for (;;) {
    const now = ctx.clock.now()
    const r = await made.source.poll(start, Math.max(now, start + 1000))
    const baseline = { baseline: { source: 'prometheus' as const, sinceMs: start, waited: waited() } }
    // No target behind the selector at all (no `up`, nothing in the targets' metadata): nothing to wait for.
    if (!r.ok || (r.reading.scrapes?.seen ?? 0) >= 1 || (r.reading.scrapes === null && r.reading.targets.length === 0)) return baseline
    if (now >= deadline) return baseline
    // A fleet knows each target's scrape interval: one interval after the start a scrape has been
    // taken after it (held by Prometheus or not yet), so the wait never lasts longer than that.
    // Another poll (the sleep, then a fleet poll's wait for its turn) may not end before then: sleep to it instead.
    const interval = made.source.scrapeIntervalMs?.() ?? null
    if (interval !== null) {
      const left = start + interval - ctx.clock.now()
      if (left <= 500 + MIN_GAP_MS + 100) {
        if (left > 0) await ctx.clock.sleep(left)
        return { baseline: { ...baseline.baseline, waited: waited() } }
      }
    }
    ctx.progress(`waiting for Prometheus to scrape ${r.reading.selector} once before the probes`)
    await ctx.clock.sleep(Math.min(500, deadline - now))
  }
}

const matches = (s: SeriesReading, labels: Readonly<Record<string, string>>): boolean =>
  Object.entries(labels).every(([k, v]) => s.labels[k] === v)

/**
 * What Prometheus stored of the target over the window, as one scrape per `up` == 1 sample (every
 * sample of one scrape carries its timestamp); an `up` == 0 sample is a scrape Prometheus lost:
 * not observed, never an absence. Without `up` (the selector takes no target), sample times stand
 * in, and nothing is counted.
 */
export function promScrapes(
  r: PromReading,
  fromMs: number,
  where: string,
  meterLabels: Readonly<Record<string, string>>,
  names: TrafficNames,
  tie?: Tie,
): Omit<MeterReadings, 'reads' | 'failures'> {
  const ups = r.series.filter((s) => s.role === 'up')
  const family = r.series.filter((s) => s.role === 'meter')
  const meters = family.filter((s) => matches(s, meterLabels))
  const traffic = r.series.filter((s) => s.role === 'traffic' && s.servedModel !== false)
  const processes = r.series.filter((s) => s.role === 'process')
  const lookalikes = [...new Set(r.series.filter((s) => s.role === 'meter-other-prefix').map((s) => s.name))]
  const counted = ups.length > 0
  const inWindow = (t: number) => t >= fromMs
  const stamps = (counted ? ups.flatMap((s) => s.samples.filter((p) => p.value === 1)) : [...meters, ...traffic].flatMap((s) => s.samples))
    .map((p) => p.t)
    .filter(inWindow)
  const times = [...new Set(stamps)].sort((a, b) => a - b)
  const sum = (series: readonly SeriesReading[], t: number): number | undefined => {
    const vs = series.flatMap((s) => s.samples.filter((p) => p.t === t).map((p) => p.value))
    return vs.length ? vs.reduce((a, b) => a + b, 0) : undefined
  }
  // A counter under its name, else under an earlier version's: the first of its names Prometheus holds.
  const named = (names: readonly string[]) => traffic.filter((s) => s.name === names.find((n) => traffic.some((x) => x.name === n)))
  const requests = named(names.requests).filter((s) => countsAsRequest(s.labels))
  // The targets' metadata types the family; a family it lists while no sample exists is declared, not absent.
  const type = r.meterFamily as MetricType | undefined
  const scrapes = times.map((t): MeterScrape => {
    const meter: SeriesValue[] = meters.flatMap((s) =>
      s.samples.filter((p) => p.t === t).map((p) => ({ labels: s.labels, value: p.value, raw: p.raw, line: 0 })),
    )
    const none = !family.some((s) => s.samples.some((p) => p.t === t))
    const counts = trafficCounts(sum(requests, t), sum(named(names.promptTokens), t), sum(named(names.generationTokens), t))
    const starts = processes.flatMap((s) => s.samples.filter((p) => p.t === t))
    const start = starts.length === 1 ? { processStart: starts[0]!.value, processStartRaw: starts[0]!.raw } : {}
    const typed = type === undefined ? {} : meter.length > 0 ? { meterType: type } : none ? { declared: type } : {}
    return {
      at: t,
      where,
      meter,
      ...typed,
      duplicates: [],
      ...start,
      traffic: counts,
      lookalikes,
      prefixes: r.prefixes,
      sampleCount: meter.length,
      ...(tie ? { seriesTie: tie } : {}),
    }
  })
  const unobserved = ups.reduce((n, s) => n + s.samples.filter((p) => p.value !== 1 && inWindow(p.t)).length, 0)
  return { scrapes, absentAfter: 2, counted, targets: r.targets, unobserved, warnings: r.warnings }
}

/**
 * The Prometheus source of one meter step: the window runs from `fromMs` (the baseline's). Where
 * Prometheus holds no process_start_time_seconds of the target, the series are tied to `engine` by
 * their birth (./prom-tie.ts): its history is read once, at the first poll.
 */
export function promSource(
  ctx: RunContext,
  source: MeterPromSource,
  fromMs: number,
  intervalMs: number,
  waited?: PromWait,
  engine?: EngineProcess,
): MeterSource {
  const url = ctx.target.prometheusUrl!
  const labels = ctx.spec.proof.meter!.labels ?? {}
  let polls = 0
  let reads = 0
  let failures = 0
  let lastFailure: ReadFailure | undefined
  let halted: ReadFailure | undefined
  let last: PromReading | undefined
  let history: TieHistory | undefined
  let tie: TieRecord | undefined
  let tieQueries = 0
  let seen: Omit<MeterReadings, 'reads' | 'failures'> = { scrapes: [], absentAfter: 2, counted: false }
  return {
    intervalMs,
    async read(now) {
      polls++
      const result = await source.poll(fromMs, Math.max(now, fromMs + 1000))
      if (!result.ok) {
        failures++
        const f = result.failure
        // Prometheus answered, but not with what was asked: the operator's URL or selector, not the engine.
        lastFailure = { blame: f.kind === 'unreachable' ? 'none' : 'operator', what: f.what, where: f.where, next: f.next }
        if (f.kind !== 'unreachable') halted = lastFailure
        return
      }
      reads++
      last = result.reading
      let tied: Tie | undefined
      if (needsTie(engine, last)) {
        const window = historyWindow(engine.startTimeSeconds, now)
        if (window && !history) tieQueries += 2
        history ??= window
          ? await source.history(window.fromMs, Math.max(now, window.fromMs + 1000))
          : {
              ok: false,
              observed: `pid ${engine.pid} started more than ${MAX_AGE_S / 3600} h ago: the series tie reads no history that long`,
              next: "export process_start_time_seconds, or read the engine's own /metrics (without --prometheus-url)",
            }
        tied = tieNow(engine, ctx.target.baseUrl ?? '', history, last)
        // Fewer than two scrapes in the history: read it again at the next poll.
        if (!tied.tied && tied.pending) history = undefined
        tie = tieRecord(tied, tieQueries)
      }
      seen = promScrapes(last, fromMs, `Prometheus ${url}: ${last.selector}`, labels, trafficNames(ctx.engine), tied)
    },
    readings(): MeterReadings {
      return { ...seen, reads, failures, ...(lastFailure ? { lastFailure } : {}), ...(halted ? { halted } : {}) }
    },
    extras(): Partial<MeterEvidence> {
      return {
        prometheus: {
          url,
          selector: last?.selector ?? null,
          polls,
          queries: source.queries(),
          instances: last?.instances ?? [],
          targets: last?.targets ?? [],
          metadata: last?.metadata ?? null,
          warnings: last?.warnings ?? [],
          ...(source.shared ? { shared: source.shared() } : {}),
          ...(waited ? { waited } : {}),
          ...(tie ? { tie } : {}),
        },
      }
    },
  }
}
