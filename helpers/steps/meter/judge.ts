// Step `meter`: the served engine's own series of the knob's counter proves the arm in one of
// two ways, said apart: it rose during this run's traffic, or it was already above zero at the
// first scrape of the very process that step `argv` read (it moved before this run). Where the
// expected value is the default (a rollback), it stayed at zero while traffic flowed. Counter
// semantics are Prometheus': finite and never below zero, declared a counter, one series once
// per page, and a value below an earlier one is a reset (a restart): red. A page the Prometheus
// server would refuse whole is red. Absent is not zero; no traffic in the window is
// inconclusive, not red.
import { pollWait } from '../../seams/poll.ts'
import { formatDuration } from '../../config/duration.ts'
import { HttpError } from '../../seams/http.ts'
import { defaultValue, endpointUrl, expectedValue, type InputsOf, type Outcome, type RunContext, type StepOutputs } from '../context.ts'
import type { Judgement } from '../verdict.ts'
import type { MeterProof } from './evidence.ts'
import { recheckProcess, type ProcessCheck } from '../_engine.ts'
import { MetricsUnavailable, PROCESS_START, readMetrics, seriesKey, seriesName, stepTimes, trafficBetween, valueOf, type MetricsReading, type SeriesValue } from './metrics.ts'

// The re-check after the watch is the engine lookup of step argv, run again (helpers/engine/recheck.ts).
export { recheckProcess, type ProcessCheck }

export function meterPollInterval(windowMs: number): number {
  return Math.min(10_000, Math.max(250, Math.floor(windowMs / 30)))
}

/** Before the probes send traffic: the meter's starting point. Never throws. */
export async function takeBaseline(ctx: RunContext): Promise<Pick<Partial<StepOutputs>, 'baseline'>> {
  if (!ctx.spec.proof.meter) return {}
  try {
    return { baseline: await readMetrics(ctx, Math.min(15_000, ctx.target.meterWindowMs)) }
  } catch (error) {
    if (!(error instanceof MetricsUnavailable)) throw error
    return {}
  }
}

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

/** One series of the meter followed across the scrapes of this run. */
interface Track {
  key: string
  labels: Readonly<Record<string, string>>
  name: string
  /** Index of the reading it first appeared in. */
  from: number
  points: Array<{ i: number; at: number; value: number }>
}

type Assessment =
  | { kind: 'bad'; verdict: 'failed' | 'inconclusive'; observed: string; next: string; reading: MetricsReading; restart?: boolean }
  | { kind: 'ok'; tracks: Track[]; selection: string; notJudged: string[] }

const isCounterType = (type: string | undefined, name: string): boolean => type === 'counter' || ((type === 'untyped' || type === 'unknown') && name.endsWith('_total'))

/**
 * Which of the meter's series are the served engine's: by `model_name` when the page gives it
 * (never another model's), every series when it gives none. Each judged series stands alone.
 */
function select(samples: readonly SeriesValue[], model: string | undefined, meterName: string): { judged: SeriesValue[]; notJudged: SeriesValue[]; how: string } | { problem: 'failed' | 'inconclusive'; observed: string; next: string } {
  const named = samples.filter((s) => s.labels.model_name !== undefined)
  const list = (xs: readonly SeriesValue[]) => xs.map((s) => seriesName(meterName, s.labels)).join(', ')
  if (named.length === 0) return { judged: [...samples], notJudged: [], how: `the page names no model_name on ${meterName}: judged ${samples.length === 1 ? 'its one series' : `each of its ${samples.length} series`} (${list(samples)})` }
  const models = [...new Set(named.map((s) => s.labels.model_name!))].sort()
  if (model === undefined) {
    if (models.length === 1) return { judged: named, notJudged: samples.filter((s) => s.labels.model_name === undefined), how: `the probed model is unknown; judged the page's only model_name "${models[0]}"` }
    return { problem: 'inconclusive', observed: `${meterName} has series for ${models.length} models (${models.join(', ')}) and the probed model is unknown`, next: 'pass --model with the id this endpoint serves, so the served model\'s own series is judged' }
  }
  const judged = named.filter((s) => s.labels.model_name === model)
  if (judged.length === 0) {
    return {
      problem: 'failed',
      observed: `${meterName} has no series for the served model "${model}"; the page has it only for ${models.map((m) => `model_name="${m}"`).join(', ')}`,
      next: `another model's counter is not this engine's: check that --base-url reaches the engine serving ${model} (and --model), and that this build labels its meter with model_name`,
    }
  }
  return { judged, notJudged: samples.filter((s) => s.labels.model_name !== model), how: `judged the served model's ${judged.length === 1 ? 'series' : `${judged.length} series`} (model_name="${model}")` }
}

