// The meter read through a real Prometheus (Debian's `prometheus`, started here on 127.0.0.1 with
// a generated config scraping the reference engines every second): an armed engine's knob
// counter moves through Prometheus, a knob-ignored engine's stays 0 while its traffic counters
// move, a name the engine does not export is absent (never zero) and only after two scrapes, a
// counter that went down is a reset, and a target that went away is stale. Each poll is two
// queries, counted. And `promtool check metrics` lints the reference engine's page. Needs
// prometheus and promtool (.ci/run installs the Debian package); without them the tests are not
// run and say why, or fail under CI=true (test/support/prerequisites.ts).
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startEngine, type EngineHandle, type EngineOptions } from '../../engine/launch.ts'
import { GARBAGE_LINE } from '../../engine/metrics.ts'
import { createPromSource } from '../../helpers/steps/meter/prometheus-source.ts'
import type { PromFetch, PromSourceOptions } from '../../helpers/steps/meter/prom-options.ts'
import type { PromReading, SeriesReading } from '../../helpers/steps/meter/prom-reading.ts'
import { latest, meterResets, presence, scrapeIntervalFromConfig, walk } from '../support/prom-reading.ts'
import { check, PROMETHEUS, requires } from '../support/prerequisites.ts'
import { promtool, startPrometheus, type PrometheusHandle } from '../support/prometheus.ts'

const METER = 'radiance:engine_steps_held_total'
const TRAFFIC = ['vllm:request_success_total', 'vllm:prompt_tokens_total', 'vllm:generation_tokens_total']
const MODEL = 'radiance-ref-8b'
const FAST = ['--load-closed-ms', '0', '--load-503-ms', '0']
/** How long a wait for Prometheus to show something may take before the test fails (not a timing claim). */
const WAIT_MS = 20_000

const ready = requires(check(PROMETHEUS))
let prom: PrometheusHandle
const engines: Record<'armed' | 'ignored' | 'reset' | 'wrongPrefix', EngineHandle> = {} as never

const uniqueName = (prefix: string): string => `${prefix}${Math.random().toString(36).slice(2, 8)}`
const launch = (options: EngineOptions): Promise<EngineHandle> => startEngine({ processName: uniqueName('rp-'), ...options })
const hostPort = (e: EngineHandle): string => new URL(e.baseUrl).host
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

beforeAll(async () => {
  if (!ready) return
  const interleave = ['--prefill-interleave', '1', ...FAST]
  const [armed, ignored, reset, wrongPrefix] = await Promise.all([
    launch({ args: interleave }),
    launch({ args: interleave, faults: ['knob_ignored'] }),
    launch({ args: interleave, faults: ['meter_reset'] }),
    launch({ args: interleave, faults: ['meter_wrong_prefix'] }),
  ])
  Object.assign(engines, { armed, ignored, reset, wrongPrefix })
  // Prometheus starts while the engines load: their ports are known, a scrape of a loading one is up == 0.
  const [started] = await Promise.all([
    startPrometheus({ targets: Object.values(engines).map(hostPort) }),
    ...Object.values(engines).map((e) => e.waitReady()),
  ])
  prom = started
  // Prometheus 2.42 applies new targets on a 5 s tick: wait for a first scrape of each one.
  await prom.waitScraped(WAIT_MS)
})

afterAll(async () => {
  await Promise.allSettled([prom?.stop(), ...Object.values(engines).map((e) => e.stop())])
})

/** The meter source's HTTP exchange, counted; loopback only. */
function countedFetch(): { fetch: PromFetch; count: () => number } {
  let n = 0
  return {
    fetch: async (url) => {
      if (!url.startsWith(`${prom.url}/`)) throw new Error(`the meter source asked beyond the test Prometheus: ${url}`)
      n++
      const res = await fetch(url, { signal: AbortSignal.timeout(5000) })
      return { status: res.status, body: await res.text() }
    },
    count: () => n,
  }
}

function sourceFor(engine: EngineHandle, extra: Partial<PromSourceOptions> = {}) {
  const counted = countedFetch()
  const source = createPromSource({
    prometheusUrl: prom.url,
    baseUrl: engine.baseUrl,
    meterName: METER,
    trafficNames: TRAFFIC,
    model: MODEL,
    fetch: counted.fetch,
    ...extra,
  })
  return { source, fetched: counted.count }
}

/**
 * Polls until `done` holds for a reading (every 250 ms, up to WAIT_MS); returns every reading
 * taken, in order. A refused answer fails the test with what Prometheus said.
 */
