// Reading /metrics for the meter step: every series of the knob's meter (by exact sample name, or
// an earlier version's name of it where the page has only that), the traffic counters that say
// whether requests flowed (the engine profile's names), the process start time, and evidence-only
// series; what the page would make Prometheus refuse. Absent is not zero.
import { HttpError } from '../../seams/http.ts'
import { parsePrometheusText, contentTypeFormat, type Sample } from '../../prom/parse.ts'
import { endpointUrl, type RunContext } from '../context.ts'
import { fromMetrics, type FirstContactProblem } from '../first-contact/answers.ts'
import { seriesKey, seriesName, type MetricsReading, type SeriesValue } from './reading.ts'

import { allTrafficNames, namesOf, trafficNames } from './names.ts'

export { seriesKey, seriesName, type MetricsReading, type SeriesValue } from './reading.ts'

export class MetricsUnavailable extends Error {
  readonly code = 'ARMPROOF_METRICS_UNAVAILABLE'
  readonly url: string
  readonly detail: string
  /** Nothing answered (refused, timed out), as opposed to a page that could not be used. */
  readonly unreachable: boolean
  /** The answer is the operator's mistake by first contact's rule (a gateway guarding /metrics). */
  readonly mistake: FirstContactProblem | undefined
  constructor(url: string, detail: string, unreachable: boolean, mistake?: FirstContactProblem) {
    super(`${url}: ${detail}`)
    this.url = url
    this.detail = detail
    this.unreachable = unreachable
    this.mistake = mistake
  }
}

export const PROCESS_START = 'process_start_time_seconds'

function matches(sample: Sample, labels: Readonly<Record<string, string>> | undefined): boolean {
  if (!labels) return true
  return Object.entries(labels).every(([k, v]) => sample.labels[k] === v)
}

/**
 * A string of its own, holding no part of the page it was read from. The parser hands label
 * values and tokens as slices of the page (V8 keeps a slice's whole parent alive): a reading kept
 * past its page (the baseline until the meter's watch, every page of the watch, each target's of a
 * fleet) would keep every page whole, tens of MB each for a vLLM deployment.
 */
export function ownCopy(text: string): string {
  return text.length < 13 ? text : Buffer.from(text, 'utf16le').toString('utf16le')
}

function kept(s: Sample): SeriesValue {
  return {
    labels: Object.fromEntries(Object.entries(s.labels).map(([k, v]) => [ownCopy(k), ownCopy(v)])),
    value: s.value,
    raw: ownCopy(s.raw),
    line: s.line,
  }
}

/** Series of `name` that appear more than once among `samples`. */
function duplicatesOf(name: string, samples: readonly SeriesValue[]): string[] {
  const seen = new Map<string, number>()
  const out: string[] = []
  for (const s of samples) {
    const key = seriesKey(s.labels)
    const first = seen.get(key)
    if (first === undefined) seen.set(key, s.line)
    else out.push(`${seriesName(name, s.labels)} (lines ${first} and ${s.line})`)
  }
  return out
}

/**
 * Samples of `name` that belong to the served model: where series carry `model_name`, only the
 * model's own; series without it are kept (nothing says whose they are). The model unknown: all.
 */
export function ofModel(samples: readonly SeriesValue[], model: string | undefined): SeriesValue[] {
  return model === undefined ? [...samples] : samples.filter((s) => s.labels.model_name === undefined || s.labels.model_name === model)
}

/** Sum of the served model's samples of `name`; undefined when it has none (absent is not zero). */
export function sampleSum(
  r: MetricsReading,
  name: string,
  model: string | undefined,
  keep: (s: SeriesValue) => boolean = () => true,
): number | undefined {
  const samples = ofModel(r.series[name] ?? [], model).filter(keep)
  return samples.length === 0 ? undefined : samples.reduce((a, s) => a + s.value, 0)
}

/** One scrape of /metrics (redirects followed). Throws MetricsUnavailable when no page was read. */
/** As Prometheus scrapes: it asks for gzip (decoded by the HTTP seam) and the text format. */
export const METRICS_HEADERS: Readonly<Record<string, string>> = {
  'accept-encoding': 'gzip',
  accept: 'text/plain;version=0.0.4;q=0.9,*/*;q=0.1',
}

