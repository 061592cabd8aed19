// Step `meter`: the knob's own counter left zero within the meter window, or, where the
// expected value is the default (a rollback), stayed at zero while traffic flowed. Absent is not
// zero; no traffic in the window is inconclusive, not red.
import { formatDuration } from '../duration.ts'
import { HttpError } from '../http.ts'
import { defaultValue, endpointUrl, expectedValue, type RunContext } from '../run-context.ts'
import type { Judgement } from '../verdict.ts'
import { MetricsUnavailable, readMetrics, stepTimes, trafficBetween, type MetricsReading } from './metrics.ts'

export function meterPollInterval(windowMs: number): number {
  return Math.min(10_000, Math.max(250, Math.floor(windowMs / 30)))
}

/** Before the probes send traffic: the meter's starting point. Never throws. */
export async function takeBaseline(ctx: RunContext): Promise<void> {
  if (!ctx.spec.proof.meter || ctx.facts.baseline) return
  try {
    ctx.facts.baseline = await readMetrics(ctx, Math.min(15_000, ctx.target.meterWindowMs))
  } catch (error) {
    if (!(error instanceof MetricsUnavailable)) throw error
  }
}

function meterLabel(ctx: RunContext): string {
  const m = ctx.spec.proof.meter!
  return `${m.name}${m.labels ? `{${Object.entries(m.labels).map(([k, v]) => `${k}="${v}"`).join(',')}}` : ''}`
}

function series(readings: readonly MetricsReading[], start: number): Array<{ t: number; v: number | null }> {
  return readings.map((r) => ({ t: r.at - start, v: r.meter ?? null }))
}

