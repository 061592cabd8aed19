// The meter read from the engine's own /metrics (./metrics.ts reads one page): the baseline page
// before the probes, then one page per poll, each as the ladder reads a scrape (./scrape.ts).
// It only reads; the ladder (./ladder.ts) decides.
import { endpointUrl, type RunContext, type StepOutputs } from '../context.ts'
import type { MeterEvidence } from './evidence.ts'
import {
  MetricsUnavailable,
  PROCESS_START,
  firstValueOf,
  readMetrics,
  stepTimes,
  sampleSum,
  type MetricsReading,
  type SeriesValue,
} from './metrics.ts'
import { trafficNames, type TrafficNames } from './names.ts'
import { countsAsRequest, trafficCounts, type MeterReadings, type MeterScrape, type ReadFailure } from './scrape.ts'
import type { MeterSource } from './watch.ts'

/** Before the probes send traffic: the meter's starting point. Never throws. */
export async function takeBaseline(ctx: RunContext): Promise<Pick<Partial<StepOutputs>, 'baseline'>> {
  if (!ctx.spec.proof.meter) return {}
  try {
    return { baseline: { source: 'metrics', reading: await readMetrics(ctx, Math.min(15_000, ctx.target.meterWindowMs)) } }
  } catch (error) {
    if (!(error instanceof MetricsUnavailable)) throw error
    return {}
  }
}

/** One page as the ladder reads a scrape: the served model's traffic (an aborted request is not traffic the knob acted on). */
export function pageScrape(r: MetricsReading, model: string | undefined, names: TrafficNames): MeterScrape {
  const traffic = trafficCounts(
    firstValueOf(r, names.requests, model, (s: SeriesValue) => countsAsRequest(s.labels)),
    firstValueOf(r, names.promptTokens, model),
    firstValueOf(r, names.generationTokens, model),
  )
  const first = r.errors[0]
  return {
    at: r.at,
    where: `GET ${r.url}`,
    meter: r.meter,
    ...(r.meterType ? { meterType: r.meterType } : {}),
    ...(r.meterDeclared ? { declared: r.meterDeclared } : {}),
    ...(r.meterAs ? { meterAs: r.meterAs } : {}),
    ...(r.prefixNames ? { prefixNames: r.prefixNames } : {}),
    ...(first && r.errorCount > 0 ? { refused: { ...first, count: r.errorCount } } : {}),
    duplicates: r.duplicates,
    ...(r.series[PROCESS_START]?.length === 1 && r.processStart !== undefined
      ? { processStart: r.processStart, processStartRaw: r.series[PROCESS_START][0]!.raw }
      : {}),
    traffic,
    lookalikes: r.lookalikes,
    prefixes: r.prefixes,
    sampleCount: r.sampleCount,
  }
}

/** The /metrics source of one meter step: the baseline page first, when one was read. */
export function pageSource(
  ctx: RunContext,
  model: string | undefined,
  baseline: MetricsReading | undefined,
  intervalMs: number,
): MeterSource {
  const url = endpointUrl(ctx, '/metrics')
  const names = trafficNames(ctx.engine)
  const pages: MetricsReading[] = baseline ? [baseline] : []
  const scrapes: MeterScrape[] = pages.map((p) => pageScrape(p, model, names))
  let failures = 0
  let lastFailure: ReadFailure | undefined
  let halted: ReadFailure | undefined
  return {
    intervalMs,
    async read(_now, remainingMs) {
      try {
        const page = await readMetrics(ctx, Math.max(1000, Math.min(30_000, remainingMs)))
        pages.push(page)
        scrapes.push(pageScrape(page, model, names))
      } catch (error) {
        if (!(error instanceof MetricsUnavailable)) throw error
        failures++
        lastFailure = {
          blame: error.unreachable ? 'none' : 'engine',
          what: error.detail,
          where: `GET ${error.url}`,
          next: `check ${url} is reachable from here, then run again`,
        }
        // A gateway guarding /metrics (first contact's rule): the operator's, never "the exporter is broken".
        if (error.mistake)
          halted = {
            blame: 'operator',
            what: error.detail,
            where: error.mistake.where,
            next: error.mistake.message,
            mistake: error.mistake,
          }
        else if (!error.unreachable)
          halted = {
            ...lastFailure,
            what: `/metrics did not serve a page: ${error.detail}`,
            where: `GET ${url}`,
            next: `check ${url} by hand (curl -sSL ${url} | head); the exporter is broken`,
          }
      }
    },
    readings(): MeterReadings {
      return {
        scrapes,
        reads: pages.length,
        failures,
        ...(lastFailure ? { lastFailure } : {}),
        ...(halted ? { halted } : {}),
        absentAfter: 1,
        counted: true,
      }
    },
    extras(): Partial<MeterEvidence> {
      const last = pages.at(-1)
      const evidenceMeters = Object.fromEntries(
        (ctx.spec.proof.evidence ?? []).map((n) => [
          n,
          { first: pages[0] ? (sampleSum(pages[0], n, model) ?? null) : null, last: last ? (sampleSum(last, n, model) ?? null) : null },
        ]),
      )
      return { evidenceMeters, stepTimes: last ? stepTimes(last, model, ctx.engine.metrics.stepTime) : {}, parseErrors: last?.errors ?? [] }
    },
  }
}
