// One hostile /metrics line: a single sample with 100,000 distinct labels (about 1 MB), the
// shape that made the duplicate-label check quadratic. Prints how long helpers/prom/parse.ts takes to
// parse it, in both formats, and one line with a duplicated last label (which must be refused).
// A benchmark, not a test: no time limit is asserted anywhere.
//
//   node scripts/perf/wide-line.ts [--labels N] [--reps N]
import { parseArgs } from 'node:util'
import { parsePrometheusText } from '../../helpers/prom/parse.ts'
import { wideLine } from './prom-page.ts'

const { values } = parseArgs({ options: { labels: { type: 'string', default: '100000' }, reps: { type: 'string', default: '3' } } })
const labels = Number(values.labels)
const reps = Number(values.reps)
if (!Number.isInteger(labels) || labels < 1) throw new Error(`--labels must be an int ≥ 1, got ${values.labels}`)
if (!Number.isInteger(reps) || reps < 1) throw new Error(`--reps must be an int ≥ 1, got ${values.reps}`)

function time(page: string, format: 'text' | 'openmetrics'): { ms: number; labels: number; errors: number } {
  const t0 = performance.now()
  const parsed = parsePrometheusText(format === 'openmetrics' ? `${page}# EOF\n` : page, { format })
  const ms = performance.now() - t0
  return { ms, labels: Object.keys(parsed.samples('wide')[0]?.labels ?? {}).length, errors: parsed.errors.length }
}

const page = wideLine(labels)
const dup = wideLine(labels, true)
process.stdout.write(
  `one line of ${(Buffer.byteLength(page) / 1e6).toFixed(2)} MB with ${labels} labels, ${reps} rep(s), node ${process.version}\n`,
)
for (const [name, text, format] of [
  ['text', page, 'text'],
  ['openmetrics', page, 'openmetrics'],
  ['text, last label duplicated', dup, 'text'],
] as const) {
  const runs = Array.from({ length: reps }, () => time(text, format))
  const ms = runs.map((r) => r.ms).sort((a, b) => a - b)
  process.stdout.write(
    `${name.padEnd(28)} median ${ms[Math.floor(ms.length / 2)]!.toFixed(1)} ms (min ${ms[0]!.toFixed(1)}, max ${ms.at(-1)!.toFixed(1)}) · labels read ${runs[0]!.labels} · errors ${runs[0]!.errors}\n`,
  )
}
