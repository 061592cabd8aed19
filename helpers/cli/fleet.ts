// `pnpm verify --targets FILE`: many targets in one process and one vitest start. The whole file
// is validated first (exit 2 with every problem, nothing contacted); then every target runs its
// own runbook side by side (at most --concurrency at once), and the outputs are combined: one
// JSON report, one JUnit file with a testsuite per target, one summary table. The exit code is the
// worst verdict of the targets (2, then 1, then 3, then 0).
import { appendFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { formatProblems } from '../config/load.ts'
import type { Target } from '../config/load.ts'
import { markRecordedVerdict } from '../seams/recording.ts'
import { recordingRef, verdictMismatch } from '../seams/replay-verdict.ts'
import { redactText, scrub } from '../seams/redact.ts'
import { buildReport, type Report } from '../report/json.ts'
import { writeAtomic } from '../seams/atomic.ts'
import { contactTarget } from '../seams/first-contact.ts'
import { junitFleetXml } from '../report/junit.ts'
import { truthTable } from '../report/truth.ts'
import type { StepResult } from '../steps/verdict.ts'
import { EXIT_CODES } from '../steps/verdict.ts'
import { planFleet, type FleetPlan } from '../fleet/plan.ts'
import { FleetReporter } from '../fleet/reporter.ts'
import { fleetMarkdown, fleetReport, fleetTable, type FleetReport } from '../fleet/report.ts'
import { EXIT_OUTPUT_UNWRITTEN } from './options.ts'

/** The streams and inputs of `pnpm verify` (structurally helpers/cli/verify.ts' VerifyIo). */
export interface VerifyIo {
  rawArgs: readonly string[]
  env: Readonly<Record<string, string | undefined>>
  cwd: string
  out: { write(text: string): unknown; isTTY?: boolean; columns?: number }
  err: { write(text: string): unknown; isTTY?: boolean; columns?: number }
}
import { ARM_SUITE, SUITES_PROJECT } from '../../suites/project.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** One target's report from its steps, as a one-target run builds it (replay re-judging and the recording's verdict included). */
export async function targetReport(target: Target, steps: StepResult[], notes: string[], startedAt: Date, finishedAt: Date, failure?: string): Promise<{ report: Report; unwritten: string[] }> {
  const helpDefault = steps.find((s) => s.id === 'help')?.buildDefault
  const unhandled = [...notes, ...(failure ? [`armproof could not run the suites: ${failure}`] : [])]
  // A replay: as helpers/cli/verify.ts, a recorded exchange the run asked for and did not find is
  // a note that keeps the target from green (inconclusive), and its verdicts are set against the recording's.
  const replayed = target.mode === 'replay' ? recordingRef(target.fixtures) : null
  const miss = steps.map((s) => s.evidence.error as { name?: string; message?: string } | undefined).find((e) => e?.name === 'ReplayMiss')
  const missNote = miss ? `the recording does not hold this run: ${miss.message ?? 'a recorded exchange is missing'}` : null
  const input = {
    target,
    steps,
    startedAt,
    finishedAt,
    unhandled: missNote ? [...unhandled, missNote] : unhandled,
    truth: truthTable(target, steps),
    ...(typeof helpDefault === 'string' ? { defaultFromHelp: helpDefault } : {}),
    ...(replayed ? { recording: replayed.ref } : {}),
  }
  let report = buildReport(input)
  const note = replayed && !miss ? verdictMismatch(replayed.meta, report.verdict, report.steps) : null
  if (note) report = buildReport({ ...input, unhandled: [...input.unhandled, note] })
  const unwritten: string[] = []
  if (target.mode === 'record') {
    try {
      await markRecordedVerdict(target.fixtures, report.verdict, Object.fromEntries(report.steps.map((s) => [s.id, s.verdict])))
    } catch (error) {
      unwritten.push(`could not write the recording's verdict to ${target.fixtures}: ${redactText((error as NodeJS.ErrnoException).code ?? (error as Error).message, target.apiKey)}`)
    }
  }
  return { report, unwritten }
}

async function runPlan(plan: FleetPlan, io: VerifyIo): Promise<number> {
  const ci = io.env.CI === 'true' || io.env.CI === '1'
  const live = io.err.isTTY === true && !ci
  const startedAt = new Date()
  // First contact of every target side by side, before any step: a target whose operator mistake
  // shows here (DNS, TLS, 401/403, 404 on /health) ends at once with its own verdict `error` and
  // one line; the others run on.
  const refusals = await Promise.all(plan.targets.map((t) => contactTarget(t.target)))
  for (const [i, r] of refusals.entries()) if (r) io.err.write(`${r.line.replace(/^armproof: /, `armproof: ${plan.targets[i]!.label}: `)}\n`)
  const running = plan.targets.filter((_, i) => !refusals[i])
  const targets = running.map((t) => ({ label: t.label, target: t.target }))
  const reporter = new FleetReporter({ targets, out: io.out, err: io.err, live, width: io.out.columns ?? 160 })
  io.out.write(`armproof fleet · ${plan.file} · ${plan.targets.length} target(s)${plan.shard ? ` (shard ${plan.shard.index}/${plan.shard.count} of ${plan.total})` : ''} · at most ${plan.concurrency} at once\n`)
  let failure: string | undefined
  if (targets.length > 0) try {
    const { startVitest } = await import('vitest/node')
    const vitest = await startVitest(
      'test',
      [ARM_SUITE],
      {
        root: ROOT,
        config: false,
        ...SUITES_PROJECT,
        // Every target's steps are tests of this one file: vitest's own cap must never be what
        // holds a target back (the fleet's --concurrency gate is, helpers/fleet/suite.ts).
        maxConcurrency: plan.targets.length * 4 + 8,
        run: true,
        watch: false,
        reporters: [reporter],
        provide: { 'armproof:fleet': { targets, concurrency: plan.concurrency } },
      },
      {},
      { stdout: io.out as NodeJS.WriteStream, stderr: io.err as NodeJS.WriteStream },
    )
    await vitest.close()
  } catch (error) {
    failure = error instanceof Error ? error.message : String(error)
  }
  const finishedAt = new Date()
  const outcomes = reporter.outcomes()
  const unwritten: string[] = []
  const reports: FleetReport['targets'] = []
  for (const [j, t] of plan.targets.entries()) {
    const refused = refusals[j]
    if (refused) {
      reports.push({ name: t.label, report: buildReport({ target: t.target, steps: [], startedAt, finishedAt: startedAt, error: `first contact: ${refused.message}` }) })
      continue
    }
    const o = outcomes[running.indexOf(t)] ?? { steps: [], notes: [], startedAt: null, finishedAt: null }
    const built = await targetReport(t.target, o.steps, o.notes, o.startedAt ?? startedAt, o.finishedAt ?? finishedAt, failure ?? (o.steps.length ? undefined : 'no step reported'))
    unwritten.push(...built.unwritten)
    reports.push({ name: t.label, report: built.report })
  }
  const keys = [...new Set(plan.targets.map((t) => t.target.apiKey).filter((k): k is string => k !== null))]
  const built = fleetReport({
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    fleet: { file: plan.file, total: plan.total, shards: plan.shard ? [plan.shard] : null, concurrency: plan.concurrency },
    targets: reports,
  })
  // Each target's report is scrubbed of its own key; the fleet's of every target's key.
  const report = keys.reduce<unknown>((v, k) => scrub(v, k), built) as FleetReport
  const attempt = async (what: string, path: string, write: () => Promise<void>): Promise<void> => {
    try {
      await write()
    } catch (error) {
      unwritten.push(`could not write ${what} to ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
    }
  }
  if (plan.report) await attempt('the JSON report', plan.report, () => writeAtomic(plan.report!, `${JSON.stringify(report, null, 2)}\n`))
  if (plan.junit) await attempt('the JUnit XML', plan.junit, () => writeAtomic(plan.junit!, junitFleetXml(report.targets, finishedAt.getTime() - startedAt.getTime())))
  const markdown = `${fleetMarkdown(report, { reportPath: plan.report, endpoints: Object.fromEntries(plan.targets.map((t) => [t.label, t.target.baseUrl])) })}\n`
  if (plan.summary) await attempt('the Markdown summary', plan.summary, () => writeAtomic(plan.summary!, markdown))
  const summary = io.env.GITHUB_STEP_SUMMARY
  if (summary) await attempt('the step summary', summary, () => appendFile(summary, markdown))
  io.out.write(`\n${fleetTable(report)}\n`)
  for (const line of unwritten) io.err.write(`armproof: ${line}\n`)
  const counts = report.targets.reduce<Record<string, number>>((m, t) => ({ ...m, [t.report.verdict]: (m[t.report.verdict] ?? 0) + 1 }), {})
  io.out.write(`\nfleet ${report.verdict.toUpperCase()} · ${Object.entries(counts).map(([v, n]) => `${n} ${v}`).join(', ')} · exit ${report.exitCode} (the worst verdict)${plan.report && unwritten.length === 0 ? ` · report ${plan.report}` : ''}\n`)
  if (report.targets.some((t) => t.report.verdict === 'green')) io.out.write(`next for the green targets: pnpm writeback --report ${plan.report ?? '<report.json>'} --vault <dir>\n`)
  if (unwritten.length > 0) {
    io.err.write(`armproof: exit ${EXIT_OUTPUT_UNWRITTEN}: the verdict above stands (${report.verdict}), but ${unwritten.length} output(s) were not written\n`)
    return EXIT_OUTPUT_UNWRITTEN
  }
  return report.exitCode
}

/** The fleet path of `pnpm verify`: plan (exit 2 on any problem), then run. */
export async function verifyFleet(io: VerifyIo, dotenv: string | undefined): Promise<number> {
  const planned = planFleet({ argv: io.rawArgs, env: io.env, cwd: io.cwd, ...(dotenv ? { dotenv } : {}) })
  if (!planned.ok) {
    io.err.write(`${formatProblems(planned.problems)}\n`)
    return EXIT_CODES.error
  }
  for (const warning of planned.warnings) io.err.write(`armproof: warning: ${warning}\n`)
  return runPlan(planned.plan, io)
}
