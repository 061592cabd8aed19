// The meter through a real Prometheus as Prometheus means it (test/support/prometheus-faults.ts):
// each row's engine is scraped by Debian's Prometheus 2.42 on loopback in the way the row names
// (replicas relabelled to one instance, scrapes lost after the traffic, a lookback delta shorter
// than the scrape interval, answers carrying a partial-response warning), and the nine steps are
// judged in this process with `--prometheus-url` (test/support/prove-in-process.ts): the verdict,
// every step's verdict and the meter's message. Zero false greens: a non-green row never exits 0.
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startEngine, type EngineHandle } from '../../engine/launch.ts'
import { freePort, releasePort } from '../../engine/proc.ts'
import { EXIT_CODES, STEP_IDS } from '../../helpers/steps/verdict.ts'
import { startLossyMetrics, type LossyMetrics } from '../support/lossy-metrics.ts'
import { check, PROMETHEUS, requires } from '../support/prerequisites.ts'
import { startPrometheus, type PrometheusHandle } from '../support/prometheus.ts'
import { PROM_FAST, PROMETHEUS_FAULTS, type PromFaultCase, type Through } from '../support/prometheus-faults.ts'
import { proveInProcess } from '../support/prove-in-process.ts'
import { engineArgs, verdicts } from '../support/run-verify.ts'

const ready = requires(check(PROMETHEUS))
const RUN = process.pid % 100_000
const FAST_LOAD = ['--load-closed-ms', '0', '--load-503-ms', '0']

const engines = new Map<PromFaultCase, EngineHandle>()
const prometheus = new Map<Through, PrometheusHandle>()
const started: Array<{ stop(): Promise<void> }> = []
let lossy: LossyMetrics | undefined
let closedPort: number | undefined
const host = (e: EngineHandle): string => new URL(e.baseUrl).host
const rowsThrough = (t: Through): EngineHandle[] => PROMETHEUS_FAULTS.filter((c) => c.through === t).map((c) => engines.get(c)!)

beforeAll(async () => {
  if (!ready) return
  const launched = await Promise.all(
    PROMETHEUS_FAULTS.map((c, i) =>
      startEngine({ ...c.engine, args: [...(c.engine.args ?? []), ...FAST_LOAD], svc: `pf${i}`, processName: `pf${i}-${RUN}` }),
    ),
  )
  PROMETHEUS_FAULTS.forEach((c, i) => engines.set(c, launched[i]!))
  // The other replica of `twins`: armed and above zero before the run, under another process name (pidof finds only the row's own).
  const twin = await startEngine({
    args: ['--prefill-interleave', '1', ...FAST_LOAD],
    faults: ['meter_preloaded'],
    svc: 'pftwin',
    processName: `pft-${RUN}`,
  })
  started.push(...launched, twin)
  await Promise.all([...launched, twin].map((e) => e.waitReady()))
  lossy = await startLossyMetrics(rowsThrough('lossy')[0]!.baseUrl)
  closedPort = await freePort() // handed out and never listened on: the remote read is refused
  const [twins, short, partial] = await Promise.all([
    startPrometheus({
      targets: [],
      jobs: [
        { job: 'twins', targets: [...rowsThrough('twins').map(host), host(twin)], instance: '127.0.0.1' },
        { job: 'lossy', targets: [lossy.host] },
      ],
    }),
    startPrometheus({ targets: rowsThrough('short lookback').map(host), scrapeInterval: '2s', lookbackDelta: '500ms' }),
    startPrometheus({ targets: rowsThrough('partial response').map(host), remoteRead: `http://127.0.0.1:${closedPort}/read` }),
  ])
  prometheus.set('twins', twins!).set('lossy', twins!).set('short lookback', short!).set('partial response', partial!)
  started.push(twins!, short!, partial!, lossy)
  await Promise.all([twins!, short!, partial!].map((p) => p.waitScraped(30_000)))
}, 60_000)

afterAll(async () => {
  await Promise.allSettled(started.map((s) => s.stop()))
  if (closedPort !== undefined) releasePort(closedPort)
})

describe.concurrent('the meter through a real Prometheus, as Prometheus means it', () => {
  test.for(PROMETHEUS_FAULTS.map((c, i) => ({ ...c, i })))('$fault: $what → $verdict', async (c, { expect: x }) => {
    const row = PROMETHEUS_FAULTS[c.i]!
    const engine = engines.get(row)!
    const prom = prometheus.get(row.through)!
    const args = [
      ...engineArgs(engine),
      '--knob',
      row.knob,
      ...(row.value !== undefined ? ['--value', row.value] : []),
      ...PROM_FAST,
      '--prometheus-url',
      prom.url,
      ...(row.match ? ['--prometheus-match', row.match] : []),
    ]
    const run = await proveInProcess(args, { engine })
    const meter = run.report.steps.find((s) => s.id === 'meter')!
    const context = `${run.stdout}\nprometheus log:\n${prom.log().slice(-1500)}`
    const want = Object.fromEntries(
      STEP_IDS.map((id) => [id, row.steps[id] ?? (id === 'dropins' || id === 'one-flag' ? 'skipped' : 'passed')]),
    )
    x(verdicts(run.report), context).toEqual(want)
    x(run.report.verdict, context).toBe(row.verdict)
    x(run.exitCode, context).toBe(EXIT_CODES[row.verdict])
    if (row.verdict !== 'green') x(run.exitCode).not.toBe(0)
    x(meter.where, context).toContain(`Prometheus ${prom.url}`)
    x(`${meter.observed}\n${meter.next ?? ''}`, context).toContain(row.message)
    if (meter.verdict !== 'passed') x(meter.next, context).toBeTruthy()
    // Every poll is two requests: the raw samples and the targets' metadata (never an instant query).
    const p = meter.evidence.prometheus as { polls: number; queries: number }
    x(p.queries).toBe(2 * p.polls)
  })
})

describe('after the rows', () => {
  test('the lossy relay lost the scrapes while its engine kept serving (the case is the one it names)', async () => {
    expect(lossy!.lost()).toBeGreaterThan(0)
    const row = PROMETHEUS_FAULTS.find((c) => c.through === 'lossy')!
    const res = await fetch(`${engines.get(row)!.baseUrl}/metrics`, { signal: AbortSignal.timeout(5000) })
    expect(res.status).toBe(200)
  })
})
