// Step `meter` read through a central Prometheus (`--prometheus-url`) instead of the engine's
// /metrics: the same rules, applied to what Prometheus returns. The served model's own series
// (`model_name`), counter semantics (finite, never below zero, a drop is a reset: a restart, red),
// absent is not zero (and is only said after two scrapes of the target), a series that went stale
// during the proof is gone (red), the two honest greens (rose during this run's traffic; above
// zero and flat in the very process step argv read) and the rollback (stayed at zero while
// traffic flowed). Every query goes through the HTTP seam, so record and replay see them; each
// poll is exactly two queries (helpers/steps/meter/prometheus-source.ts).
import { formatDuration } from '../../config/duration.ts'
import { HttpError } from '../../seams/http.ts'
import type { Target } from '../../config/load.ts'
import { defaultValue, expectedValue, type InputsOf, type Outcome, type RunContext, type StepOutputs } from '../context.ts'
import type { Judgement } from '../verdict.ts'
import type { MeterProof } from './evidence.ts'
import { meterPollInterval, recheckProcess, type ProcessCheck } from './judge.ts'
import { TRAFFIC } from './metrics.ts'
import { createPromSource, PromSourceError, type PromReading, type PromSample, type SeriesReading } from './prometheus-source.ts'

/** When the baseline was taken (before the probes' traffic): the start of the window asked for. */
const since = new WeakMap<Target, number>()

/**
 * Before the probes: the watch window starts now, and waits (up to two scrape intervals' worth,
 * at most 30 s or the meter window) until Prometheus holds a scrape of the target taken after
 * this moment, so the first sample of the window precedes the probes' traffic and a rise is this
 * run's. Never throws: a Prometheus that does not answer is judged by the meter step.
 */
export async function markPromBaseline(ctx: RunContext): Promise<Pick<Partial<StepOutputs>, 'baseline'>> {
  if (since.has(ctx.target)) return {}
  const start = ctx.clock.now()
  since.set(ctx.target, start)
  const made = sourceFor(ctx, ctx.target.model ?? undefined)
  if ('failure' in made) return {}
  const deadline = start + Math.min(30_000, ctx.target.meterWindowMs)
  for (;;) {
    const now = ctx.clock.now()
    const r = await made.source.poll(start, Math.max(now, start + 1000))
    if (!r.ok || (r.reading.scrapes?.seen ?? 0) >= 1 || r.reading.scrapes === null) return {}
    if (now >= deadline) return {}
    ctx.progress(`waiting for Prometheus to scrape ${r.reading.selector} once before the probes`)
    await ctx.clock.sleep(Math.min(500, deadline - now))
  }
}

function sourceFor(ctx: RunContext, model: string | undefined): { source: ReturnType<typeof createPromSource> } | { failure: PromSourceError['failure'] } {
  const target = ctx.target
  try {
    const source = createPromSource({
      prometheusUrl: target.prometheusUrl!,
      ...(target.prometheusMatch ? { match: target.prometheusMatch } : {}),
      baseUrl: target.baseUrl ?? 'http://replay.invalid',
      meterName: ctx.spec.proof.meter!.name,
      trafficNames: TRAFFIC_NAMES,
      ...(model !== undefined ? { model } : {}),
      fetch: async (url) => {
        try {
          const res = await ctx.http.request({ method: 'GET', url, timeoutMs: 15_000, maxBodyBytes: 32 * 1024 * 1024 })
          return { status: res.status, body: res.body }
        } catch (error) {
          if (error instanceof HttpError) throw new Error(error.message)
          throw error
        }
      },
    })
    return { source }
  } catch (error) {
    if (!(error instanceof PromSourceError)) throw error
    return { failure: error.failure }
  }
}

const TRAFFIC_NAMES = [TRAFFIC.requests, TRAFFIC.promptTokens, TRAFFIC.generationTokens]

