// Measures 6 and 7: a fleet of reference engines (each --completion-latency-ms per completion)
// verified in one run (`pnpm verify --targets FILE --concurrency N`) next to one target alone,
// the completions each target cost, the run's peak memory (RSS of verify and every process it
// started, summed, sampled every 100 ms), and the Prometheus meter's queries per poll.
import { readdirSync, readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { startEngine, type EngineHandle } from '../../engine/launch.ts'
import type { FleetReport } from '../../helpers/fleet/report.ts'
import type { Report } from '../../helpers/report/json.ts'
import { engineEntry } from '../../test/support/fleet.ts'
import { check, PROMETHEUS } from '../../test/support/prerequisites.ts'
import { startPrometheus } from '../../test/support/prometheus.ts'
import { ROOT } from '../../test/support/run-verify.ts'
import { median } from './stats.ts'

export interface FleetRep {
  singleMs: number
  fleetMs: number
  /** Peak of the summed RSS of verify and its descendants, MiB. */
  fleetPeakRssMiB: number
  singlePeakRssMiB: number
  /** The same, armproof's own processes only (verify, which runs the arm suite in its own process, and any vitest worker; not host commands). */
  fleetOwnPeakRssMiB: number
  singleOwnPeakRssMiB: number
  /** Chat completions each engine served during the fleet run. */
  completions: number[]
  verdicts: Record<string, number>
}

export interface FleetResult {
  targets: number
  concurrency: number
  latencyMs: number
  flags: string[]
  reps: FleetRep[]
  prometheus: { polls: number; queries: number; verdict: string } | { skipped: string }
}

const PAGE = 4096
const FLAGS = ['--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--host', 'local', '--no-dropin-check', '--meter-window', '2s', '--health-budget', '8s', '--probe-timeout', '30s', '--host-timeout', '10s']

/** Summed RSS (MiB) of `pid` and all its descendants, from /proc: all of them, and armproof's own (verify, and any vitest worker: not the host commands they run). */
function treeRssMiB(pid: number): { all: number; own: number } {
  const parent = new Map<number, number>()
  const rss = new Map<number, number>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      parent.set(Number(name), Number(fields[1]))
      rss.set(Number(name), Number(fields[21]) * PAGE)
    } catch {
      // gone meanwhile
    }
  }
  const inTree = (p: number): boolean => {
    for (let q = p, n = 0; q > 1 && n < 64; q = parent.get(q) ?? 0, n++) if (q === pid) return true
    return false
  }
  let sum = 0
  let own = 0
  for (const [p, bytes] of rss) {
    if (!inTree(p)) continue
    sum += bytes
    let cmd = ''
    try {
      cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8')
    } catch {
      // gone meanwhile
    }
    if (p === pid || cmd.includes('vitest')) own += bytes
  }
  return { all: sum / 2 ** 20, own: own / 2 ** 20 }
}

/** `node bin/verify.ts args…` as a child; its wall time and the peak RSS of its process tree. */
async function timedVerify(args: readonly string[], env: Record<string, string> = {}): Promise<{ ms: number; peakMiB: number; ownPeakMiB: number; exitCode: number; stdout: string }> {
  const started = performance.now()
  const child = execa(process.execPath, [join(ROOT, 'bin/verify.ts'), ...args], { cwd: ROOT, reject: false, env: { CI: 'true', VERIFY_NO_DOTENV: '1', ...env }, stdin: 'ignore', timeout: 300_000 })
  let peak = 0
  let ownPeak = 0
  const timer = setInterval(() => {
    if (!child.pid) return
    const now = treeRssMiB(child.pid)
    peak = Math.max(peak, now.all)
    ownPeak = Math.max(ownPeak, now.own)
  }, 100)
  const r = await child
  clearInterval(timer)
  return { ms: performance.now() - started, peakMiB: peak, ownPeakMiB: ownPeak, exitCode: r.exitCode ?? -1, stdout: String(r.stdout) }
}

const served = async (e: EngineHandle): Promise<number> => ((await e.stats()) as { served: { chat_completions: number } }).served.chat_completions

