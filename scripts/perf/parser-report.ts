// Measure 4's rows of the perf table, its "not met" note and its section of docs/perf.md.
import type { ParserResult, ParserSide, ParserSize } from './parser.ts'
import type { Row } from './report.ts'
import { fixed, max, median, min } from './stats.ts'

const MB = 1e6

/** The throughput each page must reach (issue 25 goal 5 for the 30 MB page and the wide line). */
function target(size: ParserSize): number {
  return size.kind === 'wide' ? 100 : size.bytes > 10 * MB ? 400 : 50
}

const mbps = (size: ParserSize, ms: number): number => size.bytes / MB / (ms / 1000)

export function parserRows(parser: ParserResult): Row[] {
  const out: Row[] = []
  for (const size of parser.sizes) {
    const ours = median(size.ours.warmMs)
    const read = median(size.oursRead.warmMs)
    const npm = median(size.npm.warmMs)
    const of = (ms: number): string => fixed(mbps(size, ms), 0)
    out.push({
      measure: `4. Parser, ${size.label}${size.kind === 'page' ? ' page' : ''}: throughput of helpers/prom/parse.ts (warm)`,
      value: `${of(ours)} MB/s (fastest ${of(min(size.ours.warmMs))}; by CPU time ${of(median(size.ours.warmCpuMs))}; cold first parse ${of(median(size.ours.coldMs))}); with every sample and label read ${of(read)} MB/s`,
      target: `≥ ${target(size)} MB/s`,
      met: mbps(size, ours) >= target(size),
    })
    // Like for like: the npm parser hands back every sample, so ours is timed reading them all.
    out.push({
      measure: `4. Parser, ${size.label}${size.kind === 'page' ? ' page' : ''}: speed-up over parse-prometheus-text-format, every sample read`,
      value: `${fixed(npm / read)}× (fastest vs fastest ${fixed(min(size.npm.warmMs) / min(size.oursRead.warmMs))}×; CPU time ${fixed(median(size.npm.warmCpuMs) / median(size.oursRead.warmCpuMs))}×): ${fixed(read, 1)} ms vs ${fixed(npm, 1)} ms; the parse alone ${fixed(npm / ours)}×`,
      target: size.kind === 'page' ? '≥ 3×' : 'report',
      met: size.kind === 'page' ? npm / read >= 3 : null,
    })
    out.push({
      measure: `4. Parser, ${size.label}${size.kind === 'page' ? ' page' : ''}: peak memory of one parse (RSS rise)`,
      value: `ours ${fixed(median(size.ours.peakDeltaMiB), 0)} MiB (every sample read ${fixed(median(size.oursRead.peakDeltaMiB), 0)}), npm ${fixed(median(size.npm.peakDeltaMiB), 0)} MiB`,
      target: 'report',
      met: null,
    })
  }
  return out
}

/** Why a measure-4 row missed, for the "not met" list. */
export function parserMiss(parser: ParserResult, measure: string, load: string, cores: number): string {
  const size = parser.sizes.find((s) => measure.startsWith(`4. Parser, ${s.label}${s.kind === 'page' ? ' page' : ''}:`))
  if (!size) return ''
  const side = measure.includes('speed-up') ? size.oursRead : size.ours
  return ` Judged on median wall time per parse; by main-thread CPU time ours is ${fixed(mbps(size, median(side.warmCpuMs)), 0)} MB/s. The machine's ${cores} cores are shared (1-minute load ${load} through this section): ours took ${fixed(min(side.warmMs), 0)}–${fixed(max(side.warmMs), 0)} ms per parse and the npm parser ${fixed(min(size.npm.warmMs), 0)}–${fixed(max(size.npm.warmMs), 0)} ms across the samples, so these figures move from run to run; see section 4.`
}

function cells(size: ParserSize, name: string, side: ParserSide): string {
  const m = median(side.warmMs)
  return `| ${size.label} | ${size.bytes} | ${size.series} | ${name} | ${fixed(m, 1)} (${fixed(min(side.warmMs), 1)}–${fixed(max(side.warmMs), 1)}) | ${fixed(median(side.warmCpuMs), 1)} | ${fixed(median(side.coldMs), 0)} ms | ${fixed(mbps(size, m), 0)} | ${fixed(median(side.peakDeltaMiB), 0)} MiB (peak RSS ${fixed(median(side.peakRssMiB), 0)} MiB) | ${fixed(median(side.retainedMiB), 1)} MiB |`
}

