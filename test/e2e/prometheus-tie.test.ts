// The series tie end to end, against a real Prometheus (Debian's, on loopback) scraping engines
// whose pages carry no process_start_time_seconds: the llama.cpp emulation (llama.cpp's exporter
// never has it) and the reference engine's no_start_time fault. Prometheus scrapes the engine's
// port before the engine starts (up == 0: the port closed, then 503 while loading), so the series
// is born after the pid's start: green, tied by that birth at one scrape interval. A Prometheus
// that began scraping only once the engine answered cannot tell (inconclusive), and neither can a
// series that ran across the pid's start (an engine replaced within one scrape interval, its
// counters at zero on both sides: no break to see). Needs prometheus (test/support/prerequisites.ts).
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startEngine, type EngineHandle, type EngineOptions } from '../../engine/launch.ts'
import { freePort } from '../../engine/proc.ts'
import { check, PROMETHEUS, requires } from '../support/prerequisites.ts'
import { startPrometheus, type PrometheusHandle } from '../support/prometheus.ts'
import { cleanup, engineArgs, runVerify } from '../support/run-verify.ts'

const ready = requires(check(PROMETHEUS))
const WAIT_MS = 20_000
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))
const unique = (prefix: string): string => `${prefix}${Math.random().toString(36).slice(2, 8)}`
const PROM_FAST = ['--health-budget', '15s', '--meter-window', '6s', '--probe-timeout', '5s', '--host-timeout', '10s', '--no-dropin-check']
/** Loading: the port closed 2.5 s, then 503 for 2.5 s: the first successful scrape comes well after the pid's start. */
const LOAD = { closedMs: 2500, unavailableMs: 2500 }

type UpSample = [number, string]
/** The `up` samples Prometheus holds of `host` over the last `seconds`. */
async function ups(prom: PrometheusHandle, host: string, seconds: number): Promise<UpSample[]> {
  const r = await prom.query(`up{instance="${host}"}[${seconds}s]`)
  return ((r.result[0] as { values?: UpSample[] } | undefined)?.values ?? []).map(([t, v]) => [t * 1000, v])
}

/** Until Prometheus holds four failed scrapes of `host` (its port closed): the history before the engine starts, more than the tie's 2 s of slack (skew, btime's whole second). */
async function waitFailed(prom: PrometheusHandle, host: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS
  while ((await ups(prom, host, 60)).filter(([, v]) => v === '0').length < 4) {
    if (Date.now() > deadline) throw new Error(`Prometheus never scraped ${host}:\n${prom.log().slice(-1500)}`)
    await sleep(200)
  }
}

const meterOf = (run: Awaited<ReturnType<typeof runVerify>>) => run.report!.steps.find((s) => s.id === 'meter')!
type TieEv = { tied: boolean; said: string; queries: number; evidence?: { intervalMs: number; broke: string; rule: string } }
const tieOf = (run: Awaited<ReturnType<typeof runVerify>>) => (meterOf(run).evidence.prometheus as { tie?: TieEv }).tie

/** An engine started on a port Prometheus already scrapes (and fails to): its series is born after its start. */
async function bornUnderPrometheus(options: EngineOptions): Promise<{ engine: EngineHandle; prom: PrometheusHandle }> {
  const port = await freePort()
  const host = `127.0.0.1:${port}`
  const prom = await startPrometheus({ targets: [host] })
  await waitFailed(prom, host)
  const engine = await startEngine({ ...options, port })
  await engine.waitReady(WAIT_MS)
  await prom.waitScraped(WAIT_MS)
  return { engine, prom }
}

const llama = (): EngineOptions => ({
  profile: 'llama.cpp',
  args: ['-np', '2', '--metrics'],
  svc: unique('lt-'),
  processName: unique('lt-'),
  load: LOAD,
})