export async function measureFleet(options: { targets: number; concurrency: number; latencyMs: number; reps: number; log: (line: string) => void }): Promise<FleetResult> {
  const { log } = options
  const dir = mkdtempSync(join(tmpdir(), 'armproof-perf-fleet-'))
  const engines: EngineHandle[] = []
  try {
    const args = ['--prefill-interleave', '1', '--completion-latency-ms', String(options.latencyMs)]
    engines.push(...(await Promise.all(Array.from({ length: options.targets }, (_, i) => startEngine({ svc: `perf-fleet-${i}`, processName: `rpf-${i}`, args })))))
    await Promise.all(engines.map((e) => e.waitReady(30_000)))
    const file = join(dir, 'targets.yaml')
    writeFileSync(file, JSON.stringify({ targets: engines.map((e) => engineEntry(e)) }, null, 2))
    const one = engines[0]!
    const single = ['--svc', one.svc, '--base-url', one.baseUrl, '--process', one.processName, '--ledger-cmd', `${one.binDir}/podman logs --tail 100000 {svc}`, '--help-cmd', `${one.binDir}/podman exec {svc} radiance --help`, ...FLAGS]
    const reps: FleetRep[] = []
    for (let k = 0; k < options.reps; k++) {
      const alone = await timedVerify([...single, '--report', join(dir, `single-${k}.json`)])
      const aloneReport = JSON.parse(readFileSync(join(dir, `single-${k}.json`), 'utf8')) as Report
      if (aloneReport.verdict !== 'green') throw new Error(`the lone target was ${aloneReport.verdict}, not green:\n${alone.stdout.slice(-2000)}`)
      const before = await Promise.all(engines.map(served))
      const fleet = await timedVerify(['--targets', file, '--concurrency', String(options.concurrency), ...FLAGS, '--report', join(dir, `fleet-${k}.json`)])
      const after = await Promise.all(engines.map(served))
      const report = JSON.parse(readFileSync(join(dir, `fleet-${k}.json`), 'utf8')) as FleetReport
      const verdicts: Record<string, number> = {}
      for (const t of report.targets) verdicts[t.report.verdict] = (verdicts[t.report.verdict] ?? 0) + 1
      reps.push({ singleMs: alone.ms, fleetMs: fleet.ms, fleetPeakRssMiB: fleet.peakMiB, singlePeakRssMiB: alone.peakMiB, fleetOwnPeakRssMiB: fleet.ownPeakMiB, singleOwnPeakRssMiB: alone.ownPeakMiB, completions: after.map((a, i) => a - before[i]!), verdicts })
      log(`  rep ${k + 1}: one target ${(alone.ms / 1000).toFixed(2)} s, ${options.targets} targets ${(fleet.ms / 1000).toFixed(2)} s (exit ${fleet.exitCode}, ${JSON.stringify(verdicts)}), peak RSS ${fleet.peakMiB.toFixed(0)} MiB (armproof's own ${fleet.ownPeakMiB.toFixed(0)} MiB)`)
    }
    let prometheus: FleetResult['prometheus']
    const missing = check(PROMETHEUS).missing
    if (missing.length > 0) {
      prometheus = { skipped: `prometheus not installed (${PROMETHEUS.install})` }
    } else {
      const prom = await startPrometheus({ targets: [new URL(one.baseUrl).host] })
      try {
        await prom.waitScraped(20_000)
        const path = join(dir, 'prom.json')
        await timedVerify([...single.map((a) => (a === '2s' ? '12s' : a)), '--prometheus-url', prom.url, '--report', path])
        const r = JSON.parse(readFileSync(path, 'utf8')) as Report
        const p = r.steps.find((s) => s.id === 'meter')!.evidence.prometheus as { polls: number; queries: number }
        prometheus = { polls: p.polls, queries: p.queries, verdict: r.verdict }
        log(`  prometheus: ${p.queries} queries over ${p.polls} polls, ${r.verdict}`)
      } finally {
        await prom.stop()
      }
    }
    return { targets: options.targets, concurrency: options.concurrency, latencyMs: options.latencyMs, flags: FLAGS, reps, prometheus }
  } finally {
    await Promise.allSettled(engines.map((e) => e.stop()))
    rmSync(dir, { recursive: true, force: true })
  }
}

