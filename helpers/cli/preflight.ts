// `armproof preflight` (`pnpm preflight`, `node bin/preflight.ts`): flags, env and .env → one
// target (verify's loader, with the options preflight takes) and preflight's own options → the
// checks (helpers/steps/preflight/run.ts), a line each as it is judged → the report → exit code:
// 0 ready to deploy, 1 not, 2 configuration (nothing contacted), 3 cannot tell, 4 the report unwritten.
import { existsSync, realpathSync, statSync } from 'node:fs'
import { isAbsolute, relative, resolve, sep } from 'node:path'
import { parse as parseDotenv } from 'dotenv'
import { envBoolean } from '../config/command-line.ts'
import { VERSION_TEXT } from '../config/invocation.ts'
import { formatProblems, loadConfig, dotenvProblem, readDotenv, type ConfigProblem, type Target } from '../config/load.ts'
import { EXIT_OUTPUT_UNWRITTEN, PREFLIGHT_OPTIONS, PREFLIGHT_VERIFY_FLAGS, type OptionFlag, type PreflightFlag } from '../config/options.ts'
import { outputProblem } from '../config/outputs.ts'
import { showValue } from '../config/shell.ts'
import { commandLineLayer, MAX_VALUE, optionReader, type CommandLine } from '../config/sources.ts'
import { targetProfile } from '../profiles/target.ts'
import { profileCheck } from '../profiles/verified.ts'
import { writeAtomic, writeAtomicSync } from '../seams/atomic.ts'
import { createHost } from '../seams/host.ts'
import { openSeams } from '../seams/open.ts'
import { redactingHost } from '../seams/redact.ts'
import { createContext } from '../steps/context.ts'
import { runPreflight } from '../steps/preflight/run.ts'
import { contactTarget } from '../steps/first-contact/contact.ts'
import { PREFLIGHT_STEP_IDS, type PreflightStepResult } from '../steps/preflight/registry.ts'
import { EXIT_CODES } from '../steps/verdict.ts'
import { buildPreflightReport, preflightFinalLine, type PreflightReport } from '../report/preflight.ts'
import { hostText } from '../report/head.ts'
import { stepDetail, stepLine } from '../report/terminal.ts'
import { colorChoice, paints } from './color.ts'
import { Interrupt } from './interrupt.ts'
import { preflightHelp, PREFLIGHT_VERIFY_OPTIONS } from './preflight-help.ts'
import type { OutStream } from './streams.ts'
import { userCwd } from './verify.ts'
import { canonicalValue, valueProblem } from '../config/knobs.ts'

export interface PreflightIo {
  rawArgs: readonly string[]
  env: Readonly<Record<string, string | undefined>>
  cwd: string
  out: OutStream
  err: OutStream
  /** Only an in-process test passes it: extra environment for the host commands (the reference engine's shims on PATH). */
  hostEnv?: Record<string, string>
  /**
   * Given by the command itself (bin/preflight.ts), never by an in-process caller: SIGINT and
   * SIGTERM are then caught, the checks made so far written as the report, marked interrupted, and
   * the process ended with this (130 / 143; the host commands still running end with it).
   */
  exit?: (code: number) => void
}

/** The id column: the longest check id. */
const ID_WIDTH = Math.max(...PREFLIGHT_STEP_IDS.map((id) => id.length))

/** verify's options and preflight's own, one table for the one parser. */
const TABLE = [...PREFLIGHT_VERIFY_OPTIONS, ...PREFLIGHT_OPTIONS]

/** verify's options the loader reads for preflight: all it takes but --value, which preflight judges itself (an illegal one is red, not a refusal). */
const LOADED: ReadonlySet<OptionFlag> = new Set(PREFLIGHT_VERIFY_FLAGS.filter((f) => f !== 'value'))

/** preflight's own options as read: the checkout, the env file, the report, --json. */
interface OwnOptions {
  checkout: string
  envFile: { shown: string; path: string } | null
  report: string | null
  json: boolean
}

