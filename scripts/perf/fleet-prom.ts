// Measure 7: the meter through Prometheus (`--prometheus-url`), Debian's Prometheus on loopback
// scraping a fleet of 100 reference engines (one process, engine/fleet-main.ts) and one more
// engine every SCRAPE_S seconds. Queries are counted by Prometheus itself (its own
// prometheus_http_requests_total of the two endpoints a poll asks), before and after each run:
// one target alone, then the 100 in one fleet run. The wait for a scrape taken after the window
// started is read from each target's meter evidence (prometheus.waited).
import { join } from 'node:path'
import type { EngineHandle } from '../../engine/launch.ts'
import type { FleetReport } from '../../helpers/fleet/report.ts'
import type { Report } from '../../helpers/report/json.ts'
import { check, PROMETHEUS } from '../../test/support/prerequisites.ts'
import { startPrometheus, type PrometheusHandle } from '../../test/support/prometheus.ts'
import { readFileSync, writeFileSync } from 'node:fs'
import { fleetEngine, FLAGS, memberArgv, memberEntry, timedVerify } from './fleet-run.ts'

export const PROM_TARGETS = 100
export const SCRAPE_S = 3
/** Long enough for the scrape after the probes' traffic (at most one interval after it) in the window. */
const WINDOW = ['--meter-window', '15s']

interface MeterProm {
  polls: number
  queries: number
  waited?: { ms: number; endedAfterStartMs?: number }
  shared?: { targets: number; queries: number }
}

export interface PromRun {
  targets: number
  ms: number
  /** Queries Prometheus answered during the run (range queries and targets' metadata). */
  answered: number
  verdicts: Record<string, number>
  meters: MeterProm[]
}

export type FleetPromResult = { one: PromRun; fleet: PromRun; scrapeS: number } | { skipped: string }

async function answered(prom: PrometheusHandle): Promise<number> {
  const page = (await prom.get('/metrics')).body
  return [
    ...page.matchAll(/^prometheus_http_requests_total\{code="\d+",handler="\/api\/v1\/(?:query|targets\/metadata)"\} (\d+)$/gm),
  ].reduce((n, m) => n + Number(m[1]), 0)
}

const meterOf = (r: Report): MeterProm => r.steps.find((s) => s.id === 'meter')!.evidence.prometheus as MeterProm

export async function measureFleetProm(options: { latencyMs: number; dir: string; log: (line: string) => void }): Promise<FleetPromResult> {
  const missing = check(PROMETHEUS).missing
  if (missing.length > 0) return { skipped: `prometheus not installed (${PROMETHEUS.install})` }
  const engines: EngineHandle[] = []
  let prom: PrometheusHandle | undefined
  try {
    const [fleet, one] = await Promise.all([fleetEngine(PROM_TARGETS, options.latencyMs), fleetEngine(1, options.latencyMs)])
    engines.push(fleet, one)
    await Promise.all(engines.map((e) => e.waitReady(60_000)))
    prom = await startPrometheus({
      targets: [...fleet.members!, ...one.members!].map((m) => new URL(m.baseUrl).host),
      scrapeInterval: `${SCRAPE_S}s`,
    })
    await prom.waitScraped(60_000)
    const run = async (engine: EngineHandle, single: boolean): Promise<PromRun> => {
      const report = join(options.dir, `prom-${engine.members!.length}.json`)
      const before = await answered(prom!)
      let r
      if (single) {
        r = await timedVerify([
          ...memberArgv(engine, engine.members![0]!),
          ...FLAGS,
          ...WINDOW,
          '--prometheus-url',
          prom!.url,
          '--report',
          report,
        ])
      } else {
        const file = join(options.dir, 'prom-targets.yaml')
        writeFileSync(file, JSON.stringify({ targets: engine.members!.map((m) => memberEntry(engine, m)) }))
        r = await timedVerify(['--targets', file, ...FLAGS, ...WINDOW, '--prometheus-url', prom!.url, '--report', report])
      }
      const sent = (await answered(prom!)) - before
      const doc = JSON.parse(readFileSync(report, 'utf8')) as Report | FleetReport
      const reports = 'targets' in doc ? (doc as FleetReport).targets.map((t) => t.report) : [doc as Report]
      const verdicts: Record<string, number> = {}
      for (const x of reports) verdicts[x.verdict] = (verdicts[x.verdict] ?? 0) + 1
      const out = { targets: reports.length, ms: r.ms, answered: sent, verdicts, meters: reports.map(meterOf) }
      options.log(
        `  prometheus, ${out.targets} target(s): ${(out.ms / 1000).toFixed(2)} s, ${sent} queries answered, ${JSON.stringify(verdicts)}, longest wait for a scrape ${Math.max(...out.meters.map((m) => m.waited?.ms ?? 0))} ms`,
      )
      return out
    }
    return { one: await run(one, true), fleet: await run(fleet, false), scrapeS: SCRAPE_S }
  } finally {
    await Promise.allSettled([prom?.stop(), ...engines.map((e) => e.stop())])
  }
}
