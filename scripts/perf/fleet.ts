// Measures 6 and 7: fleets verified in one run (`pnpm verify --targets FILE`, the default
// --concurrency: as many at once as the run can afford) against the reference engine's fleet in one
// process (engine/fleet-main.ts: each target its own port and counters, one command line and
// ledger), next to one target alone: 200 targets ÷ one, side by side in alternation; then the
// ladder of fleet sizes 1 … 1,000, each run's wall time, peak memory and host calls per target;
// then the meter through Prometheus for a fleet of 100 (./fleet-prom.ts).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { EngineHandle } from '../../engine/launch.ts'
import type { FleetMember } from '../../engine/fleet.ts'
import type { FleetReport } from '../../helpers/fleet/report.ts'
import type { Report } from '../../helpers/report/json.ts'
import { oneLine, summarize } from '../../helpers/report/_summary.ts'
import { countingShell, fleetEngine, FLAGS, memberArgv, memberEntry, timedVerify, type TreePeak } from './fleet-run.ts'

export { FLAGS }
import { measureFleetProm, type FleetPromResult } from './fleet-prom.ts'

export const LADDER = [1, 10, 50, 100, 200, 500, 1000] as const
export const RATIO_TARGETS = 200

export interface SizeRun {
  targets: number
  ms: number
  peak: TreePeak
  exitCode: number
  verdicts: Record<string, number>
  /** Chat completions each target's engine served in the run: the fewest and the most. */
  completions: { min: number; max: number }
  /** Host calls armproof started (`sh -c`), by kind; null when not counted. */
  calls: Record<string, number> | null
  /** The most targets the run let in at once (fleet.admission.peak). */
  admitted: number | null
  /** 1-minute load average when the run began. */
  load: number
  /** Why targets were not green: each distinct "step verdict: observed" (cut to 160 characters) and how many targets said it; the first 5. */
  notGreen: Array<{ said: string; targets: number }>
}

export interface FleetResult {
  latencyMs: number
  flags: readonly string[]
  ratio: Array<{ one: SizeRun; fleet: SizeRun }>
  ladder: SizeRun[]
  prometheus: FleetPromResult
}

const served = async (m: FleetMember): Promise<number> => {
  const res = await fetch(`${m.baseUrl}/stats`, { signal: AbortSignal.timeout(10_000) })
  return ((await res.json()) as { served: { chat_completions: number } }).served.chat_completions
}

function notGreenOf(reports: readonly Report[]): SizeRun['notGreen'] {
  const said = new Map<string, number>()
  for (const r of reports.filter((x) => x.verdict !== 'green')) {
    // Why it is not green, as the CLI's own verdict line says it (the step that explains it).
    const text = `${r.verdict}: ${oneLine(summarize(r).why)}`.slice(0, 160)
    said.set(text, (said.get(text) ?? 0) + 1)
  }
  return [...said]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([text, targets]) => ({ said: text, targets }))
}

function verdictsOf(reports: readonly Report[]): Record<string, number> {
  const v: Record<string, number> = {}
  for (const r of reports) v[r.verdict] = (v[r.verdict] ?? 0) + 1
  return v
}

/** All `engine`'s members as one fleet run; `single`: its one member as a one-target run instead. */
export async function runOnce(
  engine: EngineHandle,
  dir: string,
  options: { single?: boolean; count?: ReturnType<typeof countingShell>; extra?: readonly string[] } = {},
): Promise<SizeRun> {
  const members = engine.members!
  const report = join(dir, `report-${members.length}-${Date.now()}.json`)
  const load = loadavg()[0]!
  const before = await Promise.all(members.map(served))
  options.count?.reset()
  const env = options.count?.env ?? {}
  let run
  if (options.single) {
    run = await timedVerify([...memberArgv(engine, members[0]!), ...FLAGS, ...(options.extra ?? []), '--report', report], env)
  } else {
    const file = join(dir, `targets-${members.length}.yaml`)
    writeFileSync(file, JSON.stringify({ targets: members.map((m) => memberEntry(engine, m)) }))
    run = await timedVerify(['--targets', file, ...FLAGS, ...(options.extra ?? []), '--report', report], env)
  }
  const after = await Promise.all(members.map(served))
  const doc = JSON.parse(readFileSync(report, 'utf8')) as Report | FleetReport
  rmSync(report, { force: true })
  const fleet = 'targets' in doc ? (doc as FleetReport) : null
  const reports = fleet ? fleet.targets.map((t) => t.report) : [doc as Report]
  const counts = after.map((a, i) => a - before[i]!)
  return {
    targets: members.length,
    ms: run.ms,
    peak: run.peak,
    exitCode: run.exitCode,
    verdicts: verdictsOf(reports),
    notGreen: notGreenOf(reports),
    completions: { min: Math.min(...counts), max: Math.max(...counts) },
    calls: options.count ? options.count.calls() : null,
    admitted: fleet?.fleet.admission?.peak ?? null,
    load,
  }
}

export async function measureFleet(options: { latencyMs: number; reps: number; log: (line: string) => void }): Promise<FleetResult> {
  const { log, latencyMs } = options
  const dir = mkdtempSync(join(tmpdir(), 'armproof-perf-fleet-'))
  const started: EngineHandle[] = []
  const up = async (size: number): Promise<EngineHandle> => {
    const e = await fleetEngine(size, latencyMs)
    started.push(e)
    await e.waitReady(60_000)
    return e
  }
  const line = (r: SizeRun, what: string) => {
    log(
      `  ${what}: ${(r.ms / 1000).toFixed(2)} s, exit ${r.exitCode}, ${JSON.stringify(r.verdicts)}, peak RSS ${r.peak.ownMiB.toFixed(0)} MiB (spawner ${r.peak.spawnerMiB.toFixed(0)}, all ${r.peak.allMiB.toFixed(0)}), load ${r.load.toFixed(2)}${r.calls ? `, host calls ${JSON.stringify(r.calls)}` : ''}`,
    )
    for (const n of r.notGreen) log(`    not green (${n.targets}): ${n.said}`)
  }
  try {
    // 200 targets ÷ one, side by side: the order alternates, so neither always runs on a warmer machine.
    const [one, many] = [await up(1), await up(RATIO_TARGETS)]
    const ratio: FleetResult['ratio'] = []
    for (let k = 0; k < options.reps; k++) {
      const alone = () => runOnce(one, dir, { single: true })
      const together = () => runOnce(many, dir)
      if (k % 2 === 0) {
        const a = await alone()
        ratio.push({ one: a, fleet: await together() })
      } else {
        const b = await together()
        ratio.push({ one: await alone(), fleet: b })
      }
      line(ratio.at(-1)!.one, `rep ${k + 1}: one target`)
      line(ratio.at(-1)!.fleet, `rep ${k + 1}: ${RATIO_TARGETS} targets`)
    }
    await Promise.all(started.splice(0).map((e) => e.stop()))
    // The ladder: each size once, its host calls counted.
    const count = countingShell(dir)
    const ladder: SizeRun[] = []
    for (const size of LADDER) {
      const engine = await up(size)
      const r = await runOnce(engine, dir, { count })
      ladder.push(r)
      line(r, `${size} target(s)`)
      await Promise.all(started.splice(0).map((e) => e.stop()))
    }
    const prometheus = await measureFleetProm({ latencyMs, dir, log })
    return { latencyMs, flags: FLAGS, ratio, ladder, prometheus }
  } finally {
    await Promise.allSettled(started.map((e) => e.stop()))
    rmSync(dir, { recursive: true, force: true })
  }
}
