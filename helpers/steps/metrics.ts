// Reading /metrics for the meter step: the knob's meter by exact sample name, the traffic
// counters that say whether requests flowed, and evidence-only series. Absent is not zero.
import { HttpError } from '../http.ts'
import { parsePrometheusText, contentTypeFormat, type PromParseError, type Sample } from '../prom.ts'
import { endpointUrl, type RunContext } from '../run-context.ts'

export const TRAFFIC = {
  requests: 'vllm:request_success_total',
  promptTokens: 'vllm:prompt_tokens_total',
  generationTokens: 'vllm:generation_tokens_total',
  running: 'vllm:num_requests_running',
} as const

export const STEP_TIME = {
  steps: 'radiance:engine_steps_total',
  stepsDecode: 'radiance:engine_steps_decode_total',
  seconds: 'radiance:engine_step_seconds_total',
  secondsDecode: 'radiance:engine_step_seconds_decode_total',
} as const

export interface MetricsReading {
  /** Clock time of the scrape. */
  at: number
  url: string
  /** Sum of the meter's matching series; undefined when no such sample exists (absent is not zero). */
  meter: number | undefined
  meterSeries: number
  /** Any matching series read NaN or below zero. */
  meterOdd?: string
  /** Evidence-only sample sums by name (undefined = absent). */
  values: Record<string, number | undefined>
  /** Sample names elsewhere whose name after the prefix equals the meter's (e.g. vllm: instead of radiance:). */
  lookalikes: string[]
  prefixes: string[]
  sampleCount: number
  errors: PromParseError[]
}

export class MetricsUnavailable extends Error {
  readonly code = 'ARMPROOF_METRICS_UNAVAILABLE'
  readonly url: string
  readonly detail: string
  /** Nothing answered (refused, timed out), as opposed to a page that could not be used. */
  readonly unreachable: boolean
  constructor(url: string, detail: string, unreachable: boolean) {
    super(`${url}: ${detail}`)
    this.url = url
    this.detail = detail
    this.unreachable = unreachable
  }
}

function matches(sample: Sample, labels: Readonly<Record<string, string>> | undefined): boolean {
  if (!labels) return true
  return Object.entries(labels).every(([k, v]) => sample.labels[k] === v)
}

function sum(samples: readonly Sample[]): number | undefined {
  return samples.length === 0 ? undefined : samples.reduce((a, s) => a + s.value, 0)
}

/** One scrape of /metrics (redirects followed). Throws MetricsUnavailable when no page was read. */
export async function readMetrics(ctx: RunContext, timeoutMs: number): Promise<MetricsReading> {
  const url = endpointUrl(ctx, '/metrics')
  const meter = ctx.spec.proof.meter
  const evidenceNames = [...(ctx.spec.proof.evidence ?? []), ...Object.values(TRAFFIC), ...Object.values(STEP_TIME)]
  const meterSuffix = meter ? meter.name.slice(meter.name.indexOf(':') + 1) : undefined
  const lookalikes = new Set<string>()
  const wanted = new Set([...(meter ? [meter.name] : []), ...evidenceNames])
  let res
  try {
    res = await ctx.http.request({ method: 'GET', url, timeoutMs, followRedirects: true })
  } catch (error) {
    if (!(error instanceof HttpError)) throw error
    throw new MetricsUnavailable(url, error.message, error.failure === 'refused' || error.failure === 'timeout' || error.failure === 'dns')
  }
  if (res.status !== 200) throw new MetricsUnavailable(res.url, `HTTP ${res.status}: ${res.body.slice(0, 200)}`, false)
  const page = parsePrometheusText(res.body, {
    format: contentTypeFormat(res.headers['content-type']),
    keep: (name) => {
      if (wanted.has(name)) return true
      if (meterSuffix && name !== meter!.name && name.endsWith(`:${meterSuffix}`)) lookalikes.add(name)
      return false
    },
  })
  const meterSamples = meter ? page.samples(meter.name).filter((s) => matches(s, meter.labels)) : []
  const odd = meterSamples.find((s) => Number.isNaN(s.value) || s.value < 0)
  const values: Record<string, number | undefined> = {}
  for (const name of evidenceNames) values[name] = sum(page.samples(name))
  // An aborted request (the client gave up, e.g. a probe that timed out) is not traffic the knob acted on.
  values[TRAFFIC.requests] = sum(page.samples(TRAFFIC.requests).filter((s) => s.labels.finished_reason !== 'abort'))
  return {
    at: ctx.clock.now(),
    url: res.url,
    meter: sum(meterSamples),
    meterSeries: meterSamples.length,
    ...(odd ? { meterOdd: `${odd.name}${JSON.stringify(odd.labels)} = ${odd.raw} (line ${odd.line})` } : {}),
    values,
    lookalikes: [...lookalikes].sort(),
    prefixes: page.prefixes(),
    sampleCount: page.sampleCount,
    errors: page.errors.slice(0, 5),
  }
}

/**
 * Traffic between two readings: requests that finished, or tokens that were processed (a long
 * request still generating counts). A request that hangs is not traffic. Undefined when the
 * engine exports no traffic counter at all.
 */
export function trafficBetween(first: MetricsReading, later: readonly MetricsReading[]): number | undefined {
  const last = later.at(-1) ?? first
  const delta = (name: string) => {
    const a = first.values[name]
    const b = last.values[name]
    return a === undefined || b === undefined ? undefined : b - a
  }
  const requests = delta(TRAFFIC.requests)
  const prompt = delta(TRAFFIC.promptTokens)
  const generated = delta(TRAFFIC.generationTokens)
  if (requests === undefined && prompt === undefined && generated === undefined) return undefined
  return Math.max(requests ?? 0, (prompt ?? 0) + (generated ?? 0) > 0 ? 1 : 0)
}

/** Mean step times from the radiance step counters: evidence only, never a gate. */
export function stepTimes(r: MetricsReading): { decodeMeanMs?: number; mixedMeanMs?: number } {
  const v = r.values
  const steps = v[STEP_TIME.steps]
  const stepsDecode = v[STEP_TIME.stepsDecode]
  const seconds = v[STEP_TIME.seconds]
  const secondsDecode = v[STEP_TIME.secondsDecode]
  const out: { decodeMeanMs?: number; mixedMeanMs?: number } = {}
  if (stepsDecode && secondsDecode !== undefined) out.decodeMeanMs = (secondsDecode / stepsDecode) * 1000
  if (steps !== undefined && stepsDecode !== undefined && seconds !== undefined && secondsDecode !== undefined && steps - stepsDecode > 0) {
    out.mixedMeanMs = ((seconds - secondsDecode) / (steps - stepsDecode)) * 1000
  }
  return out
}
