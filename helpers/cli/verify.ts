// `pnpm verify`: argv → config → the suites under vitest → reports → exit code. Thin on
// purpose; argv and streams are injectable so the CLI itself is testable.
import { statSync } from 'node:fs'
import { isAbsolute } from 'node:path'
import { contactTarget } from '../steps/first-contact/contact.ts'
import { startHostReads } from '../seams/open.ts'
import { plannedReads } from '../steps/host-reads.ts'
import { formatProblems, dotenvProblem, readDotenv, type Target } from '../config/load.ts'
import { EXIT_OUTPUT_UNWRITTEN } from '../config/options.ts'
import { verifyHelp } from './verify-help.ts'
import { buildReport, type Report, type ReportInput } from '../report/json.ts'
import { RunbookReporter } from '../report/reporter.ts'
import { finalLine } from '../report/terminal.ts'
import { reportClosingLine } from '../report/closing.ts'
import { VERSION_TEXT } from '../config/invocation.ts'
import { runStreams, type RunStreams, type VerifyIo } from './streams.ts'
import { recordVerdict, targetRendered, writeOutputs } from './write-outputs.ts'
import { evidenceLines } from '../report/evidence.ts'
import { githubAnnotations } from '../report/github.ts'
import { formatTruth } from '../report/truth.ts'
import { EXIT_CODES } from '../steps/verdict.ts'
import { firstMistake, mistakeLine } from '../steps/mistake.ts'
import { Interrupt } from './interrupt.ts'
import { runArmSuite } from './run-suites.ts'
import { judgedReport } from './judged-report.ts'
import { runFleet } from './fleet.ts'
import { prepareRun } from './prepare.ts'
import { commandLineLayer, type CommandLine } from '../config/sources.ts'
import { contain, startPhase, type Phase, type RunPhase } from './contain.ts'
import { ARM_SUITE } from './suites-project.ts'

export type { VerifyIo } from './streams.ts'

/** The suites ran, but no proof step was judged: their setup failed (vitest held the error, its text is the message). */
class SuitesSetupFailed extends Error {}

/** The package scripts that run `verify` (`pnpm verify`, `pnpm demo`, `pnpm serve`, `pnpm effect`) or `preflight`: pnpm starts them from the package root. */
const OWN_SCRIPTS: readonly string[] = ['verify', 'preflight', 'demo', 'serve', 'effect']

/**
 * The folder the operator ran the command from. pnpm runs a script from the package root and says
 * where it was started in INIT_CWD; that is honoured only under our own script (npm_lifecycle_event),
 * never when INIT_CWD merely leaks from an outer pnpm into another process (`armproof verify` run
 * by a `pnpm test`, a CI step started by pnpm).
 */
export function userCwd(io: Pick<VerifyIo, 'env' | 'cwd'>): string {
  const init = io.env.INIT_CWD
  if (init && isAbsolute(init) && OWN_SCRIPTS.includes(io.env.npm_lifecycle_event ?? '')) {
    try {
      if (statSync(init).isDirectory()) return init
    } catch {
      // gone: the process's own folder then
    }
  }
  return io.cwd
}

/**
 * The one-target interrupt (helpers/cli/interrupt.ts): the steps judged so far keep their
 * verdicts; the report, JUnit and summary are written marked interrupted; the INTERRUPTED line.
 */
function oneTargetInterrupt(target: Target, io: VerifyIo, streams: RunStreams): Interrupt & { follow(reporter: RunbookReporter): void } {
  let reporter: RunbookReporter | undefined
  const interrupt = new Interrupt(io.exit, (signal) => {
    reporter?.clearProgress()
    const report = buildReport({
      target,
      steps: reporter?.partialSteps() ?? [],
      startedAt: interrupt.startedAt,
      finishedAt: new Date(),
      unhandled: [],
      interrupted: signal,
    })
    const unwritten = writeOutputsSync(target, io, report, streams)
    closeRun(streams, report, unwritten.length > 0 ? null : target.report)
    for (const line of unwritten) io.err.write(`armproof: ${line}\n`)
  })
  return Object.assign(interrupt, { follow: (r: RunbookReporter) => void (reporter = r) })
}