export async function readMetrics(ctx: RunContext, timeoutMs: number): Promise<MetricsReading> {
  const url = endpointUrl(ctx, '/metrics')
  const meter = ctx.spec.proof.meter
  const engine = ctx.engine
  // The meter under its name, else under an earlier version's (the profile's renamed:).
  const meterNames = meter ? namesOf(engine, meter.name) : []
  const stepTime = engine.metrics.stepTime ? Object.values(engine.metrics.stepTime) : []
  // The engine's info gauges a knob reads: those it is described by (../resolved/endpoints.ts reads
  // them from this page), and with its own traffic vLLM's cache_config_info (the block size its traffic is sized by, ./traffic.ts).
  const described = ctx.spec.proof.sources ?? {}
  const infos = engine.resolved.flatMap((r) =>
    r.shape === 'info-metric' && r.metric && (ctx.spec.proof.traffic || described[r.id] !== undefined) ? [r.metric] : [],
  )
  const others = [
    ...new Set([...(ctx.spec.proof.evidence ?? []), ...allTrafficNames(trafficNames(engine)), ...stepTime, PROCESS_START, ...infos]),
  ].filter((n) => !meterNames.includes(n))
  const meterSuffix = meter ? meter.name.slice(meter.name.indexOf(':') + 1) : undefined
  const meterPrefix = meter?.name.includes(':') ? meter.name.slice(0, meter.name.indexOf(':') + 1) : undefined
  const lookalikes = new Set<string>()
  const prefixNames = new Set<string>()
  const wanted = new Set([...meterNames, ...others])
  let res
  try {
    res = await ctx.http.request({ method: 'GET', url, timeoutMs, followRedirects: true, headers: METRICS_HEADERS })
  } catch (error) {
    if (!(error instanceof HttpError)) throw error
    throw new MetricsUnavailable(url, error.message, error.failure === 'refused' || error.failure === 'timeout' || error.failure === 'dns')
  }
  if (res.status !== 200)
    throw new MetricsUnavailable(res.url, `HTTP ${res.status}: ${res.body.slice(0, 200)}`, false, fromMetrics(res, `GET ${url}`))
  const page = parsePrometheusText(res.body, {
    format: contentTypeFormat(res.headers['content-type']),
    keep: (name) => {
      if (meterPrefix && name.startsWith(meterPrefix) && prefixNames.size < 400) prefixNames.add(name)
      if (wanted.has(name)) return true
      if (meterSuffix && !meterNames.includes(name) && name.endsWith(`:${meterSuffix}`)) lookalikes.add(name)
      return false
    },
  })
  // Declared without any sample: the text format names the family after its samples (x_total), OpenMetrics without _total.
  const declaredAs = (name: string) => page.families.find((f) => f.name === name || `${f.name}_total` === name)?.type
  const meterName = meterNames.find((n) => page.samples(n).length > 0 || declaredAs(n) !== undefined) ?? meter?.name
  const meterSamples = meter
    ? page
        .samples(meterName!)
        .filter((s) => matches(s, meter.labels))
        .map(kept)
    : []
  const meterType =
    meter && meterSamples.length > 0 ? page.families.find((f) => f.samples.some((s) => s.name === meterName))?.type : undefined
  const declared = meter && page.samples(meterName!).length === 0 ? declaredAs(meterName!) : undefined
  const series: Record<string, SeriesValue[]> = {}
  for (const name of others) series[name] = page.samples(name).map(kept)
  const starts = series[PROCESS_START]!
  const duplicates = [
    ...(meter ? duplicatesOf(meterName!, page.samples(meterName!).map(kept)) : []),
    ...others.filter((n) => n !== PROCESS_START).flatMap((n) => duplicatesOf(n, series[n]!)),
  ]
  return {
    at: ctx.clock.now(),
    url: res.url,
    meter: meterSamples,
    ...(meterType ? { meterType } : {}),
    ...(declared ? { meterDeclared: declared } : {}),
    ...(meter && meterName !== meter.name ? { meterAs: meterName! } : {}),
    ...(meter && meterSamples.length === 0 && declared === undefined
      ? { prefixNames: [...prefixNames].sort().slice(0, 40).map(ownCopy) }
      : {}),
    series,
    ...(starts.length === 1 ? { processStart: starts[0]!.value } : {}),
    duplicates,
    lookalikes: [...lookalikes].sort().map(ownCopy),
    prefixes: page.prefixes().map(ownCopy),
    sampleCount: page.sampleCount,
    errors: page.errors.slice(0, 5).map((e) => ({ ...e, message: ownCopy(e.message), text: ownCopy(e.text) })),
    errorCount: page.errors.length,
  }
}

/** The served model's sum of the first of `names` the page has (a counter under an earlier version's name); undefined when none. */
export function firstValueOf(
  r: MetricsReading,
  names: readonly string[],
  model: string | undefined,
  keep?: (s: SeriesValue) => boolean,
): number | undefined {
  for (const n of names) {
    const v = sampleSum(r, n, model, keep)
    if (v !== undefined) return v
  }
  return undefined
}

/** Mean step times from the engine's step counters (radiance's): evidence only, never a gate. */
export function stepTimes(
  r: MetricsReading,
  model: string | undefined,
  names: { steps: string; stepsDecode: string; seconds: string; secondsDecode: string } | undefined,
): { decodeMeanMs?: number; mixedMeanMs?: number } {
  if (!names) return {}
  const steps = sampleSum(r, names.steps, model)
  const stepsDecode = sampleSum(r, names.stepsDecode, model)
  const seconds = sampleSum(r, names.seconds, model)
  const secondsDecode = sampleSum(r, names.secondsDecode, model)
  const out: { decodeMeanMs?: number; mixedMeanMs?: number } = {}
  if (stepsDecode && secondsDecode !== undefined) out.decodeMeanMs = (secondsDecode / stepsDecode) * 1000
  if (steps !== undefined && stepsDecode !== undefined && seconds !== undefined && secondsDecode !== undefined && steps - stepsDecode > 0) {
    out.mixedMeanMs = ((seconds - secondsDecode) / (steps - stepsDecode)) * 1000
  }
  return out
}
