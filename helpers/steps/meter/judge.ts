// Step `meter`: the served engine's own series of the knob's counter proves the arm (the ladder,
// ./ladder.ts), read from the engine's /metrics (./from-metrics.ts) or through Prometheus with
// `--prometheus-url` (./from-prometheus.ts), watched by ./watch.ts. A knob without a counter is
// proven by /stats or by the ledger alone; a value the build does not list is not watched.
import { formatDuration } from '../../config/duration.ts'
import { HttpError } from '../../seams/http.ts'
import { defaultValue, endpointUrl, expectedValue, type InputsOf, type Outcome, type RunContext, type StepOutputs } from '../context.ts'
import type { Judgement } from '../verdict.ts'
import { pageSource } from './from-metrics.ts'
import { promSource, sourceFor } from './from-prometheus.ts'
import type { LadderView } from './ladder.ts'
import { meterPollInterval, watchMeter, type MeterSource } from './watch.ts'
import { pageWords, promWords } from './words.ts'

export { takeBaseline } from './from-metrics.ts'
export { meterPollInterval } from './watch.ts'

function meterLabel(ctx: RunContext): string {
  const m = ctx.spec.proof.meter!
  return `${m.name}${m.labels ? `{${Object.entries(m.labels).map(([k, v]) => `${k}="${v}"`).join(',')}}` : ''}`
}

async function checkStats(ctx: RunContext, buildDefault: string | null | undefined): Promise<Judgement<'meter'>> {
  const path = ctx.spec.proof.stats!
  const url = endpointUrl(ctx, '/stats')
  const value = expectedValue(ctx, buildDefault)
  const expected = `/stats ${path} = ${value}`
  try {
    const res = await ctx.http.request({ method: 'GET', url, timeoutMs: 15_000 })
    let found: unknown
    try {
      found = path.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), JSON.parse(res.body))
    } catch {
      found = undefined
    }
    const evidence = { status: res.status, field: path, value: found ?? null }
    if (res.status !== 200 || found === undefined || found === null) {
      return {
        verdict: 'failed',
        expected,
        observed: res.status !== 200 ? `HTTP ${res.status}` : `no field ${path} in /stats`,
        where: `GET ${url}`,
        next: `this build's /stats does not report ${path}: the knob has no metric, so prove it from the ledger line and a build that reports ${path}`,
        evidence,
      }
    }
    if (String(found) !== value) {
      return { verdict: 'failed', expected, observed: `${path} = ${JSON.stringify(found)}`, where: `GET ${url}`, next: `the engine runs with ${ctx.spec.flag} ${String(found)}: check ${ctx.spec.env} and redeploy --service ${ctx.target.svc}`, evidence }
    }
    return { verdict: 'passed', expected, observed: `${path} = ${JSON.stringify(found)}`, where: `GET ${url}`, evidence }
  } catch (error) {
    if (!(error instanceof HttpError)) throw error
    return { verdict: 'inconclusive', expected, observed: error.message, where: `GET ${url}`, next: 'the endpoint did not answer /stats: check it is up, then run again', evidence: {} }
  }
}


/** The model the probes asked: --model, else the id /v1/models gave; undefined when never learned. */
async function servedModel(ctx: RunContext, model: StepOutputs['model'] | undefined): Promise<string | undefined> {
  if (ctx.target.model) return ctx.target.model
  return model ? model.settled() : undefined
}