/** The verdict line and the closing line (counts and duration), last of the run's lines. */
function closeRun(streams: RunStreams, report: Report, reportPath: string | null): void {
  streams.lines.write(
    `\n${finalLine(report, { color: streams.color, reportPath })}\n${reportClosingLine(report, { color: streams.color })}\n`,
  )
}

async function runSuites(
  target: Target,
  io: VerifyIo,
  interrupt: ReturnType<typeof oneTargetInterrupt>,
  phase: RunPhase,
  streams: RunStreams,
): Promise<number> {
  const reporter = new RunbookReporter({
    target,
    out: streams.lines,
    err: io.err,
    color: streams.color,
    live: streams.live,
    width: streams.width,
  })
  const startedAt = interrupt.startedAt
  interrupt.follow(reporter)
  phase.judged = () => reporter.judged()
  const failure = await (io.runSuites ?? runArmSuite)({ reporter, provide: { 'armproof:target': target }, out: streams.lines, err: io.err })
  if (interrupt.stopped) return process.exitCode as number
  const steps = reporter.steps()
  const unhandled = [...reporter.unhandled(), ...(failure ? [`armproof could not run the suites: ${failure}`] : [])]
  // No step judged at all: the suites' setup failed (the run's seams, the suite file): contained as such.
  if (reporter.judged().length === 0)
    throw new SuitesSetupFailed((unhandled[0] ?? 'no proof step ran').replace(/^(suite|unhandled) error: /, ''))
  enter(io, phase, 'the report', target.report ?? 'the report')
  const { report, notes } = judgedReport(target, steps, unhandled, startedAt, new Date())
  for (const note of notes) streams.lines.write(`  ! ${note}\n`)
  // The outputs were checked before the run; a write that still fails (disk full, a path removed
  // meanwhile) is said in one line each, the verdict is still printed, and the exit code says it.
  const unwritten = writeOutputsSync(target, io, report, streams)
  // A recording that could not be written (a full disk, a refused folder) leaves the verdict as judged: exit 4.
  unwritten.push(...recordVerdict(target, report, reporter.unwritten()))
  streams.lines.write(`\n${formatTruth(report.truth!)}\n`)
  for (const line of evidenceLines(report)) streams.lines.write(`${line}\n`)
  // The workflow commands go with the runbook's lines (stderr under --json: the runner reads both).
  for (const line of githubAnnotations(io.env, [{ report }])) streams.lines.write(`${line}\n`)
  for (const line of unwritten) io.err.write(`armproof: ${line}\n`)
  // An operator's mistake a step found after first contact: its one line, as first contact prints its own.
  const mistake = firstMistake(report.steps)
  if (mistake) io.err.write(`${mistakeLine(mistake)}\n`)
  closeRun(streams, report, unwritten.length > 0 ? null : target.report)
  if (unwritten.length > 0) {
    io.err.write(
      `armproof: exit ${EXIT_OUTPUT_UNWRITTEN}: the verdict above stands (${report.verdict}), but ${unwritten.length === 1 ? 'an output was' : `${unwritten.length} outputs were`} not written\n`,
    )
    return EXIT_OUTPUT_UNWRITTEN
  }
  return EXIT_CODES[report.verdict]
}

/**
 * Writes the report, JUnit and summaries at once (an interrupt, a first-contact refusal, a contained
 * failure), and the report to stdout under --json; the lines of what could not be written.
 */
function writeOutputsSync(target: Target, io: VerifyIo, report: Report, streams: RunStreams | undefined): string[] {
  return writeOutputs(target, targetRendered(target, report), { env: io.env, json: streams?.json ?? null }, [target.apiKey])
}

/**
 * First contact (live and record): what only the operator can fix ends the run here, before any
 * proof step is judged: exit 2, the cause and the fix in one line, and the report says `error`.
 */