/** One of preflight's own options: the command line, else its PREFLIGHT_* twin in env, else in .env. */
function ownRaw(
  cli: CommandLine,
  flag: PreflightFlag,
  env: Readonly<Record<string, string | undefined>>,
  dotenv: Readonly<Record<string, string>>,
): { value: string | boolean; from: string } | undefined {
  const spec = PREFLIGHT_OPTIONS.find((o) => o.flag === flag)!
  const given = (cli.layer.values as ReadonlyMap<string, string | boolean>).get(flag)
  if (given !== undefined) return { value: given, from: `--${flag}` }
  if (env[spec.env] !== undefined) return { value: env[spec.env]!, from: spec.env }
  if (dotenv[spec.env] !== undefined) return { value: dotenv[spec.env]!, from: `${spec.env} in .env` }
  return undefined
}

/** Whether `inner` is `outer` or below it. */
function inside(outer: string, inner: string): boolean {
  const rel = relative(outer, inner)
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel))
}

function readOwn(
  cli: CommandLine,
  env: Readonly<Record<string, string | undefined>>,
  dotenv: Readonly<Record<string, string>>,
  cwd: string,
  problems: ConfigProblem[],
): OwnOptions {
  const say = (from: string, message: string) => problems.push({ option: from, message: `${from}: ${message}` })
  const text = (flag: PreflightFlag): { value: string; from: string } | undefined => {
    const r = ownRaw(cli, flag, env, dotenv)
    if (!r || typeof r.value !== 'string' || r.value === '') return undefined
    if (/[\0\r\n]/.test(r.value) || r.value.length > MAX_VALUE) {
      say(r.from, `${showValue(r.value, 40)} must be one line (no newline or NUL) of at most ${MAX_VALUE} characters`)
      return undefined
    }
    return { value: r.value, from: r.from }
  }
  const checkoutRaw = text('checkout')
  const checkout = resolve(cwd, checkoutRaw?.value ?? '.')
  let checkoutOk = true
  try {
    if (!statSync(checkout).isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR' })
  } catch (error) {
    checkoutOk = false
    const code = (error as NodeJS.ErrnoException).code
    say(
      checkoutRaw?.from ?? '--checkout',
      `${showValue(checkoutRaw?.value ?? checkout)} is not a folder (${code === 'ENOENT' ? 'no such file or folder' : code === 'ENOTDIR' ? 'not a folder' : (code ?? 'error')}); give the folder deploy.sh runs from`,
    )
  }
  let envFile: OwnOptions['envFile'] = null
  const envRaw = text('env-file')
  if (envRaw) {
    const escapes = () =>
      say(
        envRaw.from,
        `${showValue(envRaw.value)} leaves the checkout ${checkout}; give the service's env file relative to --checkout, inside it`,
      )
    if (isAbsolute(envRaw.value)) say(envRaw.from, `${showValue(envRaw.value)} is absolute; give it relative to --checkout (${checkout})`)
    else if (checkoutOk) {
      const path = resolve(checkout, envRaw.value)
      if (!inside(checkout, path)) escapes()
      // A link inside the checkout that points out of it is refused the same way: the deploy would ship another file.
      else if (existsSync(path) && !inside(realpathSync(checkout), realpathSync(path))) escapes()
      else envFile = { shown: envRaw.value, path }
    }
  }
  const reportRaw = text('report')
  const report = reportRaw ? resolve(cwd, reportRaw.value) : null
  if (reportRaw) {
    const why = outputProblem({ option: reportRaw.from, path: reportRaw.value, kind: 'file' }, cwd)
    if (why) problems.push({ option: reportRaw.from, message: why })
  }
  let json = false
  const jsonRaw = ownRaw(cli, 'json', env, dotenv)
  if (jsonRaw) {
    const yes = typeof jsonRaw.value === 'boolean' ? jsonRaw.value : envBoolean(jsonRaw.value)
    if (yes === undefined)
      say(jsonRaw.from, `${showValue(String(jsonRaw.value), 40)} is not a yes/no word (1/0, true/false, yes/no, on/off)`)
    else json = yes
  }
  return { checkout, envFile, report, json }
}

/** What the run checks, or why it cannot start. */
type Prepared =
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'refused'; problems: ConfigProblem[] }
  | { kind: 'run'; target: Target; own: OwnOptions; value: { raw: string | null; from: string }; color: boolean | undefined }

