// `pnpm verify`: argv → config → the suites under vitest → reports → exit code. Thin on
// purpose; argv and streams are injectable so the CLI itself is testable.
import { appendFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { formatProblems, loadConfig, readDotenv, type Target } from '../config/load.ts'
import { markRecordedVerdict, targetForRun } from '../seams/recording.ts'
import { KNOB_NAMES } from '../config/knobs.ts'
import { EXIT_OUTPUT_UNWRITTEN, helpText } from './options.ts'
import { outputProblems } from '../config/outputs.ts'
import { buildReport, writeJson } from '../report/json.ts'
import { writeAtomic } from '../seams/atomic.ts'
import { junitXml } from '../report/junit.ts'
import { markdownSummary } from '../report/markdown.ts'
import { RunbookReporter } from '../report/reporter.ts'
import { finalLine } from '../report/terminal.ts'
import { evidenceLines } from '../report/evidence.ts'
import { formatTruth, truthTable } from '../report/truth.ts'
import { redactText } from '../seams/redact.ts'
import { EXIT_CODES } from '../steps/verdict.ts'
import { recordingRef, verdictMismatch } from '../seams/replay-verdict.ts'
import { ARM_SUITE, SUITES_PROJECT } from '../../suites/project.ts'
import { verifyFleet } from './fleet.ts'
import { isFleetRun, strayFleetFlags } from '../fleet/plan.ts'

export interface Stream {
  write(text: string): unknown
  isTTY?: boolean
  columns?: number
}

export interface VerifyIo {
  rawArgs: readonly string[]
  env: Readonly<Record<string, string | undefined>>
  cwd: string
  out: Stream
  err: Stream
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** Runs the suites for a validated target; returns the exit code. */
async function runSuites(target: Target, io: VerifyIo): Promise<number> {
  const ci = io.env.CI === 'true' || io.env.CI === '1'
  const terminal = io.err.isTTY === true && !ci
  const color = terminal && io.env.NO_COLOR === undefined
  const reporter = new RunbookReporter({
    target,
    out: io.out,
    err: io.err,
    color,
    live: terminal,
    width: io.out.columns ?? 120,
  })
  const startedAt = new Date()
  let failure: string | undefined
  try {
    // Loaded here, not at the top: --help and refused configurations answer without it.
    const { startVitest } = await import('vitest/node')
    const vitest = await startVitest(
      'test',
      [ARM_SUITE],
      {
        root: ROOT,
        config: false,
        ...SUITES_PROJECT,
        run: true,
        watch: false,
        reporters: [reporter],
        provide: { 'armproof:target': target },
      },
      {},
      { stdout: io.out as NodeJS.WriteStream, stderr: io.err as NodeJS.WriteStream },
    )
    await vitest.close()
  } catch (error) {
    failure = error instanceof Error ? error.message : String(error)
  }
  const steps = reporter.steps()
  const helpDefault = steps.find((s) => s.id === 'help')?.buildDefault
  const unhandled = [...reporter.unhandled(), ...(failure ? [`armproof could not run the suites: ${failure}`] : [])]
  // A replay: the recording it re-judged; a recorded exchange this run asked for and did not find
  // means the fixtures do not hold this run: inconclusive (exit 3; exit 2 is never after a step
  // was judged), said in one line with the command that records it again.
  const replayed = target.mode === 'replay' ? recordingRef(target.fixtures) : null
  const miss = steps.map((s) => s.evidence.error as { name?: string; message?: string } | undefined).find((e) => e?.name === 'ReplayMiss')
  const missNote = miss ? `the recording does not hold this run: ${miss.message ?? 'a recorded exchange is missing'}` : null
  if (missNote) io.out.write(`  ! ${missNote}\n`)
  const input = {
    target,
    steps,
    startedAt,
    finishedAt: new Date(),
    unhandled: missNote ? [...unhandled, missNote] : unhandled,
    truth: truthTable(target, steps),
    ...(typeof helpDefault === 'string' ? { defaultFromHelp: helpDefault } : {}),
    ...(replayed ? { recording: replayed.ref } : {}),
  }
  let report = buildReport(input)
  // The replay's verdicts (run and steps) set against the recorded ones: a difference keeps it from green.
  const note = replayed && !miss ? verdictMismatch(replayed.meta, report.verdict, report.steps) : null
  if (note) {
    io.out.write(`  ! ${note}\n`)
    report = buildReport({ ...input, unhandled: [...input.unhandled, note] })
  }
  // The outputs were checked before the run; a write that still fails (disk full, a path removed
  // meanwhile) is said in one line each, the verdict is still printed, and the exit code says it.
  const unwritten: string[] = []
  const attempt = async (what: string, path: string, write: () => Promise<void> | void): Promise<void> => {
    try {
      await write()
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      unwritten.push(`could not write ${what} to ${path}: ${redactText(code ?? (error as Error).message, target.apiKey)}`)
    }
  }
  if (target.report) await attempt('the JSON report', target.report, () => writeJson(target.report!, report))
  if (target.junit) await attempt('the JUnit XML', target.junit, () => writeAtomic(target.junit!, junitXml(report)))
  const summary = io.env.GITHUB_STEP_SUMMARY
  if (summary) await attempt('the step summary', summary, () => appendFile(summary, `${markdownSummary(report, { reportPath: target.report })}\n`))
  if (target.mode === 'record') await attempt("the recording's verdict", target.fixtures, () => markRecordedVerdict(target.fixtures, report.verdict, Object.fromEntries(report.steps.map((s) => [s.id, s.verdict]))))
  io.out.write(`\n${formatTruth(report.truth!)}\n`)
  for (const line of evidenceLines(report)) io.out.write(`${line}\n`)
  for (const line of unwritten) io.err.write(`armproof: ${line}\n`)
  io.out.write(`\n${finalLine(report, { color, reportPath: unwritten.length > 0 ? null : target.report })}\n`)
  if (unwritten.length > 0) {
    io.err.write(`armproof: exit ${EXIT_OUTPUT_UNWRITTEN}: the verdict above stands (${report.verdict}), but ${unwritten.length === 1 ? 'an output was' : `${unwritten.length} outputs were`} not written\n`)
    return EXIT_OUTPUT_UNWRITTEN
  }
  return EXIT_CODES[report.verdict]
}

export async function verify(io: VerifyIo): Promise<number> {
  let dotenv: string | undefined
  try {
    dotenv = readDotenv(io.cwd, io.env)
  } catch (error) {
    io.err.write(`${formatProblems([{ option: '.env', message: `.env: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); fix it, or set VERIFY_NO_DOTENV=1` }])}\n`)
    return EXIT_CODES.error
  }
  // A fleet run (--targets FILE): helpers/cli/fleet.ts. --help still answers here.
  if (isFleetRun(io.rawArgs, io.env) && !io.rawArgs.some((a) => a === '--help' || a === '-h')) return verifyFleet(io, dotenv)
  const config = loadConfig({ argv: io.rawArgs, env: io.env, cwd: io.cwd, ...(dotenv ? { dotenv } : {}) })
  const stray = config.ok ? strayFleetFlags(io.rawArgs) : []
  if (stray.length > 0) {
    io.err.write(`${formatProblems(stray)}\n`)
    return EXIT_CODES.error
  }
  if (!config.ok) {
    if (config.help) {
      io.out.write(`${helpText(KNOB_NAMES)}\n`)
      return 0
    }
    io.err.write(`${formatProblems(config.problems)}\n`)
    return EXIT_CODES.error
  }
  for (const warning of config.warnings) io.err.write(`armproof: warning: ${warning}\n`)
  const run = targetForRun(config.target)
  if ('problems' in run) {
    io.err.write(`${formatProblems(run.problems)}\n`)
    return EXIT_CODES.error
  }
  const unwritable = outputProblems(run.target, io.env, io.cwd)
  if (unwritable.length > 0) {
    io.err.write(`${formatProblems(unwritable)}\n`)
    return EXIT_CODES.error
  }
  return runSuites(run.target, io)
}
