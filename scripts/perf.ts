// `pnpm perf`: armproof's performance benchmark (not a test). Measures time to verdict against
// the reference engine next to sequential curl, verify's overhead over its slowest probe, a
// verdict's fixed cost (replay, and live on an instant engine) against a bare vitest run and
// `armproof --help` against `node -e 0`, the /metrics parser against parse-prometheus-text-format,
// what one verdict costs the endpoint, fleets in one run (200 targets next to one alone, sizes
// 1 … 1,000: wall time, memory, host calls) and the meter through Prometheus for a fleet of 100;
// prints the table and writes docs/perf.md and its picture of the fleet sizes, docs/perf-fleet.svg.
//
//   node scripts/perf.ts [--reps N] [--latency-ms MS] [--only live,replay,parser,fleet] [--no-write]
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, release, totalmem, type as osType } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { measureLive } from './perf/live.ts'
import { measureParser } from './perf/parser.ts'
import { measureFixedCost } from './perf/fixed-cost.ts'
import { LADDER, measureFleet } from './perf/fleet.ts'
import { PROM_TARGETS } from './perf/fleet-prom.ts'
import { FLEET_SVG, fleetSvg } from './perf/fleet-report.ts'
import { markdown, rows, textTable, type Machine, type Results } from './perf/report.ts'

const DOC = fileURLToPath(new URL('../docs/perf.md', import.meta.url))
const PARTS = ['live', 'replay', 'parser', 'fleet'] as const
type Part = (typeof PARTS)[number]

const { values } = parseArgs({
  options: {
    reps: { type: 'string', default: '3' },
    'latency-ms': { type: 'string', default: '3000' },
    only: { type: 'string' },
    'no-write': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
})
if (values.help) {
  process.stdout.write('usage: node scripts/perf.ts [--reps N (≥ 3)] [--latency-ms MS] [--only live,replay,parser,fleet] [--no-write]\n')
  process.exit(0)
}
const reps = Number(values.reps)
const latencyMs = Number(values['latency-ms'])
if (!Number.isInteger(reps) || reps < 3) throw new Error(`--reps must be an int ≥ 3, got ${values.reps}`)
if (!Number.isInteger(latencyMs) || latencyMs < 0) throw new Error(`--latency-ms must be an int ≥ 0, got ${values['latency-ms']}`)
const only = values.only ? values.only.split(',').map((s) => s.trim()) : [...PARTS]
for (const p of only) if (!(PARTS as readonly string[]).includes(p)) throw new Error(`--only takes ${PARTS.join(',')}, got ${p}`)
const want = (p: Part): boolean => only.includes(p)
const partial = only.length !== PARTS.length

const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')
const log = (line: string): void => void process.stderr.write(`${line}\n`)
const started = performance.now()
const loadBefore = load()
const results: Results = {}

const sectionLoad: Machine['sectionLoad'] = {}
const section = async (part: Part, title: string, body: () => Promise<void>): Promise<void> => {
  if (!want(part)) return
  log(title)
  const before = loadavg()[0]!
  await body()
  sectionLoad[part] = `${before.toFixed(2)} → ${loadavg()[0]!.toFixed(2)}`
}
await section('live', `live: reference engine, ${latencyMs} ms per completion, ${reps} repetitions`, async () => {
  results.live = await measureLive({ latencyMs, reps, log })
})
await section(
  'replay',
  `replay: a verdict's fixed cost (replay, a live verdict on an instant engine, --help) vs a trivial vitest run and node -e 0, ${Math.max(reps, 7)} repetitions`,
  async () => {
    results.replay = await measureFixedCost({ reps: Math.max(reps, 7), log })
  },
)
await section('parser', 'parser: generated vLLM-shaped pages of 1 MB and 30 MB, and one line of 100,000 labels', async () => {
  results.parser = await measureParser({ rounds: reps, samplesPerRound: 3, log })
})

await section(
  'fleet',
  `fleet: 200 targets vs one alone (${reps} repetitions), then fleets of ${LADDER.join(', ')} and a fleet of ${PROM_TARGETS} through Prometheus; ${latencyMs} ms per completion`,
  async () => {
    results.fleet = await measureFleet({ latencyMs, reps, log })
  },
)

const cpu = cpus()
const machine: Machine = {
  cores: cpu.length,
  cpu: cpu[0]?.model.trim() ?? 'unknown CPU',
  memGiB: totalmem() / 2 ** 30,
  node: process.version,
  os: `${osType()} ${release()}`,
  loadBefore,
  loadAfter: load(),
  sectionLoad,
  date: new Date().toISOString(),
  totalS: (performance.now() - started) / 1000,
}
const args = process.argv.slice(2)
const command = args.length === 0 ? 'pnpm perf' : `node scripts/perf.ts ${args.join(' ')}`
const table = rows(results)
process.stdout.write(`\n${textTable(table)}\n\n`)
process.stdout.write(
  `${cpu.length} cores, node ${process.version}, load ${loadBefore} → ${machine.loadAfter}, ${machine.totalS.toFixed(0)} s · reproduce: ${command}\n`,
)
if (!values['no-write'] && !partial) {
  mkdirSync(dirname(DOC), { recursive: true })
  writeFileSync(DOC, markdown(results, table, machine, command))
  if (results.fleet) writeFileSync(join(dirname(DOC), FLEET_SVG), fleetSvg(results.fleet))
  process.stdout.write(`wrote ${DOC}${results.fleet ? ` and ${FLEET_SVG}` : ''}\n`)
} else {
  process.stdout.write(`docs/perf.md not written (${partial ? '--only' : '--no-write'})\n`)
}
