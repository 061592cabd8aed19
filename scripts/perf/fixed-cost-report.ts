// Measure 3's rows of the perf table, its "not met" note and its section of docs/perf.md.
import type { Command, FixedResult } from './fixed-cost.ts'
import type { Breakdown } from './profile.ts'
import type { Row } from './report.ts'
import { fixed, median, ratioText, spread } from './stats.ts'

/** Issue 25 goal 4: each ratio, its baseline, its target. */
const RATIOS = [
  { key: 'replay', over: 'trivial', measure: '3. Replay verdict (the demo fixtures) ÷ bare vitest run of one trivial test', target: 1.2 },
  {
    key: 'live',
    over: 'trivial',
    measure: '3. Live verdict on an instant engine (0 ms per completion) ÷ bare vitest run of one trivial test',
    target: 1.3,
  },
  { key: 'help', over: 'node', measure: '3. `armproof --help` (the installed package) ÷ `node -e 0`', target: 2 },
] as const

const msOf = (f: FixedResult, c: Command): number[] => f.reps.map((r) => r[`${c}Ms`])

export function fixedCostRows(f: FixedResult): Row[] {
  const rows: Row[] = RATIOS.map(({ key, over, measure, target }) => {
    const ratio = spread(f.reps.map((r) => r[`${key}Ms`] / r[`${over}Ms`]))
    return {
      measure,
      value: `${ratioText(ratio)}: ${fixed(median(msOf(f, key)), 0)} ms vs ${fixed(median(msOf(f, over)), 0)} ms`,
      target: `≤ ${target}×`,
      met: ratio.median <= target,
    }
  })
  const verifyHelp = spread(f.reps.map((r) => r.verifyHelpMs / r.nodeMs))
  rows.push({
    measure: '3. `armproof verify --help` ÷ `node -e 0` (the verify command loaded, no vitest, no undici)',
    value: `${ratioText(verifyHelp)}: ${fixed(median(msOf(f, 'verifyHelp')), 0)} ms; modules loaded: ${f.modules.verifyHelp.modules} (undici's ${f.modules.verifyHelp.undici})`,
    target: 'report',
    met: null,
  })
  return rows
}

function profileTable(profiles: FixedResult['profiles']): string {
  const names = ['trivial', 'replay', 'live'] as const
  const buckets = [...new Set(names.flatMap((n) => profiles[n].parts.map(([k]) => k)))]
  const msIn = (b: Breakdown, k: string): number => b.parts.find(([x]) => x === k)?.[1] ?? 0
  const lines = buckets
    .sort((a, b) => msIn(profiles.replay, b) - msIn(profiles.replay, a))
    .map(
      (k) =>
        `| ${k} | ${names.map((n) => fixed(msIn(profiles[n], k), 0)).join(' | ')} | ${fixed(msIn(profiles.replay, k) - msIn(profiles.trivial, k), 0)} |`,
    )
  return [
    "| where the main thread's time goes (ms) | bare vitest, one trivial test | replay verdict | live verdict, instant engine | replay − bare vitest |",
    '| --- | --- | --- | --- | --- |',
    ...lines,
    `| **total (the profile's span)** | ${names.map((n) => fixed(profiles[n].totalMs, 0)).join(' | ')} | ${fixed(profiles.replay.totalMs - profiles.trivial.totalMs, 0)} |`,
  ].join('\n')
}

export function fixedCostMiss(measure: string): string {
  if (measure.includes('Replay') || measure.includes('Live'))
    return " See section 3: where the ms go, by the profiles and by the report's own times."
  return ''
}

export function fixedCostSection(f: FixedResult): string {
  const b = (k: keyof FixedResult['reps'][number]['liveBreakdown']): string => fixed(median(f.reps.map((r) => r.liveBreakdown[k])), 0)
  return `<a id="fixed-cost"></a>
## 3: a verdict's fixed cost

Each repetition runs these one after another, spawn to exit, alternating their order; one untimed
round first (cold disk caches, and Node's compile cache filled: \`pnpm verify\`'s launcher turns it on,
\`bin/run.mjs\` with \`bin/compile-cache.mjs\`, before any TypeScript is loaded, in \`armproof-compile-cache\` under the temp folder; the bare vitest run
has none, as vitest's own CLI turns none on):

- bare vitest: \`${f.commands.trivial}\` (one test, globals, no imports), with this project's vitest;
- replay: \`${f.commands.replay}\`, green every time;
- live, instant engine: the reference engine with \`--prefill-interleave 1 --completion-latency-ms 0\`, up before the runs,
  \`${f.commands.live}\` (the host commands through the engine's shims), green every time;
- \`${f.commands.node}\`; the installed command, built into a temp folder as \`pnpm pack\` builds it:
  \`${f.commands.help}\` and \`${f.commands.verifyHelp}\`.

| repetition | bare vitest | replay | ratio | live, instant | ratio | node -e 0 | armproof --help | ratio | armproof verify --help |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${f.reps.map((r, i) => `| ${i + 1} | ${fixed(r.trivialMs, 0)} ms | ${fixed(r.replayMs, 0)} ms | ${fixed(r.replayMs / r.trivialMs)}× | ${fixed(r.liveMs, 0)} ms | ${fixed(r.liveMs / r.trivialMs)}× | ${fixed(r.nodeMs, 0)} ms | ${fixed(r.helpMs, 0)} ms | ${fixed(r.helpMs / r.nodeMs)}× | ${fixed(r.verifyHelpMs, 0)} ms |`).join('\n')}

Where the ms go, from one more run of each under \`node --cpu-prof\` (untimed; the profiler adds a
little to every bucket). Each sample of the main thread is put in one bucket: compiling (V8's
compile of modules, Node's bootstrap modules, type stripping), the code of armproof, of vitest and
the tools it brings, of undici, Node's own code (resolving and reading modules, fs, start), garbage
collection, and idle (the thread waiting for a child process, a socket, a timer). The bare vitest
run also starts a worker process for its test file, where its test runs (not in this table: its
time shows as idle); armproof runs its suite in its own process.

${profileTable(f.profiles)}

The live verdict by its own report (medians, ms): start (spawn → the run's start: Node, loading
armproof, the configuration) ${b('startupMs')}, host checks (drop-ins, --help, argv, ledger through the
shims, each a process) ${b('hostMs')}, health ${b('healthMs')}, probes (the longest of the three side by side) ${b('probesMs')},
meter ${b('meterMs')}, vitest's own time around the steps ${b('vitestMs')}, reports and exit ${b('finishMs')}.

Modules the armproof process loads: \`armproof --help\` ${f.modules.help.modules}, \`armproof verify --help\`
${f.modules.verifyHelp.modules}, a replay ${f.modules.replay.modules}, a live verdict ${f.modules.live.modules} (undici's: ${f.modules.help.undici}, ${f.modules.verifyHelp.undici}, ${f.modules.replay.undici}, ${f.modules.live.undici}: the HTTP seam loads undici with its first live request).
`
}
