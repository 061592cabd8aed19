// One parser, one page, one process (so the two parsers never share a heap):
//   node --expose-gc scripts/perf/parser-child.ts <ours|ours-read|npm|ours-keep> <page file> <samples>
// Prints one JSON line: the cold first parse, its peak memory, and warm timing samples (after one
// untimed warm-up parse). `ours` is parsePrometheusText() returning (a text-format family builds
// its Sample objects when its `samples` is first read); `ours-read` is that plus reading every
// family's samples and every sample's labels, which is what the npm parser hands back;
// `ours-keep` is helpers/prom/parse.ts as the meter step calls it: every line validated, only the
// samples it needs stored.
import { readFileSync } from 'node:fs'
import parseNpm from 'parse-prometheus-text-format'
import { parsePrometheusText } from '../../helpers/prom/parse.ts'
import { builtinProfile } from '../../helpers/profiles/load.ts'
import { allTrafficNames, trafficNames } from '../../helpers/steps/meter/names.ts'

export type ParserName = 'ours' | 'ours-read' | 'npm' | 'ours-keep'

export interface ChildResult {
  parser: ParserName
  bytes: number
  /** What the parse found: samples (ours) or families (npm), and ours' malformed lines. */
  found: { samples?: number; families: number; errors?: number }
  coldMs: number
  /** Process RSS just before the first parse (page loaded, after GC), MiB. */
  rssBeforeMiB: number
  /** The process's peak RSS up to the end of the first parse (getrusage maxrss), MiB. */
  peakRssMiB: number
  /** Memory held by the parse result alone (heapUsed + arrayBuffers after GC, result alive, minus before). */
  retainedMiB: number
  /** Warm ms per parse, one value per sample. */
  warmMs: number[]
  /** The same samples in CPU time of the main thread (user + system), which waiting for a core does not inflate. */
  warmCpuMs: number[]
}

const MIB = 1024 * 1024
const gc = (globalThis as { gc?: () => void }).gc
const collect = (): void => {
  if (!gc) throw new Error('run with --expose-gc')
  gc()
  gc()
}

const [which, file, samplesArg] = process.argv.slice(2)
if ((which !== 'ours' && which !== 'ours-read' && which !== 'npm' && which !== 'ours-keep') || !file) {
  process.stderr.write('usage: node --expose-gc scripts/perf/parser-child.ts <ours|ours-read|npm|ours-keep> <page file> <samples>\n')
  process.exit(2)
}
const samples = Number(samplesArg ?? 5)
// What the meter step keeps (helpers/steps/meter/metrics.ts): the knob's meter and the traffic and step-time series.
const radiance = builtinProfile('radiance').engine
const wanted = new Set<string>([
  'radiance:engine_steps_held_total',
  ...allTrafficNames(trafficNames(radiance)),
  ...Object.values(radiance.metrics.stepTime ?? {}),
])
/** Makes what a caller of the npm parser gets: every family's samples, every sample's label object (built on first read). */
function readAll(page: ReturnType<typeof parsePrometheusText>): typeof page {
  for (const family of page.families)
    for (const sample of family.samples) if (sample.labels === undefined) throw new Error(`${sample.name} has no labels`)
  return page
}
const parse =
  which === 'ours'
    ? (t: string): unknown => parsePrometheusText(t)
    : which === 'ours-read'
      ? (t: string): unknown => readAll(parsePrometheusText(t))
      : which === 'ours-keep'
        ? (t: string): unknown => parsePrometheusText(t, { keep: (name) => wanted.has(name) })
        : (t: string): unknown => parseNpm(t)

const text = readFileSync(file, 'latin1')
collect()
const rssBefore = process.memoryUsage().rss
// The heap and the ArrayBuffers (sample-log.ts keeps a family's numbers in typed arrays).
const held = (): number => process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers
const heapBefore = held()
let t0 = performance.now()
let result: unknown = parse(text)
const coldMs = performance.now() - t0
const peakRss = process.resourceUsage().maxRSS * 1024
collect()
const retained = held() - heapBefore
const found =
  which !== 'npm'
    ? (() => {
        const p = result as ReturnType<typeof parsePrometheusText>
        return { samples: p.sampleCount, families: p.families.length, errors: p.errors.length }
      })()
    : { families: (result as unknown[]).length }
result = undefined
collect()
parse(text) // one untimed warm-up parse: the samples below are steady state

// Warm samples: each at least ~200 ms of back-to-back parses, so a 1 MB page is timed over many runs.
const warmMs: number[] = []
const warmCpuMs: number[] = []
for (let s = 0; s < samples; s++) {
  collect()
  let n = 0
  const cpu0 = process.threadCpuUsage()
  t0 = performance.now()
  let elapsed = 0
  do {
    result = parse(text)
    result = undefined
    n++
    elapsed = performance.now() - t0
  } while (elapsed < 200)
  const cpu = process.threadCpuUsage(cpu0)
  warmMs.push(elapsed / n)
  warmCpuMs.push((cpu.user + cpu.system) / 1000 / n)
}

const out: ChildResult = {
  parser: which,
  bytes: Buffer.byteLength(text, 'latin1'),
  found,
  coldMs,
  rssBeforeMiB: rssBefore / MIB,
  peakRssMiB: peakRss / MIB,
  retainedMiB: retained / MIB,
  warmMs,
  warmCpuMs,
}
process.stdout.write(`${JSON.stringify(out)}\n`)