async function pollUntil(
  source: ReturnType<typeof createPromSource>,
  sinceMs: number,
  done: (r: PromReading) => boolean,
): Promise<PromReading[]> {
  const readings: PromReading[] = []
  const deadline = Date.now() + WAIT_MS
  while (true) {
    const r = await source.poll(sinceMs, Date.now())
    if (!r.ok) throw new Error(`${r.failure.code}: ${r.failure.what} (${r.failure.where})`)
    readings.push(r.reading)
    if (done(r.reading)) return readings
    if (Date.now() > deadline)
      throw new Error(
        `Prometheus did not show it within ${WAIT_MS} ms; last reading: ${JSON.stringify(r.reading, null, 1).slice(0, 3000)}\nprometheus log:\n${prom.log().slice(-1500)}`,
      )
    await sleep(250)
  }
}

async function complete(e: EngineHandle, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${e.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: MODEL,
        max_tokens: 16,
        messages: [{ role: 'user', content: 'Reply with exactly this one word and nothing else: kestrel' }],
      }),
      signal: AbortSignal.timeout(5000),
    })
    await res.text()
    expect(res.status).toBe(200)
  }
}

const servedMeter = (r: PromReading): SeriesReading | undefined => r.series.find((s) => s.role === 'meter' && s.servedModel === true)
const trafficRise = (r: PromReading): number =>
  r.series.filter((s) => s.name === 'vllm:request_success_total' && s.servedModel === true).reduce((n, s) => n + walk(s).increase, 0)

describe.concurrent('the meter through a real Prometheus', () => {
  test('an armed engine: the knob counter moves from 0 through Prometheus, two queries per poll', async () => {
    const since = Date.now()
    const { source, fetched } = sourceFor(engines.armed)
    // First Prometheus must hold the counter at 0, before any traffic: then a rise is this run's.
    const before = await pollUntil(source, since, (r) => presence(r) === 'present' && latest(servedMeter(r)!)?.value === 0)
    await complete(engines.armed, 2)
    const after = await pollUntil(source, since, (r) => (servedMeter(r) ? walk(servedMeter(r)!).increase : 0) >= 2)
    const last = after.at(-1)!
    const meter = servedMeter(last)!
    expect(presence(last)).toBe('present')
    expect(meter.samples[0]!.value).toBe(0)
    expect(latest(meter)!.value).toBeGreaterThanOrEqual(2)
    expect(walk(meter).resets).toBe(0)
    expect(meter.labels).toMatchObject({ instance: hostPort(engines.armed), job: prom.job, model_name: MODEL })
    expect(trafficRise(last)).toBeGreaterThanOrEqual(2)
    expect(last.prefixes).toEqual(['', 'radiance', 'vllm'])
    expect(last.scrapes!.up).toBeGreaterThanOrEqual(1)
    const polls = before.length + after.length
    expect(fetched()).toBe(2 * polls)
    expect(source.queries()).toBe(2 * polls)
  })

  test('a knob-ignored engine: traffic counters move through Prometheus while the knob counter stays 0', async () => {
    const since = Date.now()
    const { source } = sourceFor(engines.ignored)
    await pollUntil(source, since, (r) => presence(r) === 'present')
    await complete(engines.ignored, 2)
    const last = (await pollUntil(source, since, (r) => trafficRise(r) >= 2)).at(-1)!
    const meter = servedMeter(last)!
    expect(presence(last)).toBe('present')
    // The scrape that saw the traffic saw the meter too: the same page, the same timestamp.
    const movedAt = last.series.find((s) => s.name === 'vllm:request_success_total' && walk(s).increase > 0)!.samples.at(-1)!.t
    expect(meter.samples.map((p) => p.t)).toContain(movedAt)
    expect(meter.samples.every((p) => p.value === 0)).toBe(true)
    expect(walk(meter).increase).toBe(0)
  })

  test('a name the engine does not export: pending until two scrapes, then absent, never zero', async () => {
    const since = Date.now()
    const { source } = sourceFor(engines.armed, { meterName: 'radiance:engine_steps_parked_total' })
    const readings = await pollUntil(source, since, (r) => presence(r) === 'absent')
    expect(presence(readings[0]!)).toBe('pending')
    for (const r of readings) {
      expect(r.series.filter((s) => s.role === 'meter')).toEqual([])
      expect(presence(r)).toBe((r.scrapes?.up ?? 0) >= 2 ? 'absent' : 'pending')
    }
    expect(readings.at(-1)!.scrapes!.up).toBeGreaterThanOrEqual(2)
  })

  test('the prefix trap: the meter exported as vllm: is absent under radiance:, the vllm: series shown', async () => {
    const since = Date.now()
    const { source } = sourceFor(engines.wrongPrefix)
    const last = (await pollUntil(source, since, (r) => presence(r) === 'absent')).at(-1)!
    expect(last.series.filter((s) => s.role === 'meter-other-prefix').map((s) => s.name)).toEqual(['vllm:engine_steps_held_total'])
    expect(last.prefixes).toEqual(['', 'vllm'])
  })

  test('a counter that went down between two scrapes is a reset', async () => {
    // meter_reset: the first scrape (Prometheus' first) reads 1000 more than every later one.
    const { source } = sourceFor(engines.reset)
    const since = Date.now() - 60_000 // the window reaches back before Prometheus' first scrape
    const last = (await pollUntil(source, since, (r) => meterResets(r) >= 1)).at(-1)!
    const values = servedMeter(last)!.samples.map((p) => p.value)
    expect(values[0]).toBeGreaterThanOrEqual(1000)
    expect(values.at(-1)).toBeLessThan(1000)
    expect(meterResets(last)).toBe(1)
  })

  test('a hostile --prometheus-match value stays one literal: the real Prometheus accepts it and it selects nothing', async () => {
    const since = Date.now()
    const match = `{instance="${hostPort(engines.armed)}\\",instance=~\\".*\\x1b\\n"}`
    const { source } = sourceFor(engines.armed, { match })
    const r = await source.poll(since, Date.now())
    expect(r.ok, JSON.stringify(r)).toBe(true)
    expect(r.ok && r.reading.series).toEqual([])
  })

  test('a selector that takes the whole job shows every target it takes', async () => {
    const { source } = sourceFor(engines.armed, { match: `{job="${prom.job}"}` })
    const r = await source.poll(Date.now() - 5000, Date.now())
    expect(r.ok && r.reading.instances).toEqual(Object.values(engines).map(hostPort).sort())
  })

  test("the scrape interval read from Prometheus' own /api/v1/status/config", async () => {
    const res = await prom.get('/api/v1/status/config')
    const yaml = (JSON.parse(res.body) as { data: { yaml: string } }).data.yaml
    expect(scrapeIntervalFromConfig(yaml, prom.job)).toBe(prom.scrapeIntervalMs)
  })
})