/**
 * Takes the scrapes one at a time, in order (each is read once, so a long watch of a page with
 * many series stays linear); the first thing Prometheus' rules refuse decides.
 */
function assessor(model: string | undefined, ctx: RunContext): (r: MetricsReading, i: number) => Assessment {
  const meter = ctx.spec.proof.meter!
  const url = endpointUrl(ctx, '/metrics')
  const tracks = new Map<string, Track>()
  let selection = ''
  let notJudged: string[] = []
  let start: { value: number; i: number } | undefined
  return (r, i) => {
    const bad = (verdict: 'failed' | 'inconclusive', observed: string, next: string, restart = false): Assessment => ({ kind: 'bad', verdict, observed, next, reading: r, restart })
    if (r.errorCount > 0) {
      const e = r.errors[0]!
      return bad(
        'failed',
        `the Prometheus server would refuse this /metrics page whole: line ${e.line} does not parse (${e.message}): ${JSON.stringify(e.text)}${r.errorCount > 1 ? ` (and ${r.errorCount - 1} more malformed line(s))` : ''}`,
        `a scrape with one unparsable line is dropped entirely (up = 0), so monitoring never sees ${meter.name}: fix the exporter; curl -s ${url} | sed -n '${e.line}p'`,
      )
    }
    if (r.meter.length === 0) {
      const like = r.lookalikes.length ? `; a series of the same name exists under another prefix: ${r.lookalikes.join(', ')}` : ''
      return bad(
        'failed',
        `${meter.name} is absent from ${r.sampleCount} samples (prefixes seen: ${r.prefixes.join(', ') || 'none'})${like}`,
        `this build does not export ${meter.name}: absent is not zero, so the arm is unproven. Check the image version${like ? ' and the metric prefix (cadence lives under radiance:, latency under vllm:)' : ''}; curl -s ${url} | grep ${meter.name.split(':').pop()}`,
      )
    }
    if (!isCounterType(r.meterType, meter.name)) {
      return bad('failed', `${meter.name} is declared "# TYPE … ${r.meterType ?? 'untyped'}", not a counter`, `only a counter's rise proves the knob acted: this exporter does not export ${meter.name} as a counter; report it with the page (curl -s ${url} | grep -B2 ${meter.name})`)
    }
    if (r.duplicates.length > 0) {
      return bad('failed', `malformed page: the same series appears twice: ${r.duplicates.slice(0, 3).join('; ')}`, `Prometheus keeps one of the two and counts an error, so which value monitoring sees is not defined: fix the exporter (two registries or two engines writing one label set); curl -s ${url} | grep ${meter.name}`)
    }
    const chosen = select(r.meter, model, meter.name)
    if ('problem' in chosen) return bad(chosen.problem, chosen.observed, chosen.next)
    selection = chosen.how
    notJudged = chosen.notJudged.map((s) => seriesName(meter.name, s.labels))
    const odd = chosen.judged.find((s) => !Number.isFinite(s.value) || s.value < 0)
    if (odd) {
      return bad('failed', `the meter reads ${seriesName(meter.name, odd.labels)} = ${odd.raw} (line ${odd.line})`, `a counter is finite and never below zero: the exporter is broken; report it with the /metrics page (curl -s ${url} | grep ${meter.name})`)
    }
    const processStart = r.series[PROCESS_START]?.length === 1 ? r.processStart : undefined
    if (processStart !== undefined) {
      if (start && processStart !== start.value) {
        return bad('failed', `the engine restarted during the proof: ${PROCESS_START} went from ${start.value} to ${processStart} between scrape ${start.i + 1} and scrape ${i + 1}`, 'a restarted engine is not the process step argv read: find why it restarted (journalctl, podman ps -a, OOM), then run the proof again on a settled engine', true)
      }
      start ??= { value: processStart, i }
    }
    const present = new Set<string>()
    for (const s of chosen.judged) {
      const key = seriesKey(s.labels)
      present.add(key)
      let t = tracks.get(key)
      if (!t) tracks.set(key, (t = { key, labels: s.labels, name: seriesName(meter.name, s.labels), from: i, points: [] }))
      const before = t.points.at(-1)
      if (before && s.value < before.value) {
        return bad('failed', `counter reset: ${t.name} read ${before.value} at scrape ${before.i + 1}, then ${s.value} at scrape ${i + 1}: a counter only goes down when its process restarts, so the engine restarted during the proof`, 'a restarted engine is not the process step argv read: find why it restarted (journalctl, podman ps -a, OOM), then run the proof again on a settled engine', true)
      }
      t.points.push({ i, at: r.at, value: s.value })
    }
    for (const t of tracks.values()) {
      if (!present.has(t.key)) {
        return bad('failed', `${t.name} vanished from the page at scrape ${i + 1} after ${t.points.length} reading(s): the engine restarted or relabelled its series during the proof`, `absent is not zero: find why the series went away (restart? curl -s ${url} | grep ${meter.name}), then run the proof again`, true)
      }
    }
    return { kind: 'ok', tracks: [...tracks.values()], selection, notJudged }
  }
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
  const rollback = value !== undefined && value === defaultValue(ctx, inputs.buildDefault)
  const name = meterLabel(ctx)
  const window = ctx.target.meterWindowMs
  const expected = rollback
    ? `the served engine's ${name} stays at 0 while traffic flows (knob at its default)`
    : `the served engine's ${name} rises during this run's traffic within ${formatDuration(window)}, or is above 0 at the first scrape of the process step argv read`
  const url = endpointUrl(ctx, '/metrics')
  if (value === undefined) {
    return { verdict: 'inconclusive', expected: `${name} judged against the expected value`, observed: 'the expected value is the build default, which --help did not print', where: url, next: 'pass --value', evidence: {} }
  }
  const model = await servedModel(ctx, inputs.model)
  const start = ctx.clock.now()
  const deadline = start + window
  const interval = meterPollInterval(window)
  const readings: MetricsReading[] = []
  let failures = 0
  let lastFailure = ''
  let processCheck: ProcessCheck | undefined
  if (inputs.baseline) readings.push(inputs.baseline)
  const next = assessor(model, ctx)
  let fed = 0
  let assessed: Assessment | undefined

  const conclude = (j: Omit<Judgement<'meter'>, 'expected' | 'where' | 'evidence'> & { where?: string }, found?: { tracks: Track[]; selection: string; notJudged: string[]; chosen?: Track; proof?: MeterProof }): Judgement<'meter'> => {
    const track = found?.chosen ?? found?.tracks[0]
    const first = track?.points[0]
    const last = track?.points.at(-1)
    const moved = found?.proof === 'rose' ? track?.points.find((p) => p.value > first!.value) : undefined
    const lastReading = readings.at(-1)
    const evidenceValues = Object.fromEntries(
      (ctx.spec.proof.evidence ?? []).map((n) => [n, { first: readings[0] ? (valueOf(readings[0], n, model) ?? null) : null, last: lastReading ? (valueOf(lastReading, n, model) ?? null) : null }]),
    )
    const { where, ...rest } = j
    return {
      ...rest,
      expected,
      where: where ?? `GET ${lastReading?.url ?? url}`,
      evidence: {
        meter: {
          name: meter.name,
          labels: meter.labels ?? {},
          series: track?.name ?? null,
          first: first?.value ?? null,
          last: last?.value ?? null,
          movedAt: moved ? new Date(moved.at).toISOString() : null,
          movedAfterMs: moved ? Math.max(0, moved.at - start) : null,
          proof: j.verdict === 'passed' ? (found?.proof ?? null) : null,
          model: model ?? null,
          selection: found?.selection ?? null,
          judged: (found?.tracks ?? []).map((t) => ({ series: t.name, first: t.points[0]!.value, last: t.points.at(-1)!.value, fromScrape: t.from + 1 })),
          notJudged: found?.notJudged ?? [],
        },
        process: processCheck ? { state: processCheck.state, argvPid: processCheck.argvPid, pidsNow: processCheck.pids, detail: processCheck.detail } : null,
        series: track ? readings.map((r, i) => ({ t: r.at - start, v: track.points.find((p) => p.i === i)?.value ?? null })) : [],
        scrapes: readings.length,
        scrapeFailures: failures,
        prefixes: lastReading?.prefixes ?? [],
        evidenceMeters: evidenceValues,
        stepTimes: lastReading ? stepTimes(lastReading, model) : {},
        parseErrors: lastReading?.errors ?? [],
      },
    }
  }
  const restartText = (p: ProcessCheck): string => (p.state === 'changed' ? ` (${p.detail})` : p.state === 'same' ? ` (${p.detail}: the engine core restarted inside it, or the exporter reset its counters)` : p.state === 'unknown' ? ` (${p.detail})` : '')

  for (;;) {
    const remaining = deadline - ctx.clock.now()
    try {
      readings.push(await readMetrics(ctx, Math.max(1000, Math.min(30_000, remaining))))
    } catch (error) {
      if (!(error instanceof MetricsUnavailable)) throw error
      failures++
      lastFailure = error.detail
      if (!error.unreachable) {
        return conclude({ verdict: 'failed', observed: `/metrics did not serve a page: ${error.detail}`, next: `check ${url} by hand (curl -sSL ${url} | head); the exporter is broken` })
      }
    }
    let a: Assessment | undefined = assessed
    while (fed < readings.length && a?.kind !== 'bad') a = next(readings[fed]!, fed++)
    assessed = a
    if (!a) {
      // Nothing read yet: only an unreachable /metrics gets here; keep trying until the deadline.
      const now = ctx.clock.now()
      if (now >= deadline) break
      await pollWait(ctx.clock, deadline, interval, now)
      continue
    }
    if (a.kind === 'bad') {
      if (a.restart) processCheck = await recheckProcess(ctx, inputs.engineProcess)
      return conclude({ verdict: a.verdict, observed: `${a.observed}${processCheck ? restartText(processCheck) : ''}`, next: a.next, where: `GET ${a.reading.url}` })
    }
    const found = { tracks: a.tracks, selection: a.selection, notJudged: a.notJudged }
    const rose = a.tracks.find((t) => t.points.some((p) => p.value > t.points[0]!.value))
    const above = a.tracks.find((t) => t.from === 0 && t.points[0]!.value > 0)
    const nonzero = a.tracks.find((t) => t.points.some((p) => p.value > 0))
    // Said whenever more than one series was judged, or the page did not name the served model.
    const others = a.tracks.length > 1 || !a.selection.startsWith('judged the served') ? `; ${a.selection}` : ''
    if (rollback && (rose || nonzero)) {
      const t = (rose ?? nonzero)!
      return conclude(
        {
          verdict: 'failed',
          observed: `${t.name} read ${t.points[0]!.value} → ${t.points.at(-1)!.value}, not 0, although ${ctx.spec.env} is at its default ${value}`,
          next: `the knob still acts: the rollback did not take (check argv and the ledger), or the engine was not restarted; redeploy --service ${ctx.target.svc}`,
        },
        { ...found, chosen: t },
      )
    }
    if (!rollback && rose) {
      processCheck = await recheckProcess(ctx, inputs.engineProcess)
      const moved = rose.points.find((p) => p.value > rose.points[0]!.value)!
      const fromTo = `${rose.points[0]!.value} → ${rose.points.at(-1)!.value}`
      if (processCheck.state === 'changed') {
        return conclude({ verdict: 'failed', observed: `${rose.name} rose (${fromTo}), but the engine restarted during the proof: ${processCheck.detail}`, next: 'the counter that rose is not proven to be the process step argv read: find why the engine restarted, then run the proof again on a settled engine', where: processCheck.where }, { ...found, chosen: rose })
      }
      const proc = processCheck.state === 'same' ? `; ${processCheck.detail}` : `; the process was not re-checked: ${processCheck.detail}`
      return conclude({ verdict: 'passed', observed: `${rose.name} ${fromTo}: rose during this run's traffic, moved after ${formatDuration(moved.at - start)}${proc}${others}` }, { ...found, chosen: rose, proof: 'rose' })
    }
    if (!rollback && above && readings.length >= 2) {
      // Above zero before this run and flat since: proof only from the very process argv read.
      processCheck = await recheckProcess(ctx, inputs.engineProcess)
      const v = above.points[0]!.value
      if (processCheck.state === 'changed') {
        return conclude({ verdict: 'failed', observed: `${above.name} read ${v}, but the engine restarted during the proof: ${processCheck.detail}`, next: 'a counter of another process proves nothing about the one step argv read: find why the engine restarted, then run the proof again on a settled engine', where: processCheck.where }, { ...found, chosen: above })
      }
      if (processCheck.state === 'same' && processCheck.argvHeld) {
        return conclude(
          {
            verdict: 'passed',
            observed: `${above.name} was already ${v} at the first scrape of pid ${processCheck.argvPid}, the process whose argv carries ${ctx.spec.flag} ${value}: ${inputs.baseline ? 'it moved before this run' : "it moved before that scrape (taken after the probes' traffic, as no earlier one could be read)"} (it read ${above.points.at(-1)!.value} at the last scrape)${others}`,
          },
          { ...found, chosen: above, proof: 'before-run' },
        )
      }
      const why = processCheck.state === 'same' ? `step argv did not hold for pid ${processCheck.argvPid}` : processCheck.detail
      return conclude(
        {
          verdict: 'inconclusive',
          observed: `${above.name} was already ${v} at the first scrape and did not rise during this run, and it cannot be tied to a process that carries ${ctx.spec.flag} ${value}: ${why}`,
          next: 'a counter that moved before this run proves the arm only for the process argv read: fix what step argv reports, or run again while traffic flows so the counter rises during the run',
          ...(processCheck.where ? { where: processCheck.where } : {}),
        },
        { ...found, chosen: above },
      )
    }
    const now = ctx.clock.now()
    if (now >= deadline) break
    const traffic = readings[0] ? trafficBetween(readings[0], readings.slice(1), model) : undefined
    const latest = a.tracks[0]?.points.at(-1)?.value
    ctx.progress(`watching ${name} = ${latest ?? '?'} · ${formatDuration(now - start)} of ${formatDuration(window)}${traffic !== undefined ? ` · ${traffic} requests since the start` : ''}`)
    await pollWait(ctx.clock, deadline, interval, now)
  }

  if (readings.length === 0) {
    return conclude({ verdict: 'inconclusive', observed: `no /metrics page could be read in ${formatDuration(window)} (${failures} tries): ${lastFailure}`, next: `check ${url} is reachable from here, then run again` })
  }
  // Every reading was assessed inside the watch, and none was refused (that concludes at once).
  const a = assessed
  if (a?.kind !== 'ok') throw new Error('meter: the watch ended without an assessed reading')
  const found = { tracks: a.tracks, selection: a.selection, notJudged: a.notJudged }
  const traffic = trafficBetween(readings[0]!, readings.slice(1), model)
  const judgedText = a.tracks.length > 1 || a.notJudged.length > 0 || !a.selection.startsWith('judged the served') ? ` (${a.selection}${a.notJudged.length ? `; not judged: ${a.notJudged.join(', ')}` : ''})` : ''
  const late = a.tracks.find((t) => t.points.some((p) => p.value > 0))
  if (late) {
    // Only a series that appeared after the first scrape can be above zero here without having risen.
    return conclude(
      {
        verdict: 'inconclusive',
        observed:
          late.from === 0
            ? `${late.name} read ${late.points[0]!.value} at the only scrape of the window: neither a rise nor the process behind it could be established${judgedText}`
            : `${late.name} first appeared at scrape ${late.from + 1} already at ${late.points[0]!.value} and did not rise; it is not the series the first scrape saw${judgedText}`,
        next: `a series that appears mid-run already above zero is neither a rise during this run nor proven to belong to the process step argv read (a restart or relabel?): run again on a settled engine while traffic flows`,
      },
      found,
    )
  }
  if (traffic === undefined || traffic === 0) {
    return conclude(
      {
        verdict: 'inconclusive',
        observed: `${name} stayed at 0, but ${traffic === undefined ? 'the engine exports no request counter' : 'no traffic reached the engine'} in ${formatDuration(window)}${judgedText}`,
        next: 'a flat meter proves nothing without traffic: run again while the endpoint serves requests, or with a longer --meter-window',
      },
      found,
    )
  }
  const flat = `${name} stayed at 0 for ${formatDuration(window)} while ${traffic} request(s) reached the engine${judgedText}`
  if (rollback) {
    processCheck = await recheckProcess(ctx, inputs.engineProcess)
    if (processCheck.state === 'changed') {
      return conclude({ verdict: 'failed', observed: `${flat}, but the engine restarted during the proof: ${processCheck.detail}`, next: 'a flat counter of a restarted engine proves nothing about the process step argv read: find why it restarted, then run the proof again', where: processCheck.where }, found)
    }
    return conclude({ verdict: 'passed', observed: `${flat}${processCheck.state === 'same' ? `; ${processCheck.detail}` : ''}` }, { ...found, proof: 'stayed-at-zero' })
  }
  return conclude(
    {
      verdict: 'failed',
      observed: flat,
      next: `the arm did nothing: the engine ignores ${ctx.spec.flag} or the flag did not reach it (see argv and ledger). Say so in the vault page; roll back with ${ctx.spec.env}=${ctx.target.previous ?? defaultValue(ctx, inputs.buildDefault)} and redeploy --service ${ctx.target.svc}`,
    },
    found,
  )
}
