// `pnpm verify --prometheus-url` end to end against a real Prometheus (Debian's, on loopback,
// scraping the reference engines every second): the meter step reads the knob's counter and the
// request counters through Prometheus' HTTP API, never /metrics. An armed engine is green at
// `meter`, a knob-ignored one red, both as one target and as two targets of one fleet run.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startEngine, type EngineHandle } from '../../engine/launch.ts'
import type { FleetReport } from '../../helpers/fleet/report.ts'
import { check, PROMETHEUS, requires } from '../support/prerequisites.ts'
import { startPrometheus, type PrometheusHandle } from '../support/prometheus.ts'
import { engineEntry, targetVerdicts, writeTargets } from '../support/fleet.ts'
import { cleanup, engineArgs, ROOT, runVerify, verdicts } from '../support/run-verify.ts'

const ready = requires(check(PROMETHEUS))
let prom: PrometheusHandle
const engines: Record<'armed' | 'ignored', EngineHandle> = {} as never
const unique = (prefix: string): string => `${prefix}${Math.random().toString(36).slice(2, 8)}`
/**
 * The meter window spans several 1 s scrapes: Prometheus sees the counter before the probes'
 * traffic (the baseline waits for a scrape) and several times after it. The knob-ignored target
 * watches the whole window; the armed one ends at the first scrape that shows the rise.
 */
const PROM_FAST = ['--health-budget', '8s', '--meter-window', '4s', '--probe-timeout', '3s', '--host-timeout', '10s', '--no-dropin-check']

beforeAll(async () => {
  if (!ready) return
  const args = ['--prefill-interleave', '1', '--load-closed-ms', '0', '--load-503-ms', '0']
  const [armed, ignored] = await Promise.all([
    startEngine({ svc: unique('pa-'), processName: unique('pa-'), args }),
    startEngine({ svc: unique('pi-'), processName: unique('pi-'), args, faults: ['knob_ignored'] }),
  ])
  Object.assign(engines, { armed, ignored })
  const [started] = await Promise.all([
    startPrometheus({ targets: [armed, ignored].map((e) => new URL(e.baseUrl).host) }),
    armed.waitReady(),
    ignored.waitReady(),
  ])
  prom = started
  await prom.waitScraped(20_000)
}, 60_000)

afterAll(async () => {
  await Promise.allSettled([prom?.stop(), ...Object.values(engines).map((e) => e?.stop())])
})