function prepare(io: PreflightIo, dotenvText: string | undefined): Prepared {
  const cli = commandLineLayer(io.rawArgs, TABLE)
  if (cli.help) return { kind: 'help' }
  if (cli.version) return { kind: 'version' }
  const cwd = userCwd(io)
  const dotenv = dotenvText ? parseDotenv(dotenvText) : {}
  const problems: ConfigProblem[] = [...cli.problems]
  const config = loadConfig({ layers: [cli.layer], env: io.env, ...(dotenvText ? { dotenv: dotenvText } : {}), cwd, accepted: LOADED })
  if (!config.ok) problems.push(...config.problems)
  // --value, as verify reads it (its flag, VERIFY_VALUE, .env), judged by the checks rather than refused here.
  const valueReader = optionReader([cli.layer], io.env, dotenvText, new Set<OptionFlag>(['value']))
  const rawValue = valueReader.raw('value')
  problems.push(...valueReader.problems)
  // A value no knob can hold, written with a shell's syntax, is refused as verify refuses it (exit 2),
  // not judged: it is a hostile input, not a value the deploy might set by mistake.
  if (rawValue && typeof rawValue.value === 'string' && /[^A-Za-z0-9_.:+,=@%/-]/.test(rawValue.value))
    problems.push({
      option: rawValue.from,
      message: `${rawValue.from}: ${showValue(rawValue.value, 40)} holds characters no knob value has (a shell's quoting, expansion or operators, spaces); give the value as the env file writes it`,
    })
  const own = readOwn(cli, io.env, dotenv, cwd, problems)
  if (problems.length > 0 || !config.ok) return { kind: 'refused', problems }
  const value = { raw: rawValue && rawValue.value !== '' ? rawValue.value : null, from: rawValue?.from ?? '--value' }
  const { spec } = targetProfile(config.target)
  // The target's value, for the readers that take it (the header): the canonical one, where it is legal.
  const target = {
    ...config.target,
    value: value.raw !== null && valueProblem(spec, value.raw) === undefined ? canonicalValue(spec, value.raw) : null,
  }
  return { kind: 'run', target, own, value, color: cli.color }
}

/** The header: `armproof · preflight · demo · PREFILL_INTERLEAVE 0 → 1 · http://… · host local · checkout /srv/deploy`. */
function headerLine(target: Target, value: string | null, checkout: string): string {
  const def = targetProfile(target).spec.default
  const shown = (v: string | null) => v ?? (def !== null ? `${def} (default)` : 'the default')
  const line = [
    'armproof',
    'preflight',
    target.svc,
    `${target.knob} ${shown(target.previous)} → ${shown(value)}`,
    target.baseUrl ?? '',
    `host ${hostText(target.host)}`,
    `checkout ${checkout}`,
  ].join(' · ')
  // A profile no real build's output backs (SGLang's, radiance's): said before any check, as verify says it.
  const check = profileCheck(targetProfile(target).engine)
  return check.unverified ? `${line}\n  note: ${check.unverified}` : line
}