describe('a target that goes away', () => {
  // Was "reads stale (samples in the window, none current)": a scrape that fails is up == 0 in
  // Prometheus, a scrape not observed (issue 21 rule 6), which the raw samples and `up` show.
  test('reads not observed (samples in the window, the latest scrape up == 0), never zero', async () => {
    const { source } = sourceFor(engines.reset)
    const since = Date.now()
    // Present by a scrape at or after `since`: a window is asked in whole seconds, so the first
    // readings also show the scrape just before it, which later windows leave out (the engine
    // stopped before the next scrape, no reading would ever have a meter sample in it).
    await pollUntil(source, since, (r) => presence(r) === 'present' && servedMeter(r)!.samples.some((p) => p.t >= since))
    await engines.reset.stop()
    const last = (await pollUntil(source, since, (r) => presence(r) === 'unobserved')).at(-1)!
    expect(latest(last.series.find((s) => s.role === 'up')!)!.value).toBe(0)
    expect(servedMeter(last)!.samples.length).toBeGreaterThan(0)
  })
})

describe('promtool check metrics on the reference engine page', () => {
  // vLLM names its series `vllm:…` and radiance `radiance:…`: promtool's lint says exporters should
  // leave colons to recording rules. That is the engines' real naming (the knob meters are named
  // so in the contract), not a defect of the reference engine: accepted here, and only that.
  const COLON_LINT = /^\S+ metric names should not contain ':'$/

  test('passes with no error; its only lint is the colon in vllm:/radiance: names', async () => {
    await complete(engines.armed, 1)
    const page = await (await fetch(`${engines.armed.baseUrl}/metrics`, { signal: AbortSignal.timeout(5000) })).text()
    const r = await promtool(page)
    // promtool: 0 = clean, 3 = lint problems only, 1 = the page does not parse.
    expect([0, 3], r.out).toContain(r.code)
    const problems = r.out.split('\n').filter((l) => l.trim() !== '')
    expect(
      problems.filter((l) => !COLON_LINT.test(l)),
      r.out,
    ).toEqual([])
    expect(problems.length).toBeGreaterThan(0)
  })

  test('fails a page with a garbage line in it (the linter can fail)', async () => {
    const page = await (await fetch(`${engines.armed.baseUrl}/metrics`, { signal: AbortSignal.timeout(5000) })).text()
    const lines = page.split('\n')
    lines.splice(Math.floor(lines.length / 2), 0, GARBAGE_LINE)
    const r = await promtool(lines.join('\n'))
    expect(r.code, r.out).toBe(1)
    expect(r.out).toMatch(/error while linting/)
  })
})