async function checkFirstContact(target: Target, io: VerifyIo, streams: RunStreams): Promise<number | undefined> {
  const startedAt = new Date()
  const refused = await contactTarget(target, io.hostEnv)
  if (!refused) return undefined
  io.err.write(`${refused.line}\n`)
  const input: ReportInput = { target, steps: [], startedAt, finishedAt: new Date(), error: `first contact: ${refused.message}` }
  for (const line of writeOutputsSync(target, io, buildReport(input), streams)) io.err.write(`armproof: ${line}\n`)
  return EXIT_CODES.error
}

/** Marks the phase the run enters (and lets an in-process test throw there). */
function enter(io: VerifyIo, phase: RunPhase, name: Phase, where: string): void {
  phase.phase = name
  phase.where = where
  io.enterPhase?.(name)
}

/**
 * `pnpm verify`: every phase contained (helpers/cli/contain.ts): an exception no phase expected
 * is one line and a written report, never a stack trace.
 */
export async function verify(io: VerifyIo): Promise<number> {
  const phase = startPhase()
  let streams: RunStreams | undefined
  try {
    // The command line, read once: for the streams, then for the run (helpers/cli/prepare.ts).
    const commandLine = commandLineLayer(io.rawArgs)
    const chosen = runStreams(io, commandLine)
    if ('message' in chosen) {
      io.err.write(`${formatProblems([chosen])}\n`)
      return EXIT_CODES.error
    }
    streams = chosen
    return await verifyPhases(io, phase, chosen, commandLine)
  } catch (error) {
    // vitest held the suites' own failure; it is contained as the suites' setup.
    if (error instanceof SuitesSetupFailed) {
      phase.phase = "the suites' setup"
      phase.where = ARM_SUITE
    }
    return contain(error, phase, {
      err: io.err,
      write: (report) => (phase.target ? writeOutputsSync(phase.target, io, report, streams) : []),
    })
  }
}

async function verifyPhases(io: VerifyIo, phase: RunPhase, streams: RunStreams, commandLine: CommandLine): Promise<number> {
  enter(io, phase, 'the configuration', 'flags, env and .env')
  let dotenv: string | undefined
  try {
    dotenv = readDotenv(io.cwd, io.env)
  } catch (error) {
    io.err.write(`${formatProblems([{ option: '.env', message: dotenvProblem(error) }])}\n`)
    return EXIT_CODES.error
  }
  const prepared = prepareRun({ argv: io.rawArgs, commandLine, env: io.env, dotenv, cwd: io.cwd, userCwd: userCwd(io) })
  if (prepared.kind === 'help') {
    io.out.write(`${verifyHelp()}\n`)
    return 0
  }
  if (prepared.kind === 'version') {
    io.out.write(`${VERSION_TEXT}\n`)
    return 0
  }
  for (const warning of prepared.warnings) io.err.write(`armproof: warning: ${warning}\n`)
  if (prepared.kind === 'refused') {
    io.err.write(`${formatProblems(prepared.problems)}\n`)
    return EXIT_CODES.error
  }
  // A fleet run (--targets FILE): helpers/cli/fleet.ts.
  if (prepared.kind === 'fleet') return runFleet(prepared.plan, io, streams)
  const run = { target: prepared.target }
  phase.target = run.target
  const interrupt = oneTargetInterrupt(run.target, io, streams)
  let dropReads = (): void => {}
  try {
    enter(io, phase, 'first contact', `${run.target.baseUrl ?? '(replay)'}: /health, /v1/models, /metrics`)
    // The steps' host reads start now, beside first contact and while vitest starts
    // (helpers/seams/read-ahead.ts); what the steps did not take is dropped when the run ends.
    dropReads = startHostReads(run.target, plannedReads(run.target), io.hostEnv)
    const refused = await checkFirstContact(run.target, io, streams)
    if (interrupt.stopped) return process.exitCode as number
    if (refused !== undefined) return refused
    enter(io, phase, "the suites' setup", ARM_SUITE)
    return await runSuites(run.target, io, interrupt, phase, streams)
  } finally {
    dropReads()
    interrupt.dispose()
  }
}