describe.runIf(ready).concurrent('the series tie through a real Prometheus: engines without process_start_time_seconds', () => {
  const stops: Array<() => Promise<void>> = []
  afterAll(async () => {
    await Promise.allSettled(stops.map((s) => s()))
  })

  let born: { engine: EngineHandle; prom: PrometheusHandle }
  beforeAll(async () => {
    born = await bornUnderPrometheus(llama())
    stops.push(born.prom.stop, born.engine.stop)
  }, 60_000)

  test('llama.cpp, CACHE_PROMPT=true, its series born after the pid started (scrapes failed while it loaded): GREEN, tied by the birth at 1 s', async () => {
    const run = await runVerify(
      [
        ...engineArgs(born.engine),
        '--engine',
        'llama.cpp',
        '--knob',
        'CACHE_PROMPT',
        '--value',
        'true',
        ...PROM_FAST,
        '--prometheus-url',
        born.prom.url,
      ],
      { engine: born.engine },
    )
    try {
      expect(run.exitCode, run.stdout + run.stderr).toBe(0)
      const meter = meterOf(run)
      expect(meter.verdict).toBe('passed')
      expect(run.report!.meter!.name).toBe('llamacpp:prompt_tokens_cached_total')
      expect(meter.observed).toMatch(/tied by the series' birth \(no process_start_time_seconds\): http:\/\/127\.0\.0\.1:\d+\/metrics/)
      expect(meter.observed).toContain('resolution one scrape interval, 1000 ms')
      expect(tieOf(run)).toMatchObject({
        tied: true,
        queries: 2,
        evidence: { rule: 'series-birth', intervalMs: 1000, broke: 'failed-scrapes' },
      })
    } finally {
      cleanup(run)
    }
  })

  test('the same engine, read by a Prometheus that began scraping once it answered: no failed scrape before it, the tie cannot be decided, INCONCLUSIVE', async () => {
    const late = await startPrometheus({ targets: [new URL(born.engine.baseUrl).host] })
    stops.push(late.stop)
    await late.waitScraped(WAIT_MS)
    const run = await runVerify(
      [
        ...engineArgs(born.engine),
        '--engine',
        'llama.cpp',
        '--knob',
        'CACHE_PROMPT',
        '--value',
        'true',
        ...PROM_FAST,
        '--prometheus-url',
        late.url,
      ],
      { engine: born.engine },
    )
    try {
      expect(run.exitCode, run.stdout + run.stderr).toBe(3)
      const meter = meterOf(run)
      expect(meter.verdict).toBe('inconclusive')
      expect(meter.observed).toMatch(
        /the series' birth does not tie it: Prometheus' first scrape of the target since .* already successful, not before pid \d+ started/,
      )
      expect(tieOf(run)?.tied).toBe(false)
    } finally {
      cleanup(run)
    }
  })

  test('radiance with no_start_time, PREFILL_INTERLEAVE=1, born under Prometheus: GREEN, tied by the birth', async () => {
    const r = await bornUnderPrometheus({
      svc: unique('rt-'),
      processName: unique('rt-'),
      args: ['--prefill-interleave', '1', '--load-closed-ms', String(LOAD.closedMs), '--load-503-ms', String(LOAD.unavailableMs)],
      faults: ['no_start_time'],
    })
    stops.push(r.prom.stop, r.engine.stop)
    const run = await runVerify(
      [...engineArgs(r.engine), '--knob', 'PREFILL_INTERLEAVE', '--value', '1', ...PROM_FAST, '--prometheus-url', r.prom.url],
      { engine: r.engine },
    )
    try {
      expect(run.exitCode, run.stdout + run.stderr).toBe(0)
      expect(meterOf(run).verdict).toBe('passed')
      expect(tieOf(run)).toMatchObject({ tied: true, evidence: { intervalMs: 1000 } })
    } finally {
      cleanup(run)
    }
  })

  test('a series that ran across the pid start (the engine replaced between two scrapes 4 s apart, counters 0 on both sides): INCONCLUSIVE, never green', async () => {
    const port = await freePort()
    const host = `127.0.0.1:${port}`
    const prom = await startPrometheus({ targets: [host], scrapeInterval: '4s' })
    stops.push(prom.stop)
    const options = { ...llama(), port, load: { closedMs: 0, unavailableMs: 0 } }
    let engine = await startEngine(options)
    stops.push(engine.stop)
    await engine.waitReady(WAIT_MS)
    await prom.waitScraped(WAIT_MS)
    // Replace the engine right after a scrape, so the next one (4 s later) finds the new one answering;
    // again if a scrape fell in between (a failed one is a break, and this case is about none).
    for (let attempt = 0; ; attempt++) {
      const before = (await ups(prom, host, 30)).at(-1)![0]
      while ((await ups(prom, host, 30)).at(-1)![0] === before) await sleep(50)
      const replacedAt = Date.now()
      await engine.stop()
      engine = await startEngine({ ...options, svc: unique('lt-') })
      stops.push(engine.stop)
      await engine.waitReady(WAIT_MS)
      const answered = Date.now()
      while (((await ups(prom, host, 30)).at(-1)?.[0] ?? 0) < answered) await sleep(100)
      const around = (await ups(prom, host, 30)).filter(([t]) => t >= replacedAt - 4000)
      if (around.every(([, v]) => v === '1')) break
      if (attempt === 2) throw new Error(`a scrape failed across each of 3 replacements: ${JSON.stringify(around)}`)
    }
    const run = await runVerify(
      [
        ...engineArgs(engine),
        '--engine',
        'llama.cpp',
        '--knob',
        'CACHE_PROMPT',
        '--value',
        'true',
        ...PROM_FAST,
        '--prometheus-url',
        prom.url,
      ],
      { engine },
    )
    try {
      expect(run.exitCode, run.stdout + run.stderr).toBe(3)
      const meter = meterOf(run)
      expect(meter.verdict).toBe('inconclusive')
      expect(meter.observed).toMatch(/it ran across the pid's start without a break, so it is not shown to be this process/)
    } finally {
      cleanup(run)
    }
  })
})
