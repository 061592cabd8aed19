// `pnpm verify --targets FILE`: many targets in one process and one vitest start. The whole file
// is validated first (exit 2 with every problem, nothing contacted); then every target runs its
// own runbook side by side (as many at once as the run can afford, at most --concurrency), and the outputs are combined: one
// JSON report, one JUnit file with a testsuite per target, one summary table. The exit code is the
// worst verdict of the targets (2, then 1, then 3, then 0).
import type { Target } from '../config/load.ts'
import { useSpawner } from '../seams/executor.ts'
import { useSharedReads } from '../seams/host-gather.ts'
import { startHostReads } from '../seams/open.ts'
import { plannedReads } from '../steps/host-reads.ts'
import { redactAll, scrubAll } from '../seams/redact.ts'
import { buildReport, type Report } from '../report/json.ts'
import { contactTarget, type FirstContactRefusal } from '../steps/first-contact/contact.ts'
import { Interrupt } from './interrupt.ts'
import { judgedReport } from './judged-report.ts'
import { githubAnnotations } from '../report/github.ts'
import { truthTable } from '../report/truth.ts'
import type { StepResult } from '../steps/verdict.ts'
import { EXIT_CODES, INTERRUPT_EXIT } from '../steps/verdict.ts'
import type { FleetPlan } from '../fleet/plan.ts'
import { FleetReporter } from '../fleet/reporter.ts'
import { fleetAdmission, forgetGate } from '../fleet/admission.ts'
import { fleetReport, fleetTable, type FleetReport } from '../fleet/report.ts'
import { EXIT_OUTPUT_UNWRITTEN } from '../config/options.ts'
import { runArmSuite } from './run-suites.ts'
import { containedLine, errorLine, type Phase } from './contain.ts'
import { command } from '../config/invocation.ts'
import type { RunStreams, VerifyIo } from './streams.ts'
import { fleetRendered, recordVerdict, writeOutputs } from './write-outputs.ts'
import { closingLine, countSteps } from '../report/closing.ts'
import { ARM_SUITE } from './suites-project.ts'

/** One target's report from its steps, as a one-target run builds it (replay re-judging and the recording's verdict included). */
async function targetReport(
  target: Target,
  steps: StepResult[],
  notes: string[],
  startedAt: Date,
  finishedAt: Date,
  failure?: string,
  fixturesUnwritten: readonly string[] = [],
): Promise<{ report: Report; unwritten: string[] }> {
  const unhandled = [...notes, ...(failure ? [`armproof could not run the suites: ${failure}`] : [])]
  // No step judged: the suites' setup failed for this target (verdict error, as a one-target run says it).
  const { report } =
    steps.length === 0
      ? {
          report: buildReport({
            target,
            steps,
            startedAt,
            finishedAt,
            error: `internal error in the suites' setup (${ARM_SUITE}): ${unhandled.join('; ') || 'no proof step ran'}`,
          }),
        }
      : judgedReport(target, steps, unhandled, startedAt, finishedAt)
  // A recording that could not be written leaves the verdict as judged; the run exits 4.
  return { report, unwritten: recordVerdict(target, report, fixturesUnwritten) }
}

/** The fleet's combined report from each target's (scrubbed of every target's key). */
function combined(plan: FleetPlan, startedAt: Date, finishedAt: Date, targets: FleetReport['targets']): FleetReport {
  // How many the gate let in at once (helpers/fleet/admission.ts), when the suite ran in this process.
  const admitted = fleetAdmission()
  const built = fleetReport({
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    fleet: {
      file: plan.file,
      total: plan.total,
      shards: plan.shard ? [plan.shard] : null,
      concurrency: plan.concurrency ?? admitted?.ceiling ?? null,
      admission: { given: plan.concurrency ?? 'auto', peak: admitted && admitted.peak > 0 ? admitted.peak : null },
      run: plan.run,
    },
    targets,
  })
  // Each target's report is scrubbed of its own key; the fleet's of every target's key.
  return scrubAll(built, fleetKeys(plan)) as FleetReport
}

/** Every target's key: a fleet's text is scrubbed of all of them (one target may quote another's). */
function fleetKeys(plan: FleetPlan): string[] {
  return [...new Set(plan.targets.map((t) => t.target.apiKey).filter((k): k is string => k !== null))]
}

/** Writes the fleet's outputs at once (./write-outputs.ts); the lines of what could not be written. */
function writeFleetOutputsSync(plan: FleetPlan, io: VerifyIo, report: FleetReport, streams: RunStreams): string[] {
  return writeOutputs(plan, fleetRendered(plan, report), { env: io.env, json: streams.json }, fleetKeys(plan))
}

function countsOf(report: FleetReport): string {
  const counts: Record<string, number> = {}
  for (const t of report.targets) counts[t.report.verdict] = (counts[t.report.verdict] ?? 0) + 1
  return Object.entries(counts)
    .map(([v, n]) => `${n} ${v}`)
    .join(', ')
}

