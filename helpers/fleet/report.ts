// A fleet run's combined outputs: one JSON report holding the overall verdict and each target's
// own report (the one-target shape, so writeback's schema validates each), the summary as one
// table (target × step), and the exit code: the worst verdict (2, then 1, then 3, then 0).
import pkg from '../../package.json' with { type: 'json' }
import { STEP_IDS } from '../steps/registry.ts'
import { EXIT_CODES, type RunVerdict } from '../steps/verdict.ts'
import { GLYPHS, oneLine, summarize } from '../report/_summary.ts'
import type { Report } from '../report/json.ts'
import type { FleetRunIdentity } from '../report/identity.ts'
import { mdCell, mdCode, mdText } from '../report/markdown.ts'
import { meterLine } from '../report/terminal.ts'
import { formatDuration } from '../config/duration.ts'
import type { Shard } from './shard.ts'

export const FLEET_FORMAT = 'armproof-fleet/1'

export interface FleetReport {
  format: typeof FLEET_FORMAT
  /** The worst verdict of the targets. */
  verdict: RunVerdict
  exitCode: number
  startedAt: string
  finishedAt: string
  /**
   * The targets file, how many it lists, and which of them this run held (a shard); added: `run`,
   * the run's identity (the file's digest and every target's run id, all shards), absent in
   * reports written before it existed; added: `admission`, the `--concurrency` given (`auto`: as many
   * as the run could afford, helpers/fleet/admission.ts) and the most targets in flight at once
   * (null when the suite ran in a worker of its own). `concurrency`: the cap given, else the most
   * the run could have let in (its targets, its file descriptors).
   */
  fleet: {
    file: string
    total: number
    shards: Shard[] | null
    concurrency: number | null
    admission?: { given: number | 'auto'; peak: number | null }
    run?: FleetRunIdentity
  }
  /** One entry per target, in the file's order: its unique label, its place in the file (added), and its own report. */
  targets: Array<{ name: string; index?: number; report: Report }>
  tool: { name: 'armproof'; version: string }
}

/** Worst first: an interrupted target (the run stopped under it) outranks all; then a usage error
 * outranks red, red outranks inconclusive, inconclusive outranks green (the contract's 2, 1, 3, 0). */
const RANK: Readonly<Record<RunVerdict, number>> = { interrupted: 4, error: 3, red: 2, inconclusive: 1, green: 0 }

export function worstVerdict(verdicts: readonly RunVerdict[]): RunVerdict {
  return verdicts.reduce<RunVerdict>((w, v) => (RANK[v] > RANK[w] ? v : w), 'green')
}

export function fleetReport(input: Omit<FleetReport, 'format' | 'verdict' | 'exitCode' | 'tool'>): FleetReport {
  // A fleet with no target proves nothing: never green.
  const verdict = input.targets.length === 0 ? 'error' : worstVerdict(input.targets.map((t) => t.report.verdict))
  return { format: FLEET_FORMAT, verdict, exitCode: EXIT_CODES[verdict], ...input, tool: { name: 'armproof', version: pkg.version } }
}

/**
 * The fleet report as `JSON.stringify(report, null, 2)` writes it, plus a newline, in pieces: the
 * head, then one target at a time. A fleet of 1,000 targets is some 17 MB of JSON; made as one
 * string it cost the run's last moment some 70 MiB of memory at once, the peak of the whole run.
 * JSON never holds a raw newline inside a string, so each piece is indented by its lines.
 */
export function* fleetReportJson(report: FleetReport): Generator<string> {
  const { targets } = report
  // The report with no target, its keys in their order: the targets go where its empty list is.
  const head = JSON.stringify({ ...report, targets: [] }, null, 2)
  const at = head.indexOf('\n  "targets": []')
  if (at < 0 || targets.length === 0) return yield `${JSON.stringify(report, null, 2)}\n`
  yield `${head.slice(0, at)}\n  "targets": [`
  for (const [i, t] of targets.entries()) yield `${i === 0 ? '' : ','}\n    ${JSON.stringify(t, null, 2).replaceAll('\n', '\n    ')}`
  yield `\n  ]${head.slice(at + '\n  "targets": []'.length)}\n`
}

