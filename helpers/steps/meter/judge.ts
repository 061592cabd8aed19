// Step `meter`: the served engine's own series of the knob's counter proves the arm (the ladder,
// ./ladder.ts), read from the engine's /metrics (./from-metrics.ts) or through Prometheus with
// `--prometheus-url` (./from-prometheus.ts), watched by ./watch.ts; where the engine describes
// itself (vLLM's cache_config_info, SGLang's /server_info, llama.cpp's /props) every such source
// must agree first (./described.ts). A knob without a counter is proven by /stats (./stats.ts),
// by those endpoints, or by the ledger alone; a value the build does not list is not watched. A
// knob whose meter moves only under a traffic shape sends it (./traffic.ts).
import { formatDuration } from '../../config/duration.ts'
import { meterStill } from '../../config/knobs.ts'
import { sourceEvidence } from '../resolved/evidence.ts'
import { checkDescribed, endpointSources, selfDescription, untiedEndpoint } from './described.ts'
import { checkStats } from './stats.ts'
import { namesOf, renamedText } from './names.ts'
import { sendKnobTraffic, trafficSizing, trafficText, trafficTooShort, type TrafficSent } from './traffic.ts'
import { defaultValue, endpointUrl, expectedValue, type InputsOf, type Outcome, type RunContext, type StepOutputs } from '../context.ts'
import type { Judgement } from '../verdict.ts'
import { pageSource } from './from-metrics.ts'
import { promSource, sourceFor } from './from-prometheus.ts'
import type { LadderView } from './ladder.ts'
import { meterPollInterval, watchMeter, type MeterSource } from './watch.ts'
import { pageWords, promWords } from './words.ts'
import { tieToEndpoint } from '../_engine.ts'
import { mistaken } from '../mistake.ts'

export { takeBaseline } from './from-metrics.ts'
export { meterPollInterval } from './watch.ts'

function meterLabel(ctx: RunContext): string {
  const m = ctx.spec.proof.meter!
  return `${m.name}${
    m.labels
      ? `{${Object.entries(m.labels)
          .map(([k, v]) => `${k}="${v}"`)
          .join(',')}}`
      : ''
  }`
}

/** The model the probes asked: --model, else the id /v1/models gave; undefined when never learned. */
async function servedModel(ctx: RunContext, model: StepOutputs['model'] | undefined): Promise<string | undefined> {
  if (ctx.target.model) return ctx.target.model
  return model ? model.settled() : undefined
}

/** The context the probed model is served with, as /v1/models' card says (asked once, shared with the probes); undefined when unknown. */
async function servedContext(served: StepOutputs['model'] | undefined, model: string | undefined): Promise<number | undefined> {
  if (!served || model === undefined) return undefined
  return (await served.cards())?.find((c) => c.id === model)?.maxModelLen
}