function seriesText(s: SeriesReading): string {
  const body = Object.keys(s.labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(s.labels[k])}`)
    .join(',')
  return body ? `${s.name}{${body}}` : s.name
}

/** Samples of the window only (the range query rounds its duration up to a whole second). */
const inWindow = (s: SeriesReading, from: number): PromSample[] => s.samples.filter((p) => p.t >= from)

/** Requests (or tokens) that reached the served model in the window; undefined when Prometheus holds no request counter. */
function trafficOf(r: PromReading, from: number): number | undefined {
  const traffic = r.series.filter((s) => s.role === 'traffic' && s.servedModel !== false && s.labels.finished_reason !== 'abort')
  if (traffic.length === 0) return undefined
  let requests = 0
  let tokens = 0
  for (const s of traffic) {
    const ps = inWindow(s, from)
    const rise = ps.length >= 2 ? ps.at(-1)!.value - ps[0]!.value : 0
    if (s.name === TRAFFIC.requests) requests += Math.max(0, rise)
    else tokens += Math.max(0, rise)
  }
  return Math.max(requests, tokens > 0 ? 1 : 0)
}

export async function checkMeterFromPrometheus(ctx: RunContext, inputs: InputsOf<'meter'>): Promise<Outcome<'meter'>> {
  const meter = ctx.spec.proof.meter!
  const target = ctx.target
  const value = expectedValue(ctx, inputs.buildDefault)
  const rollback = value !== undefined && value === defaultValue(ctx, inputs.buildDefault)
  const name = `${meter.name}${meter.labels ? `{${Object.entries(meter.labels).map(([k, v]) => `${k}="${v}"`).join(',')}}` : ''}`
  const window = target.meterWindowMs
  const shownUrl = target.prometheusUrl!
  const expected = rollback
    ? `the served engine's ${name}, as Prometheus holds it, stays at 0 while traffic flows (knob at its default)`
    : `the served engine's ${name}, as Prometheus holds it, rises during this run's traffic within ${formatDuration(window)}, or is above 0 and flat in the process step argv read`
  const whereBase = `Prometheus ${shownUrl}`
  if (value === undefined) {
    return { verdict: 'inconclusive', expected: `${name} judged against the expected value`, observed: 'the expected value is the build default, which --help did not print', where: whereBase, next: 'pass --value', evidence: {} }
  }
  const model = target.model ?? (inputs.model ? await inputs.model.settled() : undefined)
  const made = sourceFor(ctx, model)
  if ('failure' in made) return { verdict: 'inconclusive', expected, observed: made.failure.what, where: made.failure.where, next: made.failure.next, evidence: {} }
  const source = made.source
  const start = ctx.clock.now()
  const from = since.get(target) ?? start
  const deadline = start + window
  const interval = Math.max(1000, meterPollInterval(window))
  let polls = 0
  let failures = 0
  let lastFailure: { what: string; where: string; next: string } | undefined
  let last: PromReading | undefined
  let processCheck: ProcessCheck | undefined

  const judgedOf = (r: PromReading) => r.series.filter((s) => s.role === 'meter' && s.servedModel !== false && Object.entries(meter.labels ?? {}).every(([k, v]) => s.labels[k] === v))
  const conclude = (j: Omit<Judgement<'meter'>, 'expected' | 'where' | 'evidence'> & { where?: string }, found?: { chosen?: SeriesReading; proof?: MeterProof }): Judgement<'meter'> => {
    const judged = last ? judgedOf(last) : []
    const track = found?.chosen ?? judged[0]
    const points = track ? inWindow(track, from) : []
    const first = points[0]
    const moved = found?.proof === 'rose' && first ? points.find((p) => p.value > first.value) : undefined
    const { where, ...rest } = j
    return {
      ...rest,
      expected,
      where: where ?? `${whereBase}: ${last?.selector ?? 'no answer'}`,
      evidence: {
        meter: {
          name: meter.name,
          labels: meter.labels ?? {},
          series: track ? seriesText(track) : null,
          first: first?.value ?? null,
          last: points.at(-1)?.value ?? null,
          movedAt: moved ? new Date(moved.t).toISOString() : null,
          movedAfterMs: moved ? Math.max(0, moved.t - from) : null,
          proof: j.verdict === 'passed' ? (found?.proof ?? null) : null,
          model: model ?? null,
          selection: last ? `Prometheus series of ${last.selector}${model !== undefined ? `, model_name="${model}" where labelled` : ''}` : null,
          judged: judged.map((s) => ({ series: seriesText(s), first: inWindow(s, from)[0]?.value ?? null, last: inWindow(s, from).at(-1)?.value ?? null })),
          notJudged: last ? last.series.filter((s) => s.role === 'meter' && s.servedModel === false).map(seriesText) : [],
        },
        process: processCheck ? { state: processCheck.state, argvPid: processCheck.argvPid, pidsNow: processCheck.pids, detail: processCheck.detail } : null,
        series: points.map((p) => ({ t: p.t - from, v: p.value })),
        scrapes: last?.scrapes?.seen ?? 0,
        scrapeFailures: failures,
        prefixes: last?.prefixes ?? [],
        prometheus: { url: shownUrl, selector: last?.selector ?? null, polls, queries: source.queries(), instances: last?.instances ?? [] },
      },
    }
  }

  for (;;) {
    const now = ctx.clock.now()
    polls++
    const result = await source.poll(from, Math.max(now, from + 1000))
    if (!result.ok) {
      failures++
      lastFailure = result.failure
      if (result.failure.kind !== 'unreachable') {
        // Prometheus answered, but not with what was asked: the operator's URL or selector, not the engine.
        return conclude({ verdict: 'inconclusive', observed: result.failure.what, next: result.failure.next, where: result.failure.where })
      }
    } else {
      const r = (last = result.reading)
      if (r.instances.length > 1) {
        return conclude({ verdict: 'inconclusive', observed: `the selector ${r.selector} takes the series of ${r.instances.length} targets (${r.instances.join(', ')}); another engine's counter proves nothing about this one`, next: 'narrow --prometheus-match to this endpoint, e.g. {instance="<host:port>"} as Prometheus labels it' })
      }
      const judged = judgedOf(r)
      const otherModel = r.series.filter((s) => s.role === 'meter' && s.servedModel === false)
      const lookalikes = [...new Set(r.series.filter((s) => s.role === 'meter-other-prefix').map((s) => s.name))]
      const odd = judged.flatMap((s) => inWindow(s, from).filter((p) => !Number.isFinite(p.value) || p.value < 0).map((p) => ({ s, p })))[0]
      if (odd) {
        return conclude({ verdict: 'failed', observed: `Prometheus holds ${seriesText(odd.s)} = ${odd.p.raw} at ${new Date(odd.p.t).toISOString()}`, next: `a counter is finite and never below zero: the exporter is broken; report it with the engine's /metrics page` }, { chosen: odd.s })
      }
      const reset = judged.find((s) => counterResets(inWindow(s, from)) > 0)
      if (reset) {
        processCheck = await recheckProcess(ctx, inputs.engineProcess)
        const ps = inWindow(reset, from)
        return conclude({ verdict: 'failed', observed: `counter reset: Prometheus holds ${seriesText(reset)} going down during the proof (${ps.map((p) => p.raw).join(' → ').slice(0, 200)}): a counter only goes down when its process restarts${processCheck.state === 'changed' ? ` (${processCheck.detail})` : ''}`, next: 'a restarted engine is not the process step argv read: find why it restarted (journalctl, podman ps -a, OOM), then run the proof again on a settled engine' }, { chosen: reset })
      }
      if (judged.length === 0 && r.meter !== 'pending') {
        if (otherModel.length > 0 && model !== undefined) {
          return conclude({ verdict: 'failed', observed: `Prometheus holds ${meter.name} for this target only for ${otherModel.map((s) => `model_name="${s.labels.model_name}"`).join(', ')}, not for the served model "${model}"`, next: `another model's counter is not this engine's: check that --base-url and --prometheus-match reach the engine serving ${model}` })
        }
        const like = lookalikes.length ? `; a series of the same name exists under another prefix: ${lookalikes.join(', ')}` : ''
        return conclude({
          verdict: 'failed',
          observed: `${meter.name} is absent from Prometheus for ${r.selector} after ${r.scrapes?.up ?? 0} successful scrape(s) of the target (prefixes seen: ${r.prefixes.filter(Boolean).join(', ') || 'none'})${like}`,
          next: `absent is not zero, so the arm is unproven: this build does not export ${meter.name}${like ? ' (check the metric prefix: cadence lives under radiance:, latency under vllm:)' : ''}, or Prometheus drops it (metric_relabel_configs); query ${meter.name} in Prometheus by hand`,
        })
      }
      if (r.meter === 'stale' && judged.some((s) => inWindow(s, from).length > 0)) {
        const gone = judged.find((s) => s.current === null)!
        processCheck = await recheckProcess(ctx, inputs.engineProcess)
        return conclude({ verdict: 'failed', observed: `${seriesText(gone)} went stale in Prometheus during the proof (last sample ${inWindow(gone, from).at(-1)?.raw ?? '?'}): the engine stopped exporting it, restarted or stopped being scraped${processCheck.state === 'changed' ? ` (${processCheck.detail})` : ''}`, next: 'absent is not zero: check the target in Prometheus (Status → Targets) and the engine, then run the proof again' }, { chosen: gone })
      }
      const rose = judged.find((s) => {
        const ps = inWindow(s, from)
        return ps.length >= 2 && ps.at(-1)!.value > ps[0]!.value
      })
      const nonzero = judged.find((s) => inWindow(s, from).some((p) => p.value > 0))
      if (rollback && (rose || nonzero)) {
        const t = (rose ?? nonzero)!
        const ps = inWindow(t, from)
        return conclude({ verdict: 'failed', observed: `${seriesText(t)} read ${ps[0]!.value} → ${ps.at(-1)!.value} in Prometheus, not 0, although ${ctx.spec.env} is at its default ${value}`, next: `the knob still acts: the rollback did not take (check argv and the ledger), or the engine was not restarted; redeploy --service ${target.svc}` }, { chosen: t })
      }
      if (!rollback && rose) {
        processCheck = await recheckProcess(ctx, inputs.engineProcess)
        const ps = inWindow(rose, from)
        const fromTo = `${ps[0]!.value} → ${ps.at(-1)!.value}`
        if (processCheck.state === 'changed') {
          return conclude({ verdict: 'failed', observed: `${seriesText(rose)} rose (${fromTo}), but the engine restarted during the proof: ${processCheck.detail}`, next: 'the counter that rose is not proven to be the process step argv read: find why the engine restarted, then run the proof again on a settled engine', ...(processCheck.where ? { where: processCheck.where } : {}) }, { chosen: rose })
        }
        const moved = ps.find((p) => p.value > ps[0]!.value)!
        return conclude({ verdict: 'passed', observed: `${seriesText(rose)} ${fromTo} in Prometheus: rose during this run's traffic, moved after ${formatDuration(Math.max(0, moved.t - from))}; ${processCheck.state === 'same' ? processCheck.detail : `the process was not re-checked: ${processCheck.detail}`}` }, { chosen: rose, proof: 'rose' })
      }
      const above = judged.find((s) => {
        const ps = inWindow(s, from)
        return ps.length >= 2 && ps[0]!.value > 0
      })
      if (!rollback && above && (r.scrapes?.up ?? 0) >= 2) {
        processCheck = await recheckProcess(ctx, inputs.engineProcess)
        const v = inWindow(above, from)[0]!.value
        if (processCheck.state === 'same' && processCheck.argvHeld) {
          return conclude({ verdict: 'passed', observed: `${seriesText(above)} was already ${v} at Prometheus' first scrape in this run and stayed there without a reset, in pid ${processCheck.argvPid}, the process whose argv carries ${ctx.spec.flag} ${value}: it moved before this run` }, { chosen: above, proof: 'before-run' })
        }
        const why = processCheck.state === 'same' ? `step argv did not hold for pid ${processCheck.argvPid}` : processCheck.detail
        return conclude({ verdict: processCheck.state === 'changed' ? 'failed' : 'inconclusive', observed: `${seriesText(above)} was already ${v} at Prometheus' first scrape in this run and did not rise, and it cannot be tied to a process that carries ${ctx.spec.flag} ${value}: ${why}`, next: 'a counter that moved before this run proves the arm only for the process argv read: fix what step argv reports, or run again while traffic flows so the counter rises during the run' }, { chosen: above })
      }
      ctx.progress(`watching ${name} in Prometheus · ${r.scrapes?.up ?? 0} scrapes · ${formatDuration(ctx.clock.now() - start)} of ${formatDuration(window)}`)
    }
    const after = ctx.clock.now()
    if (after >= deadline) break
    await ctx.clock.sleep(Math.min(interval, deadline - after))
  }

  if (!last) {
    return conclude({ verdict: 'inconclusive', observed: `Prometheus could not be read in ${formatDuration(window)} (${failures} tries): ${lastFailure?.what ?? 'no answer'}`, next: lastFailure?.next ?? `check ${shownUrl} is reachable from here, then run again`, ...(lastFailure ? { where: lastFailure.where } : {}) })
  }
  const judged = judgedOf(last)
  if (judged.length === 0) {
    return conclude({ verdict: 'inconclusive', observed: `Prometheus scraped ${last.selector} ${last.scrapes?.up ?? 0} time(s) in ${formatDuration(window)}: too few to call ${meter.name} absent (absent is said only after two scrapes)${last.scrapes === null ? '; no up series matches the selector, so Prometheus does not scrape this target under these labels' : ''}`, next: 'check the target in Prometheus (Status → Targets) and --prometheus-match, or give a --meter-window of at least two scrape intervals' })
  }
  const traffic = trafficOf(last, from)
  const flat = `${name} stayed at 0 in Prometheus for ${formatDuration(window)} while ${traffic ?? 0} request(s) reached the engine`
  if (traffic === undefined || traffic === 0 || (last.scrapes?.up ?? 0) < 2) {
    return conclude({ verdict: 'inconclusive', observed: `${name} stayed at 0 in Prometheus, but ${traffic === undefined ? 'Prometheus holds no request counter for this target' : (last.scrapes?.up ?? 0) < 2 ? 'fewer than two scrapes fell inside the window' : 'no traffic reached the engine'} in ${formatDuration(window)}`, next: 'a flat meter proves nothing without traffic seen by two scrapes: run again with a --meter-window of several scrape intervals while the endpoint serves requests' })
  }
  if (rollback) {
    processCheck = await recheckProcess(ctx, inputs.engineProcess)
    if (processCheck.state === 'changed') {
      return conclude({ verdict: 'failed', observed: `${flat}, but the engine restarted during the proof: ${processCheck.detail}`, next: 'a flat counter of a restarted engine proves nothing about the process step argv read: find why it restarted, then run the proof again' })
    }
    return conclude({ verdict: 'passed', observed: `${flat}${processCheck.state === 'same' ? `; ${processCheck.detail}` : ''}` }, { proof: 'stayed-at-zero' })
  }
  return conclude({
    verdict: 'failed',
    observed: flat,
    next: `the arm did nothing: the engine ignores ${ctx.spec.flag} or the flag did not reach it (see argv and ledger). Say so in the vault page; roll back with ${ctx.spec.env}=${target.previous ?? defaultValue(ctx, inputs.buildDefault)} and redeploy --service ${target.svc}`,
  })
}

function counterResets(ps: readonly PromSample[]): number {
  let n = 0
  for (let k = 1; k < ps.length; k++) if (ps[k]!.value < ps[k - 1]!.value) n++
  return n
}