async function checkStats(ctx: RunContext): Promise<Judgement> {
  const path = ctx.spec.proof.stats!
  const url = endpointUrl(ctx, '/stats')
  const value = expectedValue(ctx)
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

export async function checkMeter(ctx: RunContext): Promise<Judgement> {
  const meter = ctx.spec.proof.meter
  if (!meter) {
    if (ctx.spec.proof.stats) return checkStats(ctx)
    return {
      verdict: 'skipped',
      intendedSkip: true,
      expected: `${ctx.spec.env} has no meter`,
      observed: `no counter exists for ${ctx.spec.flag}; its proof is the ledger's resolved line (step ledger)`,
      where: endpointUrl(ctx, '/metrics'),
      evidence: {},
    }
  }
  const value = expectedValue(ctx)
  const rollback = value !== undefined && value === defaultValue(ctx)
  const name = meterLabel(ctx)
  const window = ctx.target.meterWindowMs
  const expected = rollback ? `${name} stays at 0 while traffic flows (knob at its default)` : `${name} leaves 0 within ${formatDuration(window)}`
  const url = endpointUrl(ctx, '/metrics')
  if (value === undefined) {
    return { verdict: 'inconclusive', expected: `${name} judged against the expected value`, observed: 'the expected value is the build default, which --help did not print', where: url, next: 'pass --value', evidence: {} }
  }
  const start = ctx.clock.now()
  const deadline = start + window
  const interval = meterPollInterval(window)
  const readings: MetricsReading[] = []
  let failures = 0
  let lastFailure = ''
  if (ctx.facts.baseline) readings.push(ctx.facts.baseline)

  const conclude = (j: Omit<Judgement, 'expected' | 'where' | 'evidence'>): Judgement => {
    const present = readings.filter((r) => r.meter !== undefined)
    const first = present[0]
    const last = present.at(-1)
    const moved = present.find((r) => (r.meter ?? 0) > 0)
    const evidenceValues = Object.fromEntries(
      (ctx.spec.proof.evidence ?? []).map((n) => [n, { first: first?.values[n] ?? null, last: last?.values[n] ?? null }]),
    )
    return {
      ...j,
      expected,
      where: `GET ${readings.at(-1)?.url ?? url}`,
      evidence: {
        meter: { name: meter.name, labels: meter.labels ?? {}, first: first?.meter ?? null, last: last?.meter ?? null, movedAt: moved ? new Date(moved.at).toISOString() : null, movedAfterMs: moved ? Math.max(0, moved.at - start) : null },
        series: series(readings, start),
        scrapes: readings.length,
        scrapeFailures: failures,
        prefixes: readings.at(-1)?.prefixes ?? [],
        evidenceMeters: evidenceValues,
        stepTimes: last ? stepTimes(last) : {},
        parseErrors: readings.at(-1)?.errors ?? [],
      },
    }
  }

  for (;;) {
    const remaining = deadline - ctx.clock.now()
    try {
      readings.push(await readMetrics(ctx, Math.max(1000, Math.min(30_000, remaining))))
    } catch (error) {
      if (!(error instanceof MetricsUnavailable)) throw error
      failures++
      lastFailure = error.message
      if (!error.unreachable) {
        return conclude({ verdict: 'failed', observed: `/metrics did not serve a page: ${error.detail}`, next: `check ${url} by hand (curl -sSL ${url} | head); the exporter is broken` })
      }
    }
    const latest = readings.at(-1)
    if (latest && latest.meter === undefined) {
      const like = latest.lookalikes.length ? `; a series of the same name exists under another prefix: ${latest.lookalikes.join(', ')}` : ''
      const errs = latest.errors.length ? `; ${latest.errors.length} malformed line(s), first at line ${latest.errors[0]!.line}: ${latest.errors[0]!.message}` : ''
      return conclude({
        verdict: 'failed',
        observed: `${meter.name} is absent from ${latest.sampleCount} samples (prefixes seen: ${latest.prefixes.join(', ') || 'none'})${like}${errs}`,
        next: `this build does not export ${meter.name}: absent is not zero, so the arm is unproven. Check the image version${like ? ' and the metric prefix (cadence lives under radiance:, latency under vllm:)' : ''}; curl -s ${url} | grep ${meter.name.split(':').pop()}`,
      })
    }
    if (latest?.meterOdd) {
      return conclude({ verdict: 'failed', observed: `the meter reads ${latest.meterOdd}`, next: `a counter is never NaN or negative: the exporter is broken; report it with the /metrics page (curl -s ${url} | grep ${meter.name})` })
    }
    // From here on every reading has the meter: an absent one has already concluded.
    const first = readings[0]
    const moved = readings.find((r) => (r.meter ?? 0) > 0)
    if (moved && first) {
      const fromTo = `${first.meter} → ${readings.at(-1)!.meter}`
      if (rollback) {
        return conclude({
          verdict: 'failed',
          observed: `${name} moved (${fromTo}) although ${ctx.spec.env} is at its default ${value}`,
          next: `the knob still acts: the rollback did not take (check argv and the ledger), or the engine was not restarted; redeploy --service ${ctx.target.svc}`,
        })
      }
      const when = moved === first ? 'already above 0 at the first scrape' : `moved after ${formatDuration(moved.at - start)}`
      return conclude({ verdict: 'passed', observed: `${name} ${fromTo}, ${when}` })
    }
    const now = ctx.clock.now()
    if (now >= deadline) break
    const traffic = first ? trafficBetween(first, readings.slice(1)) : undefined
    ctx.progress(`watching ${name} = ${readings.at(-1)?.meter ?? '?'} · ${formatDuration(now - start)} of ${formatDuration(window)}${traffic !== undefined ? ` · ${traffic} requests since the start` : ''}`)
    await ctx.clock.sleep(Math.min(interval, deadline - now))
  }

  if (readings.length === 0) {
    return conclude({ verdict: 'inconclusive', observed: `no /metrics page could be read in ${formatDuration(window)} (${failures} tries): ${lastFailure}`, next: `check ${url} is reachable from here, then run again` })
  }
  const traffic = trafficBetween(readings[0]!, readings.slice(1))
  if (traffic === undefined || traffic === 0) {
    return conclude({
      verdict: 'inconclusive',
      observed: `${name} stayed at 0, but ${traffic === undefined ? 'the engine exports no request counter' : 'no traffic reached the engine'} in ${formatDuration(window)}`,
      next: 'a flat meter proves nothing without traffic: run again while the endpoint serves requests, or with a longer --meter-window',
    })
  }
  const flat = `${name} stayed at 0 for ${formatDuration(window)} while ${traffic} request(s) reached the engine`
  if (rollback) return conclude({ verdict: 'passed', observed: flat })
  return conclude({
    verdict: 'failed',
    observed: flat,
    next: `the arm did nothing: the engine ignores ${ctx.spec.flag} or the flag did not reach it (see argv and ledger). Say so in the vault page; roll back with ${ctx.spec.env}=${ctx.target.previous ?? defaultValue(ctx)} and redeploy --service ${ctx.target.svc}`,
  })
}