describe.concurrent('the meter read from a real Prometheus', () => {
  test('pnpm verify --prometheus-url: an armed engine is GREEN at meter, read through Prometheus (2 queries per poll)', async () => {
    const run = await runVerify(
      [...engineArgs(engines.armed), '--knob', 'PREFILL_INTERLEAVE', '--value', '1', ...PROM_FAST, '--prometheus-url', prom.url],
      { engine: engines.armed },
    )
    try {
      expect(run.exitCode, run.stdout + run.stderr).toBe(0)
      const meter = run.report!.steps.find((s) => s.id === 'meter')!
      expect(meter.verdict).toBe('passed')
      expect(meter.where).toContain(`Prometheus ${prom.url}`)
      const p = meter.evidence.prometheus as { polls: number; queries: number; selector: string }
      expect(p.queries).toBe(2 * p.polls)
      expect(p.selector).toContain(`instance="${new URL(engines.armed.baseUrl).host}"`)
      // The baseline waits for a scrape before the probes, so the rise is this run's own.
      expect(run.report!.meter!.proof).toBe('rose')
    } finally {
      cleanup(run)
    }
  })

  test('a fleet of two through Prometheus: the armed one GREEN, the knob-ignored one RED at meter, exit 1', async () => {
    const file = writeTargets({ knob: 'PREFILL_INTERLEAVE', value: '1', host: 'local', 'prometheus-url': prom.url }, [
      engineEntry(engines.armed),
      engineEntry(engines.ignored),
    ])
    const run = await runVerify(['--targets', file, ...PROM_FAST], { engine: engines.armed })
    try {
      expect(run.exitCode, run.stdout + run.stderr).toBe(1)
      const report = run.report as unknown as FleetReport
      expect(targetVerdicts(report)).toEqual({ [engines.armed.svc]: 'green', [engines.ignored.svc]: 'red' })
      const ignored = report.targets.find((t) => t.name === engines.ignored.svc)!.report
      expect(verdicts(ignored)).toMatchObject({ meter: 'failed', argv: 'passed', ledger: 'passed', 'probe.exact': 'passed' })
      const meter = ignored.steps.find((s) => s.id === 'meter')!
      expect(meter.observed).toMatch(/stayed at 0 in Prometheus for 4\.0s while [1-9]\d* request\(s\) reached the engine/)
      expect(meter.where).toContain(`Prometheus ${prom.url}`)
    } finally {
      cleanup(run)
    }
  })

  test('a fleet of eight through its own Prometheus: all GREEN, its polls shared (Prometheus counts less than half the queries the targets would have sent alone)', async () => {
    const size = 8
    const fleet = await startEngine({
      svc: unique('pf-'),
      processName: unique('pf-'),
      args: ['--prefill-interleave', '1', '--load-closed-ms', '0', '--load-503-ms', '0'],
      fleet: size,
    })
    const own = await startPrometheus({ targets: fleet.members!.map((m) => new URL(m.baseUrl).host) })
    try {
      await Promise.all([fleet.waitReady(), own.waitScraped(20_000)])
      /** Queries Prometheus answered on the two endpoints a poll asks, by its own counter (its /metrics is no query). */
      const answered = async (): Promise<number> => {
        const page = (await own.get('/metrics')).body
        return [
          ...page.matchAll(/^prometheus_http_requests_total\{code="\d+",handler="\/api\/v1\/(?:query|targets\/metadata)"\} (\d+)$/gm),
        ].reduce((n, m) => n + Number(m[1]), 0)
      }
      const before = await answered()
      const file = writeTargets(
        { knob: 'PREFILL_INTERLEAVE', value: '1', host: 'local', 'prometheus-url': own.url },
        fleet.members!.map((m) => ({
          svc: m.svc,
          'base-url': m.baseUrl,
          process: fleet.processName,
          'ledger-cmd': `${fleet.binDir}/podman logs --tail 100000 {svc}`,
          'help-cmd': `${fleet.binDir}/podman exec {svc} radiance --help`,
        })),
      )
      // In a process of its own: how many polls its targets share depends on their starting together,
      // as a fresh process's do once vitest has loaded (a warm verify host starts them more spread).
      const run = await runVerify(['--targets', file, ...PROM_FAST], { engine: fleet, ownProcess: true })
      try {
        expect(run.exitCode, run.stdout + run.stderr).toBe(0)
        const report = run.report as unknown as FleetReport
        expect(Object.values(targetVerdicts(report))).toEqual(Array(size).fill('green'))
        const sent = (await answered()) - before
        // Alone, each target would have sent two queries for its baseline's poll and two for each of its meter's: shared, a poll serves them all.
        const alone = report.targets.reduce(
          (n, t) => n + 2 * (1 + (t.report.steps.find((s) => s.id === 'meter')!.evidence.prometheus as { polls: number }).polls),
          0,
        )
        expect(sent).toBeGreaterThanOrEqual(2)
        expect(sent).toBeLessThan(alone / 2)
        // Every target was answered by the fleet's shared source; which polls a target shares depends on
        // when it arrives (under load one may come late enough to poll alone), so most, not all, must have.
        let sharing = 0
        for (const t of report.targets) {
          const p = t.report.steps.find((s) => s.id === 'meter')!.evidence.prometheus as { shared?: { targets: number; queries: number } }
          expect(p.shared?.targets, t.name).toBeGreaterThanOrEqual(1)
          if (p.shared!.targets > 1) sharing++
          expect(p.shared!.queries).toBeLessThanOrEqual(sent)
          expect(t.report.meter!.proof).toBe('rose')
        }
        expect(sharing, 'targets whose polls served another target too').toBeGreaterThan(size / 2)
      } finally {
        cleanup(run)
      }
    } finally {
      await Promise.allSettled([own.stop(), fleet.stop()])
    }
  })

  test('record and replay see the Prometheus queries: a recorded run through Prometheus replays offline to the same verdict', async () => {
    const fixtures = mkdtempSync(join(tmpdir(), 'armproof-prom-fx-'))
    const args = [
      ...engineArgs(engines.armed),
      '--knob',
      'PREFILL_INTERLEAVE',
      '--value',
      '1',
      ...PROM_FAST,
      '--prometheus-url',
      prom.url,
      '--fixtures',
      fixtures,
    ]
    const recorded = await runVerify([...args, '--mode', 'record'], { engine: engines.armed })
    try {
      expect(recorded.exitCode, recorded.stdout + recorded.stderr).toBe(0)
      const http = readFileSync(join(fixtures, 'http.json'), 'utf8')
      expect(http).toContain('/api/v1/query')
      const replayed = await runVerify(
        ['--svc', engines.armed.svc, '--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--fixtures', fixtures, '--mode', 'replay'],
        { env: { NODE_OPTIONS: `--import=${join(ROOT, 'test/support/no-sockets.ts')}` } },
      )
      try {
        expect(replayed.exitCode, replayed.stdout + replayed.stderr).toBe(0)
        expect(verdicts(replayed.report)).toEqual(verdicts(recorded.report))
        expect(replayed.report!.steps.find((s) => s.id === 'meter')!.where).toContain(`Prometheus ${prom.url}`)
      } finally {
        cleanup(replayed)
      }
    } finally {
      cleanup(recorded)
      rmSync(fixtures, { recursive: true, force: true })
    }
  })
})