export async function checkMeter(ctx: RunContext, inputs: InputsOf<'meter'>): Promise<Outcome<'meter'>> {
  const meter = ctx.spec.proof.meter
  if (!meter) {
    if (ctx.spec.proof.stats) return checkStats(ctx, inputs.buildDefault)
    return {
      verdict: 'skipped',
      intendedSkip: true,
      expected: `${ctx.spec.env} has no meter`,
      observed: `no counter exists for ${ctx.spec.flag}; its proof is the ledger's resolved line (step ledger)`,
      where: endpointUrl(ctx, '/metrics'),
      evidence: {},
    }
  }
  const value = expectedValue(ctx, inputs.buildDefault)
  // A value the build does not list (step help) cannot have reached the engine: watching its
  // meter would only wait out the window. Skipped with why, and a skip like this is never green.
  const choices = inputs.buildChoices
  if (ctx.spec.type.kind === 'enum' && value !== undefined && choices && choices.length > 0 && !choices.includes(value)) {
    return {
      verdict: 'skipped',
      expected: `${meter.name} watched for ${value}`,
      observed: `not watched: ${value} is not a choice of this build (${choices.join(', ')}; see step help), so no meter can prove it`,
      where: endpointUrl(ctx, '/metrics'),
      next: `pick one of ${choices.join(', ')} for ${ctx.spec.env}, redeploy, and run again`,
      evidence: { value, choices },
    }
  }
  const target = ctx.target
  const viaProm = target.prometheusUrl !== null && target.prometheusUrl !== undefined
  const rollback = value !== undefined && value === defaultValue(ctx, inputs.buildDefault)
  const name = meterLabel(ctx)
  const window = target.meterWindowMs
  const held = viaProm ? ', as Prometheus holds it,' : ''
  const expected = rollback
    ? `the served engine's ${name}${held} stays at 0 while traffic flows (knob at its default)`
    : `the served engine's ${name}${held} rises during this run's traffic within ${formatDuration(window)}, or is above 0 ${viaProm ? 'and flat in' : 'at the first scrape of'} the process step argv read`
  const url = endpointUrl(ctx, '/metrics')
  const where = viaProm ? `Prometheus ${target.prometheusUrl}` : url
  if (value === undefined) {
    return { verdict: 'inconclusive', expected: `${name} judged against the expected value`, observed: 'the expected value is the build default, which --help did not print', where, next: 'pass --value', evidence: {} }
  }
  // /health never answered 200: the probes sent nothing, and a watch would only wait out its window.
  if (inputs.healthy === false) {
    return {
      verdict: 'inconclusive',
      expected,
      observed: `not watched: /health never answered 200 (see step health), so no traffic reached the engine and ${name} could not move in this run`,
      where,
      next: 'get /health to answer 200 first (step health says what it saw), then run again',
      evidence: {},
    }
  }
  const model = await servedModel(ctx, inputs.model)
  const view = (sinceMs: number, baseline: boolean, words: LadderView['words']): LadderView => ({
    meterName: meter.name,
    shown: name,
    model,
    value,
    rollback,
    flag: ctx.spec.flag,
    env: ctx.spec.env,
    svc: target.svc,
    rollbackTo: target.previous ?? defaultValue(ctx, inputs.buildDefault),
    windowMs: window,
    sinceMs,
    baseline,
    where: viaProm ? where : `GET ${url}`,
    words,
    ...(inputs.engineProcess ? { engine: inputs.engineProcess } : {}),
    listenerBinds: !viaProm,
  })
  const watch = (v: LadderView, source: MeterSource, startMs: number) => watchMeter(ctx, { view: v, source, expected, labels: meter.labels ?? {}, engineProcess: inputs.engineProcess, startMs })
  if (viaProm) {
    const made = sourceFor(ctx, model)
    if ('failure' in made) return { verdict: 'inconclusive', expected, observed: made.failure.what, where: made.failure.where, next: made.failure.next, evidence: {} }
    const start = ctx.clock.now()
    const since = inputs.baseline?.source === 'prometheus' ? inputs.baseline.sinceMs : start
    const source = promSource(ctx, made.source, since, Math.max(1000, meterPollInterval(window)), inputs.baseline?.source === 'prometheus' ? inputs.baseline.waited : undefined)
    return watch(view(since, true, promWords(target.prometheusUrl!, made.source.selector, meter.name)), source, start)
  }
  const start = ctx.clock.now()
  const baseline = inputs.baseline?.source === 'metrics' ? inputs.baseline.reading : undefined
  return watch(view(start, baseline !== undefined, pageWords(url, meter.name)), pageSource(ctx, model, baseline, meterPollInterval(window)), start)
}
