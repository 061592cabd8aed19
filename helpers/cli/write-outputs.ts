// The outputs of a verify run, one table, and their one writer: the one-target run (at its end, on
// an interrupt, a first-contact refusal, a contained failure) and the fleet all write through
// `writeOutputs`. Each file is written whole (helpers/seams/atomic.ts) or, the step summary,
// appended to; one that fails is one line (the key redacted) and the others are still written.
// The paths were checked before the run (helpers/config/outputs.ts): a write that fails here is
// a disk that filled or a folder removed meanwhile, and the exit code says it (4).
import { appendFileSync } from 'node:fs'
import type { Target } from '../config/load.ts'
import { fleetMarkdown, fleetReportJson, type FleetReport } from '../fleet/report.ts'
import type { FleetPlan } from '../fleet/plan.ts'
import { reportJson, type Report } from '../report/json.ts'
import { junitFleetXml, junitXml } from '../report/junit.ts'
import { markdownSummary } from '../report/markdown.ts'
import { writeAtomicSync } from '../seams/atomic.ts'
import { markRecordedVerdict } from '../seams/fixture-write.ts'
import { redactAll, redactText } from '../seams/redact.ts'
import type { OutStream } from './streams.ts'

/** Where a run's outputs go: the target's --report / --junit / --summary, or the fleet plan's. */
export interface OutputPaths {
  readonly report: string | null
  readonly junit: string | null
  readonly summary: string | null
}

/** What a run writes, each rendered only when some output asks for it. */
export interface Rendered {
  /** The JSON report as written to disk (two-space JSON, a final newline), whole or in pieces (a fleet's, one target at a time). */
  json(): string | Iterable<string>
  junit(): string
  /** The Markdown summary (--summary and the GitHub step summary). */
  markdown(): string
}

type Env = Readonly<Record<string, string | undefined>>

/** The outputs: the name a message gives each, where it goes, what it holds, whether it is appended to. */
const OUTPUTS: ReadonlyArray<{
  what: string
  path: (paths: OutputPaths, env: Env) => string | null | undefined
  body: (r: Rendered) => string | Iterable<string>
  append?: true
}> = [
  { what: 'the JSON report', path: (p) => p.report, body: (r) => r.json() },
  { what: 'the JUnit XML', path: (p) => p.junit, body: (r) => r.junit() },
  { what: 'the Markdown summary', path: (p) => p.summary, body: (r) => r.markdown() },
  // GitHub Actions' step summary file: appended to, as the runner expects of every step.
  { what: 'the step summary', path: (_, env) => env.GITHUB_STEP_SUMMARY, body: (r) => r.markdown(), append: true },
]

/**
 * Writes every output at once (synchronously: a signal handler can still do it), and the JSON
 * report to stdout under --json; the lines of what could not be written, redacted of `keys`.
 */
export function writeOutputs(
  paths: OutputPaths,
  rendered: Rendered,
  io: { env: Env; json: OutStream | null },
  keys: readonly (string | null)[],
): string[] {
  if (io.json) for (const piece of pieces(rendered.json())) io.json.write(piece)
  const unwritten: string[] = []
  for (const output of OUTPUTS) {
    const path = output.path(paths, io.env)
    if (!path) continue
    try {
      if (output.append) appendFileSync(path, [...pieces(output.body(rendered))].join(''))
      else writeAtomicSync(path, output.body(rendered))
    } catch (error) {
      unwritten.push(
        `could not write ${output.what} to ${path}: ${redactAll((error as NodeJS.ErrnoException).code ?? (error as Error).message, keys)}`,
      )
    }
  }
  return unwritten
}

/** A body whole or in pieces, as pieces. */
function pieces(body: string | Iterable<string>): Iterable<string> {
  return typeof body === 'string' ? [body] : body
}

/** `make`, called once at most. */
function once(make: () => string): () => string {
  let made: string | undefined
  return () => (made ??= make())
}

/** One target's outputs. */
export function targetRendered(target: Target, report: Report): Rendered {
  return {
    json: once(() => reportJson(report)),
    junit: once(() => junitXml(report)),
    markdown: once(() => `${markdownSummary(report, { reportPath: target.report, endpoint: target.baseUrl })}\n`),
  }
}

/** A fleet's outputs: one JSON report, one JUnit file with a testsuite per target, one summary table. */
export function fleetRendered(plan: FleetPlan, report: FleetReport): Rendered {
  return {
    // Never one string of the whole report: a fleet of 1,000 makes some 17 MB of it at the run's end.
    json: () => fleetReportJson(report),
    junit: once(() => junitFleetXml(report.targets, Date.parse(report.finishedAt) - Date.parse(report.startedAt))),
    markdown: once(
      () =>
        `${fleetMarkdown(report, { reportPath: plan.report, endpoints: Object.fromEntries(plan.targets.map((t) => [t.label, t.target.baseUrl])) })}\n`,
    ),
  }
}

/**
 * A recording's verdict, written into its run.json once the run is judged (record mode, and only
 * when the recording itself was written: `fixturesUnwritten` empty). What could not be written
 * leaves the verdict as judged; the lines returned make the run exit 4.
 */
export function recordVerdict(target: Target, report: Report, fixturesUnwritten: readonly string[]): string[] {
  if (target.mode !== 'record' || fixturesUnwritten.length > 0) return [...fixturesUnwritten]
  try {
    markRecordedVerdict(target.fixtures, report.verdict, Object.fromEntries(report.steps.map((s) => [s.id, s.verdict])))
    return []
  } catch (error) {
    return [redactText((error as Error).message, target.apiKey)]
  }
}