export async function checkMeter(ctx: RunContext, inputs: InputsOf<'meter'>): Promise<Outcome<'meter'>> {
  const meter = ctx.spec.proof.meter
  if (!meter) {
    if (ctx.spec.proof.stats) return checkStats(ctx, inputs.buildDefault)
    if (endpointSources(ctx).length > 0) return checkDescribed(ctx, inputs)
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
  // The meter stays at zero where the value turns the knob's feature off (its `off` list; without one, its default), and moves anywhere else.
  const still = value !== undefined && meterStill(ctx.spec, target.value, inputs.buildDefault)
  const atDefault = value !== undefined && value === defaultValue(ctx, inputs.buildDefault)
  const stillWhy = ctx.spec.off ? `at ${value}, which turns its feature off` : `at its default ${value}`
  const name = meterLabel(ctx)
  const window = target.meterWindowMs
  const held = viaProm ? ', as Prometheus holds it,' : ''
  const expected = still
    ? `the served engine's ${name}${held} stays at 0 while traffic flows (knob ${ctx.spec.off ? stillWhy : 'at its default'})`
    : `the served engine's ${name}${held} rises during this run's traffic within ${formatDuration(window)}, or is above 0 ${viaProm ? 'and flat in' : 'at the first scrape of'} the process step argv read`
  const url = endpointUrl(ctx, '/metrics')
  const where = viaProm ? `Prometheus ${target.prometheusUrl}` : url
  if (value === undefined) {
    return {
      verdict: 'inconclusive',
      expected: `${name} judged against the expected value`,
      observed: 'the expected value is the build default, which --help did not print',
      where,
      next: 'pass --value',
      evidence: {},
    }
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
  // Where the engine describes itself, it must say the value first: a contradiction is red without
  // waiting out the window. Asked only through argv's tie; an info gauge read from the baseline page.
  const untiedSources = endpointSources(ctx).length > 0 ? untiedEndpoint(ctx, inputs.engineProcess) : undefined
  const described = untiedSources
    ? undefined
    : await selfDescription(ctx, value, atDefault, inputs.baseline?.source === 'metrics' ? inputs.baseline.reading : undefined)
  if (described && described.verdict === 'failed') {
    return {
      verdict: 'failed',
      expected: `${expected}; and ${endpointSources(ctx)
        .map((s) => s.source.label)
        .join(', ')} say ${ctx.spec.flag} ${value}`,
      observed: described.observed,
      where: described.rows.find((r) => r.standing === 'differs')?.reading.where ?? endpointUrl(ctx, ''),
      next: described.next!,
      evidence: {
        sources: sourceEvidence(
          described.rows.map((r) => r.reading),
          described.rows,
        ),
      },
    }
  }
  // The traffic its meter moves only under, sent once before the watch (bounded: ./traffic.ts), sized
  // by what the engine says of itself on the page the baseline read and the context /v1/models gave.
  const sent: TrafficSent | undefined = ctx.spec.proof.traffic
    ? await sendKnobTraffic(
        ctx,
        ctx.spec.proof.traffic,
        model,
        trafficSizing(
          ctx.engine,
          inputs.baseline?.source === 'metrics' ? inputs.baseline.reading : undefined,
          await servedContext(inputs.model, model),
        ),
      )
    : undefined
  const weak = sent ? trafficTooShort(sent) : undefined
  const view = (sinceMs: number, baseline: boolean, words: LadderView['words']): LadderView => ({
    meterName: meter.name,
    shown: name,
    model,
    value,
    still,
    stillWhy,
    onByDefault: !still && atDefault,
    ...(sent ? { traffic: trafficText(sent) } : {}),
    ...(sent && sent.answered < sent.sent ? { trafficShort: sent.failures.join('; ') } : {}),
    ...(weak ? { trafficWeak: weak } : {}),
    renamed: (used: string) => renamedText(ctx.engine, meter.name, used),
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
  const watch = async (v: LadderView, source: MeterSource, startMs: number): Promise<Judgement<'meter'>> => {
    const watched = await watchMeter(ctx, {
      view: v,
      source,
      expected,
      labels: meter.labels ?? {},
      engineProcess: inputs.engineProcess,
      startMs,
    })
    // The watch ended on an operator's mistake (a gateway's 401 on /metrics): first contact's, found here (../mistake.ts).
    const mistake = source.readings().halted?.mistake
    if (mistake) return mistaken(mistake, { expected, observed: watched.observed, evidence: watched.evidence })
    // A series tied by its birth, not by a start time: the pass says how, and at what resolution.
    const tie = (watched.evidence as { prometheus?: { tie?: { tied: boolean; said: string } } }).prometheus?.tie
    const j = watched.verdict === 'passed' && tie?.tied ? { ...watched, observed: `${watched.observed}; ${tie.said}` } : watched
    const extra = {
      ...(described
        ? {
            sources: sourceEvidence(
              described.rows.map((r) => r.reading),
              described.rows,
            ),
          }
        : {}),
      ...(sent ? { traffic: sent } : {}),
    }
    const evidence = { ...j.evidence, ...extra }
    if (untiedSources && j.verdict === 'passed')
      return {
        ...j,
        verdict: 'inconclusive',
        observed: `${j.observed}; but ${untiedSources}`,
        next: 'tie the endpoint to the engine first (step argv says what holds the port and what to give), then run again',
        evidence,
      }
    if (!described || j.verdict !== 'passed') return { ...j, evidence }
    // The counter proved it; the self-description agreed, or could not be read (then nothing is proven whole).
    if (described.verdict === 'inconclusive')
      return { ...j, verdict: 'inconclusive', observed: `${j.observed}; but ${described.observed}`, next: described.next!, evidence }
    return { ...j, observed: `${j.observed}; ${described.observed}`, evidence }
  }
  if (viaProm) {
    const made = sourceFor(ctx, model)
    if ('failure' in made)
      return {
        verdict: 'inconclusive',
        expected,
        observed: made.failure.what,
        where: made.failure.where,
        next: made.failure.next,
        evidence: {},
      }
    const start = ctx.clock.now()
    const since = inputs.baseline?.source === 'prometheus' ? inputs.baseline.sinceMs : start
    const source = promSource(
      ctx,
      made.source,
      since,
      Math.max(1000, meterPollInterval(window)),
      inputs.baseline?.source === 'prometheus' ? inputs.baseline.waited : undefined,
      inputs.engineProcess,
    )
    return watch(view(since, true, promWords(target.prometheusUrl!, made.source.selector, meter.name)), source, start)
  }
  const start = ctx.clock.now()
  const baseline = inputs.baseline?.source === 'metrics' ? inputs.baseline.reading : undefined
  // A page without a start time is bound only by the listening socket: an engine argv found before it listened is tied now, if it is the one listening.
  const untied = inputs.engineProcess && !inputs.engineProcess.listenerTied && baseline !== undefined && baseline.processStart === undefined
  const engine = untied ? await tieToEndpoint(ctx, inputs.engineProcess) : inputs.engineProcess
  const known = { profile: ctx.engine.name, names: namesOf(ctx.engine, meter.name) }
  return watch(
    { ...view(start, baseline !== undefined, pageWords(url, meter.name, known)), ...(engine ? { engine } : {}) },
    pageSource(ctx, model, baseline, meterPollInterval(window)),
    start,
  )
}
