// Measures 6 and 7 in the perf table and docs/perf.md, and the picture of wall time and memory
// against fleet size (docs/perf-fleet.svg), from the measured results only.
import type { Row } from './report.ts'
import { FLAGS, type FleetResult, type SizeRun } from './fleet.ts'
import { PROM_TARGETS } from './fleet-prom.ts'
import { fixed, median, spread, ratioText } from './stats.ts'

export const FLEET_SVG = 'perf-fleet.svg'
const GIB = 1024

const ratioOf = (p: FleetResult['ratio'][number]) => p.fleet.ms / p.one.ms
const okCompletions = (r: SizeRun) => r.completions.min === 3 && r.completions.max === 3
const green = (r: SizeRun) => (r.verdicts.green ?? 0) === r.targets

function callsText(r: SizeRun): string {
  if (!r.calls) return 'not counted'
  const c = r.calls
  return `${fixed(Object.values(c).reduce((a, b) => a + b, 0) / r.targets, 2)} (own calls ${c.batch ?? 0} batched, ${c.survey ?? 0} own surveys, ${c['shared-survey'] ?? 0} surveys shared by all, ${c.other ?? 0} other)`
}

/** A fleet of N: its surveys shared, each target one call of its own (drop-ins, --help, ledger; one alone also its survey). */
const onePerTarget = (r: SizeRun) =>
  r.calls !== null &&
  (r.calls.other ?? 0) === 0 &&
  (r.targets === 1 ? (r.calls.batch ?? 0) === 1 : (r.calls.batch ?? 0) === r.targets && (r.calls.survey ?? 0) === 0)

export function fleetRows(f: FleetResult): Row[] {
  const ratio = spread(f.ratio.map(ratioOf))
  const runs = [...f.ratio.flatMap((p) => [p.one, p.fleet]), ...f.ladder]
  const big = f.ladder.at(-1)!
  const two = f.ladder.find((r) => r.targets === 200)
  const rows: Row[] = [
    {
      measure: `6. Fleet: 200 targets in one run at the default --concurrency (auto) ÷ one target alone, ${f.latencyMs} ms per completion`,
      value: `${ratioText(ratio)}: ${fixed(median(f.ratio.map((p) => p.fleet.ms)) / 1000)} s vs ${fixed(median(f.ratio.map((p) => p.one.ms)) / 1000)} s; ${f.ratio.every((p) => green(p.fleet) && green(p.one)) ? 'all green' : 'NOT all green'}, ${median(f.ratio.map((p) => p.fleet.admitted ?? 0))} at once`,
      target: '≤ 1.5×, all green',
      met: ratio.median <= 1.5 && f.ratio.every((p) => green(p.fleet) && green(p.one)),
    },
    {
      measure: '6. Fleet: chat completions per target',
      value: runs.every(okCompletions)
        ? `3 on every target of every run (${runs.length} runs)`
        : runs.map((r) => `${r.completions.min}–${r.completions.max}`).join(', '),
      target: 'exactly 3',
      met: runs.every(okCompletions),
    },
    {
      measure: '6. Fleet: host calls armproof started per target (sh -c), 200 targets / one alone',
      value: `${two ? callsText(two) : '?'} / ${callsText(f.ladder[0]!)}`,
      target: 'one call of its own per target (drop-ins, --help, lookup, ledger), surveys shared',
      met: two !== undefined && onePerTarget(two) && onePerTarget(f.ladder[0]!),
    },
    {
      measure: `6. Fleet: ${big.targets} targets in one run: peak RSS of armproof's process`,
      value: `${fixed(big.peak.ownMiB, 0)} MiB (its spawner ${fixed(big.peak.spawnerMiB, 0)} MiB; every process of the run ${fixed(big.peak.allMiB, 0)} MiB); ${green(big) ? 'all green' : JSON.stringify(big.verdicts)}, ${fixed(big.ms / 1000, 1)} s`,
      target: '≤ 1 GiB, all green',
      met: big.peak.ownMiB <= GIB && green(big),
    },
    {
      measure: `6. Fleet: wall time and memory against fleet size (${f.ladder.map((r) => r.targets).join(', ')})`,
      value: f.ladder.map((r) => `${r.targets}: ${fixed(r.ms / 1000, 1)} s, ${fixed(r.peak.ownMiB, 0)} MiB`).join('; '),
      target: 'report (figure)',
      met: null,
    },
  ]
  const p = f.prometheus
  if ('skipped' in p) {
    rows.push({
      measure: `7. Prometheus, a fleet of ${PROM_TARGETS}: queries per target`,
      value: `not measured: ${p.skipped}`,
      target: '≤ 1',
      met: null,
    })
    return rows
  }
  const perT = p.fleet.answered / p.fleet.targets
  const waits = p.fleet.meters.map((m) => m.waited).filter((w): w is NonNullable<typeof w> => w !== undefined)
  const ends = waits.map((w) => w.endedAfterStartMs ?? 0)
  const span = waits.length ? Math.max(...ends) - Math.min(...waits.map((w, i) => ends[i]! - w.ms)) : NaN
  const longest = waits.length ? Math.max(...waits.map((w) => w.ms)) : NaN
  const one = p.one.meters[0]!
  rows.push(
    {
      measure: `7. Prometheus, a fleet of ${p.fleet.targets} in one run: queries Prometheus answered, per target`,
      value: `${fixed(perT, 2)} (${p.fleet.answered} for the run; one target alone: ${p.one.answered}); ${(p.fleet.verdicts.green ?? 0) === p.fleet.targets ? 'all green' : JSON.stringify(p.fleet.verdicts)}`,
      target: '≤ 1',
      met: perT <= 1 && (p.fleet.verdicts.green ?? 0) === p.fleet.targets,
    },
    {
      measure: `7. Prometheus, a fleet of ${p.fleet.targets}: the wait for a scrape taken after the run started (scrape interval ${p.scrapeS} s)`,
      value: `${fixed(span / 1000, 2)} s for the whole fleet (from the first target's wait to the last's end), the longest one target's ${fixed(longest / 1000, 2)} s; one target alone waited ${fixed((one.waited?.ms ?? NaN) / 1000, 2)} s`,
      target: `once per fleet, ≤ one scrape interval (${p.scrapeS} s)`,
      met: span <= p.scrapeS * 1000,
    },
    {
      measure: '7. Prometheus meter: queries per poll, one target',
      value: `${fixed(one.queries / one.polls, 2)} (${one.queries} queries over ${one.polls} polls; verdict ${Object.keys(p.one.verdicts).join(', ')})`,
      target: '≤ 2',
      met: one.queries <= 2 * one.polls,
    },
  )
  return rows
}