export function parserSection(parser: ParserResult): string {
  const sizes = parser.sizes
  const page = sizes.find((s) => s.bytes > 10 * MB)
  return `<a id="parser"></a>
## 4: parser

Pages are generated in-process (\`scripts/perf/prom-page.ts\`) in the shape prometheus_client prints
for vLLM: \`vllm:\` gauges, counters as \`_total\` plus a \`_created\` gauge family, and thirteen vLLM v1
histogram families with sorted \`engine\`/\`model_name\`/\`le\` labels, each followed by its \`_created\`
gauge family; the label sets are a data-parallel deployment (8 engine ranks × N model names) scaled
to the page size. The page is kept parseable by parse-prometheus-text-format: it throws on a space
after a comma inside braces, on \`# HELP name\` without text and on doubled spaces in \`# TYPE\`, all
legal in the format, so the generator writes none of them. The third page is the hostile line:
one sample \`wide{l0="v",…,l99999="v"} 1\`, 100,000 distinct labels in about 1 MB (\`wideLine\`).
helpers/prom/parse.ts reports 0 malformed lines on all three. Note that the two parsers do not
produce the same thing: the npm parser merges all series of a labelled histogram into one
\`buckets\` map (labels, \`_sum\` and \`_count\` lost), while helpers/prom/parse.ts keeps every sample
with its labels.

Four readings per page, each in its own child process (\`node --expose-gc scripts/perf/parser-child.ts\`)
per round, ${parser.rounds} rounds alternating which goes first:
- **helpers/prom/parse.ts**: \`parsePrometheusText(page)\` returning. Every line is read and
  checked (malformed lines are in \`errors\`); a text-format family keeps its samples as numbers
  (\`helpers/prom/sample-log.ts\`) and builds the Sample objects when its \`samples\` is first read,
  and a set of more than 32 labels builds its label object when \`labels\` is first read.
- **every sample read**: the same, then every family's \`samples\` and every sample's \`labels\`
  read: what the npm parser hands back, so this is the like-for-like comparison.
- **parse-prometheus-text-format** 1.1.1.
- **with the meter's \`keep\`** (informational): as armproof's meter step calls it, storing only the
  about 10 series the step reads.

In each child: the page is read from a file, GC runs, RSS is read; the first (cold) parse is timed
and the process's peak RSS (\`getrusage\` maxrss) after it, minus the RSS before it, is its peak
memory; then after one untimed warm-up parse, ${parser.samplesPerRound} warm samples, each ≥ 200 ms of back-to-back
parses, give ms per parse, in wall time (what the targets are judged on) and in the main
thread's CPU time (\`process.threadCpuUsage()\`, which time spent waiting for one of the shared
cores does not inflate; GC helper threads are not in it). Throughput = page bytes ÷ median warm
ms (MB = 10⁶ bytes). Retained = heap plus ArrayBuffers held by the result after GC.

| page | bytes | series per family | parser | warm ms/parse (median; min–max) | main-thread CPU ms/parse (median) | cold first parse | MB/s (warm median) | peak RSS rise | retained |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${sizes
  .flatMap((s) => [
    cells(s, `helpers/prom/parse.ts (${s.ours.found.samples} samples, ${s.ours.found.errors} errors)`, s.ours),
    cells(s, 'helpers/prom/parse.ts, every sample read', s.oursRead),
    cells(s, `parse-prometheus-text-format (${s.npm.found.families} families)`, s.npm),
    cells(s, "helpers/prom/parse.ts with the meter's `keep` (informational)", s.oursKeep),
  ])
  .join('\n')}

Where the time goes (\`node --cpu-prof\`${page ? `, the ${page.label} page` : ''}): before this parser kept samples as
numbers, building every Sample object, label object and raw string, and collecting them, took
more than half of a parse (a parse that stores nothing took 60 ms of 140). Now the parse is the
scan itself: the label sets (one string comparison per \`name="value"\` pair, each distinct pair
checked once per page), the metric names, the values, the line loop, and the typed-array records.
Reading every sample builds the objects the old parser built on every parse. On the wide line
the old parser spent 51% in inserting 100,000 keys into one object (a dictionary) and 20% in a
set of fresh name strings for the duplicate check: the check now hashes name positions in the
page, and the object is built only when read (reading it is most of the "every sample read" time there).
`
}