/** Whether a parsed JSON document is a fleet report (as opposed to one target's). */
export function isFleetReport(doc: unknown): doc is FleetReport {
  return typeof doc === 'object' && doc !== null && (doc as { format?: unknown }).format === FLEET_FORMAT
}

const SHORT: Readonly<Record<string, string>> = {
  'probe.exact': 'exact',
  'probe.tools': 'tools',
  'probe.vision': 'vision',
  'one-flag': '1-flag',
}
const short = (id: string) => SHORT[id] ?? id

/** The terminal's table: one row per target, one column per step, then the verdict and why. */
export function fleetTable(report: FleetReport): string {
  const width = Math.max(6, ...report.targets.map((t) => [...t.name].length))
  const head = `${'target'.padEnd(width)}  ${STEP_IDS.map((id) => short(id).padEnd(8)).join('')}verdict`
  const rows = report.targets.map(({ name, report: r }) => {
    const cells = STEP_IDS.map((id) => (GLYPHS[r.steps.find((s) => s.id === id)?.verdict ?? 'inconclusive'] ?? '?').padEnd(8)).join('')
    const v = summarize(r)
    return `${name.padEnd(width)}  ${cells}${v.word}${r.verdict === 'green' ? '' : ` · ${oneLine(v.why)}`}`
  })
  return [head, ...rows].join('\n')
}

/**
 * The Markdown summary ($GITHUB_STEP_SUMMARY and --summary PATH): the overall verdict, the mode and
 * how long the run took, one row per target (its endpoint, its steps, its verdict, its meter line),
 * the next step of each non-green one. `endpoints`: target name → its --base-url.
 */
export function fleetMarkdown(
  report: FleetReport,
  options: { reportPath?: string | null; endpoints?: Readonly<Record<string, string | null>> } = {},
): string {
  const icon = { green: '✅', red: '❌', inconclusive: '❓', error: '⛔', interrupted: '⏹' }[report.verdict]
  const tally: Record<string, number> = {}
  for (const t of report.targets) tally[t.report.verdict] = (tally[t.report.verdict] ?? 0) + 1
  const counts = Object.entries(tally)
    .map(([v, n]) => `${n} ${v}`)
    .join(', ')
  const ms = Date.parse(report.finishedAt) - Date.parse(report.startedAt)
  const modes = [...new Set(report.targets.map((t) => t.report.mode))].join(', ')
  const shard = report.fleet.shards
    ? ` (shard ${report.fleet.shards.map((s) => `${s.index}/${s.count}`).join(', ')} of ${report.fleet.total})`
    : ''
  const lines = [
    `### ${icon} armproof fleet ${report.verdict.toUpperCase()}: ${report.targets.length} target(s)${shard}: ${counts}`,
    '',
    `mode **${mdText(modes || 'unknown')}** · took ${Number.isFinite(ms) && ms >= 0 ? formatDuration(ms) : 'unknown'}`,
    '',
    `| target | endpoint | ${STEP_IDS.map((id) => `\`${short(id)}\``).join(' | ')} | verdict | meter |`,
    `|---|---|${STEP_IDS.map(() => ':-:').join('|')}|---|---|`,
    ...report.targets.map(({ name, report: r }) => {
      const endpoint = options.endpoints?.[name]
      const meterStep = r.steps.find((s) => s.id === 'meter')
      const spark = meterStep ? meterLine(meterStep.evidence) : undefined
      return `| ${mdCell(name)} | ${endpoint ? mdCode(endpoint) : 'unknown'} | ${STEP_IDS.map((id) => GLYPHS[r.steps.find((s) => s.id === id)?.verdict ?? 'inconclusive']).join(' | ')} | ${r.verdict} | ${spark ? mdCode(spark) : '–'} |`
    }),
  ]
  const notGreen = report.targets.filter((t) => t.report.verdict !== 'green')
  if (notGreen.length > 0) {
    lines.push(
      '',
      ...notGreen.map(({ name, report: r }) => {
        const v = summarize(r, options.reportPath)
        return `- **${mdText(name)}** ${v.word}: ${mdCell(v.why)}; next: ${mdCell(v.next)}`
      }),
    )
  }
  return lines.join('\n')
}