const esc = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;')

/** Wall time and armproof's peak RSS against fleet size (log axis), each run a point; the 1 GiB line. */
export function fleetSvg(f: FleetResult): string {
  const W = 760
  const H = 330
  const panel = (x0: number, title: string, unit: string, ys: number[], limit?: { at: number; label: string }) => {
    const w = 320
    const h = 220
    const top = 60
    const sizes = f.ladder.map((r) => r.targets)
    const lx = (n: number) => x0 + 50 + (Math.log10(n) / Math.log10(Math.max(...sizes))) * (w - 60)
    const ymax = Math.max(...ys, limit?.at ?? 0) * 1.1
    const ly = (v: number) => top + h - (v / ymax) * h
    const pts = sizes.map((n, i) => `${lx(n).toFixed(1)},${ly(ys[i]!).toFixed(1)}`)
    const ticks = [0, 0.25, 0.5, 0.75, 1].map((k) => k * ymax)
    return [
      `<text x="${x0 + 50}" y="${top - 16}" font-size="14" font-weight="bold">${esc(title)}</text>`,
      `<line x1="${x0 + 50}" y1="${top + h}" x2="${x0 + w - 10}" y2="${top + h}" stroke="#333"/>`,
      `<line x1="${x0 + 50}" y1="${top}" x2="${x0 + 50}" y2="${top + h}" stroke="#333"/>`,
      ...ticks.map(
        (v) =>
          `<text x="${x0 + 44}" y="${(ly(v) + 4).toFixed(1)}" font-size="11" text-anchor="end">${fixed(v, v >= 10 ? 0 : 1)}</text><line x1="${x0 + 47}" y1="${ly(v).toFixed(1)}" x2="${x0 + 50}" y2="${ly(v).toFixed(1)}" stroke="#333"/>`,
      ),
      ...sizes.map((n) => `<text x="${lx(n).toFixed(1)}" y="${top + h + 16}" font-size="11" text-anchor="middle">${n}</text>`),
      `<text x="${x0 + 50 + (w - 60) / 2}" y="${top + h + 34}" font-size="12" text-anchor="middle">targets in one run (log scale)</text>`,
      `<text x="${x0 + 12}" y="${top + h / 2}" font-size="12" text-anchor="middle" transform="rotate(-90 ${x0 + 12} ${top + h / 2})">${esc(unit)}</text>`,
      ...(limit
        ? [
            `<line x1="${x0 + 50}" y1="${ly(limit.at).toFixed(1)}" x2="${x0 + w - 10}" y2="${ly(limit.at).toFixed(1)}" stroke="#d6404e" stroke-dasharray="6 4"/>`,
            `<text x="${x0 + w - 12}" y="${(ly(limit.at) - 5).toFixed(1)}" font-size="11" text-anchor="end" fill="#d6404e">${esc(limit.label)}</text>`,
          ]
        : []),
      `<polyline fill="none" stroke="#4c78a8" stroke-width="2.5" points="${pts.join(' ')}"/>`,
      ...pts.map(
        (p, i) =>
          `<circle cx="${p.split(',')[0]}" cy="${p.split(',')[1]}" r="3.5" fill="#4c78a8"><title>${sizes[i]} targets: ${fixed(ys[i]!, 1)} ${esc(unit)}</title></circle>`,
      ),
    ].join('\n')
  }
  const one = f.ladder[0]!.ms / 1000
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif">
<rect width="${W}" height="${H}" fill="white"/>
<text x="20" y="22" font-size="15">armproof: one fleet run of N reference engines (${f.latencyMs} ms per completion), default --concurrency</text>
${panel(
  0,
  'wall time',
  's',
  f.ladder.map((r) => r.ms / 1000),
  { at: one * 1.5, label: '1.5 × one target' },
)}
${panel(
  380,
  "armproof's peak RSS",
  'MiB',
  f.ladder.map((r) => r.peak.ownMiB),
  { at: GIB, label: '1 GiB' },
)}
</svg>
`
}

/** Why a run's targets were not green, as their first step that did not pass said it; empty when every run was all green. */
function notGreenText(runs: ReadonlyArray<readonly [string, SizeRun]>): string {
  const lines = runs.flatMap(([what, r]) => (r.notGreen ?? []).map((n) => `- ${what}: ${n.targets} × ${n.said.replaceAll('|', '\\|')}`))
  return lines.length
    ? `\nNot green, as the first step that did not pass said it (the most said first, five at most per run):\n\n${lines.join('\n')}\n`
    : ''
}

export function fleetSection(f: FleetResult): string {
  const p = f.prometheus
  const ladderRows = f.ladder.map((r) => {
    const base = f.ladder[0]!
    return `| ${r.targets} | ${fixed(r.ms / 1000, 2)} s | ${fixed(r.ms / base.ms, 2)}× | ${fixed(r.peak.ownMiB, 0)} MiB | ${r.targets > 1 ? fixed(((r.peak.ownMiB - base.peak.ownMiB) * 1024) / (r.targets - 1), 0) : '—'} KiB | ${fixed(r.peak.spawnerMiB, 0)} / ${fixed(r.peak.allMiB, 0)} MiB | ${callsText(r)} | ${r.admitted ?? '—'} | ${Object.entries(
      r.verdicts,
    )
      .map(([v, n]) => `${n} ${v}`)
      .join(
        ', ',
      )} | ${r.completions.min === r.completions.max ? r.completions.min : `${r.completions.min}–${r.completions.max}`} | ${fixed(r.load, 2)} |`
  })
  const promPart =
    'skipped' in p
      ? `Measure 7 was not run: ${p.skipped}.`
      : `| run | wall | queries Prometheus answered | per target | polls of the meter (each target) | longest wait for a scrape | fleet's wait, first begin → last end | verdicts |
| --- | --- | --- | --- | --- | --- | --- | --- |
${[p.one, p.fleet]
  .map((r) => {
    const w = r.meters.map((m) => m.waited).filter((x): x is NonNullable<typeof x> => x !== undefined)
    const ends = w.map((x) => x.endedAfterStartMs ?? 0)
    const span = w.length ? Math.max(...ends) - Math.min(...w.map((x, i) => ends[i]! - x.ms)) : NaN
    return `| ${r.targets === 1 ? 'one target' : `${r.targets} targets, one run`} | ${fixed(r.ms / 1000, 2)} s | ${r.answered} | ${fixed(r.answered / r.targets, 2)} | ${[...new Set(r.meters.map((m) => m.polls))].sort((a, b) => a - b).join(', ')} | ${fixed(Math.max(...w.map((x) => x.ms)), 0)} ms | ${fixed(span, 0)} ms | ${Object.entries(
      r.verdicts,
    )
      .map(([v, n]) => `${n} ${v}`)
      .join(', ')} |`
  })
  .join('\n')}`
  return `<a id="fleet"></a>
## 6: a fleet in one run

Setup: the reference engine's fleet in one process (\`startEngine({ fleet: N })\`, engine/fleet-main.ts): N engine
states, each its own loopback port, counters and meters, behind one command line (\`--prefill-interleave 1
--completion-latency-ms ${f.latencyMs}\`) and one ledger; its \`podman\` shim answers for every member. It stands for
N hosts of one engine each, on one machine: every target's host reads run here too (a shared survey
reads /proc/net/tcp and every process's fds once for all; each target's own call reads its --help and
ledger through the shims). A fleet is a targets file of its members run as

    node bin/verify.ts --targets FILE ${FLAGS.join(' ')}

with the default --concurrency (auto: as many at once as the run can afford: helpers/fleet/admission.ts);
one target alone is the same options with one member's \`--svc --base-url --process --ledger-cmd --help-cmd\`,
against a fleet of one (its own process, so its survey reads no other member's sockets). Wall time is spawn
to exit of \`node bin/verify.ts\`; peak RSS is sampled every 100 ms from /proc: armproof's own process (the
suite runs in it), the spawner it starts for host commands, and every process of the run. Host calls are
counted by a \`sh\` put first on the run's PATH (only in the ladder's runs, so the ratio's are not slowed by
it): each \`sh -c\` armproof starts on the host, by kind: a target's own batch (helpers/seams/host-batch.ts:
drop-ins when checked, --help, ledger and, alone, its survey, in one call), a survey of its own, a survey
shared by the targets of the host, anything else. Completions: each member's /stats before and after.

**200 targets ÷ one**, the order alternating run by run:

| repetition | one target | 200 targets | ratio | at once | peak RSS (one / 200) | verdicts |
| --- | --- | --- | --- | --- | --- | --- |
${f.ratio
  .map(
    (x, i) =>
      `| ${i + 1} | ${fixed(x.one.ms / 1000, 2)} s | ${fixed(x.fleet.ms / 1000, 2)} s | ${fixed(ratioOf(x), 2)}× | ${x.fleet.admitted ?? '—'} | ${fixed(x.one.peak.ownMiB, 0)} / ${fixed(x.fleet.peak.ownMiB, 0)} MiB | ${Object.entries(
        x.fleet.verdicts,
      )
        .map(([v, n]) => `${n} ${v}`)
        .join(', ')} |`,
  )
  .join('\n')}

<a id="fleet-sizes"></a>
**Fleet sizes**, one run each:

| targets | wall | ÷ size 1 | armproof's peak RSS | per target more | spawner / all processes | host calls per target | at once | verdicts | completions per target | load (1 min) |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${ladderRows.join('\n')}
${notGreenText([...f.ratio.flatMap((x, i) => [[`repetition ${i + 1}, one target`, x.one] as const, [`repetition ${i + 1}, ${x.fleet.targets} targets`, x.fleet] as const]), ...f.ladder.map((r) => [`${r.targets} target(s)`, r] as const)])}
![wall time and armproof's peak memory against fleet size](${FLEET_SVG})

<a id="prometheus"></a>
## 7: the meter through Prometheus for a fleet

Setup: Debian's Prometheus on loopback (\`test/support/prometheus.ts\`) scraping a fleet of ${PROM_TARGETS} (one process, as
above) and one more engine every ${'skipped' in p ? '?' : p.scrapeS} s; the same runs with \`--meter-window 15s --prometheus-url <it>\`, one target
alone, then the ${PROM_TARGETS} in one run. Queries are counted by Prometheus itself: its \`prometheus_http_requests_total\` of
\`/api/v1/query\` and \`/api/v1/targets/metadata\` (the two requests of a poll) read from its /metrics before and after each
run. In a live fleet the targets of one Prometheus share each poll (helpers/steps/meter/prom-fleet.ts: the
\`instance="…"\` matchers combined into one \`instance=~\`, the answer cut back to each target), and every target's
window starts when the fleet did, so its wait for a scrape taken after that moment (\`prometheus.waited\` in
each target's meter evidence: how long, and when it ended after the start) is one wait for the fleet.

${promPart}
`
}