export function fleetRows(f: FleetResult): Array<{ measure: string; value: string; target: string; met: boolean | null }> {
  const ratio = median(f.reps.map((r) => r.fleetMs / r.singleMs))
  const counts = f.reps.flatMap((r) => r.completions)
  const rows = [
    {
      measure: `6. Fleet: ${f.targets} targets in one run (--concurrency ${f.concurrency}) ÷ one target alone, ${f.latencyMs} ms per completion`,
      value: `${ratio.toFixed(2)}× (min ${Math.min(...f.reps.map((r) => r.fleetMs / r.singleMs)).toFixed(2)}×): ${(median(f.reps.map((r) => r.fleetMs)) / 1000).toFixed(2)} s vs ${(median(f.reps.map((r) => r.singleMs)) / 1000).toFixed(2)} s`,
      target: '≤ 1.5×',
      met: ratio <= 1.5,
    },
    {
      measure: '6. Fleet: chat completions per target',
      value: counts.every((c) => c === 3) ? `3 on each of ${f.targets} targets, every run` : `${Math.min(...counts)}–${Math.max(...counts)}`,
      target: 'exactly 3',
      met: counts.every((c) => c === 3),
    },
    {
      measure: `6. Fleet: peak RSS of the run (verify and every process it started), ${f.targets} targets vs one`,
      value: `${median(f.reps.map((r) => r.fleetPeakRssMiB)).toFixed(0)} MiB vs ${median(f.reps.map((r) => r.singlePeakRssMiB)).toFixed(0)} MiB; armproof's own processes ${median(f.reps.map((r) => r.fleetOwnPeakRssMiB)).toFixed(0)} MiB vs ${median(f.reps.map((r) => r.singleOwnPeakRssMiB)).toFixed(0)} MiB`,
      target: 'report',
      met: null,
    },
  ]
  const p = f.prometheus
  rows.push('skipped' in p
    ? { measure: '7. Prometheus meter: queries per poll', value: `not measured: ${p.skipped}`, target: '≤ 2', met: null }
    : { measure: '7. Prometheus meter: queries per poll', value: `${(p.queries / p.polls).toFixed(2)} (${p.queries} queries over ${p.polls} polls; verdict ${p.verdict})`, target: '≤ 2', met: p.queries <= 2 * p.polls })
  return rows
}

export function fleetSection(f: FleetResult): string {
  return `## 6 and 7: a fleet in one run, and the meter through Prometheus

Setup: ${f.targets} reference engines (\`engine/launch.ts\`), each \`--prefill-interleave 1 --completion-latency-ms ${f.latencyMs}\`,
up before each run, each its own process name and host-command shims. One target alone is
\`pnpm verify --svc perf-fleet-0 … ${f.flags.join(' ')}\`; the fleet is a targets file listing all
${f.targets} (the same options) run as \`pnpm verify --targets FILE --concurrency ${f.concurrency} ${f.flags.join(' ')}\`:
one node process and one vitest start, a \`describe\` per target. Wall time is spawn to exit of
\`node bin/verify.ts\`; peak RSS is the largest sum of the RSS of that process and all its
descendants (host commands included: here each target's \`podman exec … radiance --help\` is a
node process of the reference engine), sampled every 100 ms from /proc, and the same for
armproof's own processes only (verify, which runs the arm suite in its own process). Completions are read from
each engine's /stats before and after the fleet run. The contract's default --concurrency is 8;
with 8, ${f.targets} targets of ≈ one slowest probe each run in ⌈${f.targets}/8⌉ waves.

| repetition | one target | ${f.targets} targets | ratio | peak RSS, all (fleet / one) | peak RSS, armproof's own (fleet / one) | completions per target | verdicts |
| --- | --- | --- | --- | --- | --- | --- | --- |
${f.reps.map((r, i) => `| ${i + 1} | ${(r.singleMs / 1000).toFixed(2)} s | ${(r.fleetMs / 1000).toFixed(2)} s | ${(r.fleetMs / r.singleMs).toFixed(2)}× | ${r.fleetPeakRssMiB.toFixed(0)} / ${r.singlePeakRssMiB.toFixed(0)} MiB | ${r.fleetOwnPeakRssMiB.toFixed(0)} / ${r.singleOwnPeakRssMiB.toFixed(0)} MiB | ${[...new Set(r.completions)].join(', ')} | ${Object.entries(r.verdicts).map(([v, n]) => `${n} ${v}`).join(', ')} |`).join('\n')}

Measure 7: one target verified with \`--prometheus-url\` against Debian's Prometheus on loopback
scraping the engine every second (\`test/support/prometheus.ts\`), \`--meter-window 12s\`; the meter
step's evidence counts its polls and the queries it sent (an instant query and a range query per
poll, helpers/steps/meter/prometheus-source.ts). ${'skipped' in f.prometheus ? f.prometheus.skipped : `${f.prometheus.queries} queries over ${f.prometheus.polls} polls (verdict ${f.prometheus.verdict}).`}
`
}