export async function preflight(io: PreflightIo): Promise<number> {
  let dotenvText: string | undefined
  try {
    dotenvText = readDotenv(io.cwd, io.env)
  } catch (error) {
    io.err.write(`${formatProblems([{ option: '.env', message: dotenvProblem(error) }])}\n`)
    return EXIT_CODES.error
  }
  const prepared = prepare(io, dotenvText)
  if (prepared.kind === 'help') {
    io.out.write(`${preflightHelp()}\n`)
    return 0
  }
  if (prepared.kind === 'version') {
    io.out.write(`${VERSION_TEXT}\n`)
    return 0
  }
  if (prepared.kind === 'refused') {
    io.err.write(`${formatProblems(prepared.problems)}\n`)
    return EXIT_CODES.error
  }
  const { target, own, value } = prepared
  const lines = own.json ? io.err : io.out
  const color = paints(colorChoice(prepared.color, io.env), lines, io.env)
  const width = lines.isTTY === true ? (lines.columns ?? 120) : Infinity
  const startedAt = new Date()
  const steps: PreflightStepResult[] = []
  let error: string | undefined
  // An illegal value is shown as the checks show it (escaped, cut): it may hold anything.
  lines.write(`${headerLine(target, target.value ?? (value.raw === null ? null : showValue(value.raw, 40)), own.checkout)}\n`)
  // First contact, as verify makes it: what only the operator can fix (a host name that does not
  // resolve, TLS, 401/403, 404 on /health, a port nothing on --host serves) ends the run, exit 2.
  const refused = await contactTarget(target, io.hostEnv)
  if (refused) {
    io.err.write(`${refused.line}\n`)
    const report = buildPreflightReport({
      target,
      steps: [],
      value: target.value,
      startedAt,
      finishedAt: new Date(),
      error: `first contact: ${refused.message}`,
    })
    return await writeReport(io, own, report, lines, color)
  }
  // Ctrl-C, a CI cancel: the checks made so far are the report, marked interrupted (helpers/cli/interrupt.ts).
  const interrupt = new Interrupt(io.exit, (signal) => {
    const partial = buildPreflightReport({ target, steps, value: target.value, startedAt, finishedAt: new Date(), interrupted: signal })
    if (own.report) {
      try {
        writeAtomicSync(own.report, `${JSON.stringify(partial, null, 2)}\n`)
      } catch (e) {
        io.err.write(
          `armproof: --report ${own.report} could not be written (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})\n`,
        )
      }
    }
    if (own.json) io.out.write(`${JSON.stringify(partial, null, 2)}\n`)
    lines.write(`\n${preflightFinalLine(partial, { color, reportPath: own.report })}\n`)
  })
  const seams = await openSeams(target, io.hostEnv ? { hostEnv: io.hostEnv } : {})
  try {
    const ctx = createContext({ target, ...seams })
    const local = redactingHost(
      createHost({ host: { kind: 'local' }, sshOpts: [], deployUser: null, ...(io.hostEnv ? { env: io.hostEnv } : {}) }),
      target.apiKey,
    )
    await runPreflight(ctx, {
      value,
      checkout: own.checkout,
      envFile: own.envFile,
      local,
      // A long wait (an engine still loading, a slow host) says so, in a plain line.
      progress: (line) => lines.write(`  … ${line}\n`),
      onStep: (s) => {
        steps.push(s)
        lines.write(`${stepLine(s, steps.length - 1, { color, width, idWidth: ID_WIDTH })}\n`)
        lines.write(`${stepDetail(s, { color, always: true })}\n`)
      },
    })
  } catch (e) {
    // An exception no check expected: the checks not made are named, and the run cannot tell.
    error = `preflight stopped after ${steps.length} check${steps.length === 1 ? '' : 's'}: ${(e as Error).message ?? String(e)}`
  } finally {
    interrupt.dispose()
    await seams.close().catch(() => {})
  }
  if (interrupt.stopped) return process.exitCode as number
  const armed = steps.find((s) => s.id === 'preflight.value')?.evidence.value
  const report: PreflightReport = buildPreflightReport({
    target,
    steps,
    value: typeof armed === 'string' ? armed : target.value,
    startedAt,
    finishedAt: new Date(),
    // No check said the deploy is wrong, and not all were made: cannot tell (a note keeps it from ready).
    notes: error !== undefined ? [error] : [],
  })
  return await writeReport(io, own, report, lines, color)
}

/** The report to --report and (--json) stdout, the final line; the exit code (4: the report could not be written). */
async function writeReport(io: PreflightIo, own: OwnOptions, report: PreflightReport, lines: OutStream, color: boolean): Promise<number> {
  let unwritten: string | undefined
  if (own.report) {
    try {
      await writeAtomic(own.report, `${JSON.stringify(report, null, 2)}\n`)
    } catch (e) {
      unwritten = `--report ${own.report} could not be written (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`
    }
  }
  if (own.json) io.out.write(`${JSON.stringify(report, null, 2)}\n`)
  lines.write(`\n${preflightFinalLine(report, { color, reportPath: unwritten ? null : own.report })}\n`)
  if (unwritten) {
    io.err.write(`armproof: ${unwritten}; the verdict above stands (${report.verdict})\n`)
    return EXIT_OUTPUT_UNWRITTEN
  }
  return report.exitCode
}