/** The fleet's closing line: its targets' step counts and the run's duration. */
function fleetClosing(report: FleetReport, color: boolean): string {
  return closingLine(countSteps(report.targets.map((t) => t.report)), Date.parse(report.finishedAt) - Date.parse(report.startedAt), {
    color,
    what: `${report.targets.length} target(s), steps`,
  })
}

/** The fleet path of verify, once its plan is made (helpers/cli/prepare.ts): first contact, the suites, the combined outputs. */
export async function runFleet(plan: FleetPlan, io: VerifyIo, streams: RunStreams): Promise<number> {
  const out = streams.lines
  out.write(
    `armproof fleet · ${plan.file} · ${plan.targets.length} target(s)${plan.shard ? ` (shard ${plan.shard.index}/${plan.shard.count} of ${plan.total})` : ''} · ${plan.concurrency === null ? 'as many at once as the run can afford' : `at most ${plan.concurrency} at once`}\n`,
  )
  const startedAt = new Date()
  // SIGINT / SIGTERM from first contact to the end: the targets done keep their verdicts; a target
  // under way, waiting for its slot or not yet started is `interrupted` with the steps it had
  // judged (none for one not started); a target refused on first contact keeps `error`.
  let refusals: Array<FirstContactRefusal | undefined> = []
  let running: FleetPlan['targets'] = []
  let reporter: FleetReporter | undefined
  let contactedAt = startedAt
  /** A target refused on first contact: verdict error, no step judged, in every outcome of the run. */
  const refusedReport = (t: FleetPlan['targets'][number], refused: FirstContactRefusal): FleetReport['targets'][number] => ({
    name: t.label,
    index: t.index,
    report: buildReport({ target: t.target, steps: [], startedAt, finishedAt: contactedAt, error: `first contact: ${refused.message}` }),
  })
  /**
   * Every target's report as far as the run got: one refused on first contact keeps `error`; one
   * that had finished keeps its verdict; the others are marked (interrupted, or a contained failure:
   * `error` with no step judged, else its steps with the line as a note).
   */
  const partialTargets = (now: Date, mark: { interrupted: 'SIGINT' | 'SIGTERM' } | { contained: string }): FleetReport['targets'] => {
    const partial = reporter?.partialOutcomes() ?? []
    return plan.targets.map((t, j) => {
      const refused = refusals[j]
      if (refused) return refusedReport(t, refused)
      const o = partial[running.indexOf(t)]
      const done = o?.finishedAt != null
      const steps = o?.steps ?? []
      const input = {
        target: t.target,
        steps,
        startedAt: o?.startedAt ?? startedAt,
        finishedAt: o?.finishedAt ?? now,
        unhandled: o?.notes ?? [],
        truth: truthTable(t.target, steps),
      }
      if (done) return { name: t.label, index: t.index, report: buildReport(input) }
      if ('interrupted' in mark) return { name: t.label, index: t.index, report: buildReport({ ...input, interrupted: mark.interrupted }) }
      const line = mark.contained.replace(/^armproof: /, '')
      return {
        name: t.label,
        index: t.index,
        report: buildReport(steps.length === 0 ? { ...input, error: line } : { ...input, unhandled: [...input.unhandled, line] }),
      }
    })
  }
  const interrupt = new Interrupt(io.exit, (signal) => {
    const now = new Date()
    const targets = partialTargets(now, { interrupted: signal })
    const report = { ...combined(plan, startedAt, now, targets), exitCode: INTERRUPT_EXIT[signal] }
    const unwritten = writeFleetOutputsSync(plan, io, report, streams)
    out.write(`\n${fleetTable(report)}\n`)
    for (const line of unwritten) io.err.write(`armproof: ${line}\n`)
    out.write(
      `\nfleet INTERRUPTED by ${signal} · ${countsOf(report)} · exit ${report.exitCode}${plan.report && unwritten.length === 0 ? ` · partial report ${plan.report}` : ''}\n${fleetClosing(report, streams.color)}\n`,
    )
  })
  let phase: { name: Phase; where: string } = { name: 'first contact', where: `${plan.targets.length} target(s)` }
  const enter = (name: Phase, where: string): void => {
    phase = { name, where }
    io.enterPhase?.(name)
  }
  // Host programs start from the spawner, off this process's main thread (forked from this
  // process, which holds every target's run, each one would block it for milliseconds), and the
  // targets of one host share its survey (helpers/seams/host-gather.ts).
  const spawner = plan.targets.length > 1 && plan.targets.some((t) => t.target.mode !== 'replay')
  if (spawner) {
    useSpawner(true)
    useSharedReads(true)
  }
  // What a target's steps did not take of its reads ahead is dropped (cancelled) when the run ends.
  const dropReads: Array<() => void> = []
  try {
    enter('first contact', `${plan.targets.length} target(s)`)
    // First contact of every target side by side, before any step: a target whose operator mistake
    // shows here (DNS, TLS, 401/403, 404 on /health) ends at once with its own verdict `error` and
    // one line; the others run on.
    // Each target's host reads start now, beside its first contact and while vitest starts
    // (helpers/seams/read-ahead.ts); a target refused on first contact never takes them.
    for (const t of plan.targets) dropReads.push(startHostReads(t.target, plannedReads(t.target)))
    const contacted = await Promise.all(plan.targets.map((t) => contactTarget(t.target)))
    if (interrupt.stopped) return process.exitCode as number
    refusals = contacted
    contactedAt = new Date()
    for (const [i, r] of refusals.entries()) {
      if (!r) continue
      // A refused target's steps never run: its reads ahead are cancelled now, not when the fleet ends.
      dropReads[i]!()
      io.err.write(`${r.line.replace(/^armproof: /, `armproof: ${plan.targets[i]!.label}: `)}\n`)
    }
    running = plan.targets.filter((_, i) => !refusals[i])
    const targets = running.map((t) => ({ label: t.label, target: t.target }))
    reporter = new FleetReporter({ targets, out, err: io.err, live: streams.live, color: streams.color, width: out.columns ?? 160 })
    enter("the suites' setup", ARM_SUITE)
    // Every target's steps are tests of this one file: vitest's own cap must never be what holds a
    // target back (the fleet's --concurrency gate is, helpers/fleet/suite.ts).
    const failure =
      targets.length > 0
        ? await (io.runSuites ?? runArmSuite)({
            reporter,
            provide: { 'armproof:fleet': { targets, concurrency: plan.concurrency } },
            maxConcurrency: targets.length * 4 + 8,
            out,
            err: io.err,
          })
        : undefined
    if (interrupt.stopped) return process.exitCode as number
    enter('the report', plan.report ?? 'the report')
    const finishedAt = new Date()
    const outcomes = reporter.outcomes()
    const unwritten: string[] = []
    const reports: FleetReport['targets'] = []
    for (const [j, t] of plan.targets.entries()) {
      const refused = refusals[j]
      if (refused) {
        reports.push(refusedReport(t, refused))
        continue
      }
      const o = outcomes[running.indexOf(t)] ?? { steps: [], notes: [], startedAt: null, finishedAt: null }
      // A target none of whose steps was judged (its suite's setup failed): no steps, so verdict error.
      const judged = (reporter.partialOutcomes()[running.indexOf(t)]?.steps.length ?? 0) > 0
      const built = await targetReport(
        t.target,
        judged ? o.steps : [],
        o.notes,
        o.startedAt ?? startedAt,
        o.finishedAt ?? finishedAt,
        failure ?? (o.steps.length ? undefined : 'no step reported'),
        o.unwritten?.map((line) => `${t.label}: ${line}`),
      )
      unwritten.push(...built.unwritten)
      reports.push({ name: t.label, index: t.index, report: built.report })
    }
    const report = combined(plan, startedAt, finishedAt, reports)
    unwritten.push(...writeFleetOutputsSync(plan, io, report, streams))
    out.write(`
${fleetTable(report)}
`)
    // The workflow commands go with the runbook's lines (stderr under --json: the runner reads both).
    for (const line of githubAnnotations(
      io.env,
      report.targets.map((t) => ({ report: t.report, label: t.name })),
    ))
      out.write(`${line}
`)
    for (const line of unwritten) io.err.write(`armproof: ${line}\n`)
    out.write(
      `\nfleet ${report.verdict.toUpperCase()} · ${countsOf(report)} · exit ${report.exitCode} (the worst verdict)${plan.report && unwritten.length === 0 ? ` · report ${plan.report}` : ''}\n`,
    )
    if (report.targets.some((t) => t.report.verdict === 'green'))
      out.write(`next for the green targets: ${command('writeback')} --report ${plan.report ?? '<report.json>'} --vault <dir>\n`)
    out.write(`${fleetClosing(report, streams.color)}\n`)
    if (unwritten.length > 0) {
      io.err.write(
        `armproof: exit ${EXIT_OUTPUT_UNWRITTEN}: the verdict above stands (${report.verdict}), but ${unwritten.length} output(s) were not written\n`,
      )
      return EXIT_OUTPUT_UNWRITTEN
    }
    return report.exitCode
  } catch (error) {
    // No stack trace, ever (helpers/cli/contain.ts): one line, the combined report, the worst exit.
    try {
      const line = containedLine(
        errorLine(error, null),
        { phase: phase.name, where: phase.where },
        'error where no step was judged, else not green',
      )
      const shown = redactAll(line, fleetKeys(plan))
      io.err.write(`${shown}\n`)
      const now = new Date()
      const report = combined(plan, startedAt, now, partialTargets(now, { contained: shown }))
      for (const unwritten of writeFleetOutputsSync(plan, io, report, streams)) io.err.write(`armproof: ${unwritten}\n`)
      return report.exitCode
    } catch {
      io.err.write('armproof: internal error, and another while reporting it; nothing was written\n')
      return EXIT_CODES.error
    }
  } finally {
    // Cancelled while the spawner still runs their programs: it ends them, then is let go once idle.
    for (const drop of dropReads) drop()
    if (spawner) {
      useSpawner(false)
      useSharedReads(false)
    }
    forgetGate()
    interrupt.dispose()
  }
}
