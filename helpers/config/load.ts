// The option layers (./sources.ts: the command line, or a fleet target's entry, the command line
// and the file's defaults:; then env, then .env) → one validated Target, before anything is
// contacted. Every problem is collected and reported at once (exit 2). The jobs are each their
// module: where a value comes from (./sources.ts), what is armed (./armed.ts), the API key
// (./api-key.ts), how the engine is reached (./reach.ts), the files (./run-files.ts), the meter's
// Prometheus (./prometheus-options.ts); this file puts the Target together.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { KnobName } from './knobs.ts'
import type { ProfileDoc } from '../profiles/doc.ts'
import { API_KEY_ENV, type OptionFlag } from './options.ts'
import { SVC_NAME, showValue } from './shell.ts'
import { readReach, USER_RE, type HostSpec } from './reach.ts'
import type { Runtime } from './runtime.ts'
import { parseSkip, type SkippableProbe } from './skips.ts'
import { endpointUrl } from './url.ts'
import { commandLineLayer, optionReader, type CommandLine, type ConfigProblem, type OptionLayer } from './sources.ts'
import { readArmed } from './armed.ts'
import { loadApiKey } from './api-key.ts'
import { readFiles, type RunFiles } from './run-files.ts'
import { readPrometheus } from './prometheus-options.ts'
import { readBaseline, type Baseline } from './baseline.ts'

export type Mode = 'live' | 'record' | 'replay'
/** When root-only host reads use `sudo -n`: `auto` only after the plain read was refused. */
export type SudoMode = 'auto' | 'always' | 'never'
export type { HostSpec }
export type { ConfigProblem, OptionLayer } from './sources.ts'
export { keyFromFileText } from './api-key.ts'

/**
 * One validated run request. Plain data: it crosses into vitest's runtime (cloned) through
 * `provide`. The fixtures folder, the outputs, the CA file and --force are the run's files (./run-files.ts).
 */
export interface Target extends RunFiles {
  svc: string
  knob: KnobName
  /** The engine profile the run reads the engine by (`--engine`), as written, its knobs with `--catalog`'s added or replacing theirs. */
  engine: ProfileDoc
  /** The value the knob should now have; `null` means "the default" (resolved from --help for enums). */
  value: string | null
  previous: string | null
  baseUrl: string | null
  apiKey: string | null
  model: string | null
  host: HostSpec
  sshOpts: string[]
  /** `--runtime`: how the host runs the engine (the default commands for pid, ledger, --help and drop-ins). */
  runtime: Runtime
  /** `--kube-opts`, each `--name=value` (kubernetes only; validated: never a secret). */
  kubeOpts: string[]
  /** `--skip`: the probes the served model cannot take, shown skipped with why and declared in the report. */
  skip: SkippableProbe[]
  process: string
  /** `--pid-cmd`: a template printing the engine's pid ({svc}, {unit}, {port}); null: not given. */
  pidCmd: string | null
  deployUser: string | null
  sudo: SudoMode
  ledgerCmd: string
  helpCmd: string
  /** The systemd unit standing for the engine; null: none (a pod; a docker container or a bare process without --unit): the drop-in gate is skipped, with why. */
  unit: string | null
  dropinCheck: boolean
  healthBudgetMs: number
  meterWindowMs: number
  probeTimeoutMs: number
  hostTimeoutMs: number
  mode: Mode
  /** Read the meter through this Prometheus (credentials refused) instead of /metrics; null: scrape /metrics. */
  prometheusUrl: string | null
  /** `--prometheus-match` as given (validated); null: `{instance="<host:port of --base-url>"}`. */
  prometheusMatch: string | null
  /**
   * The one-flag law's baseline (`--baseline-report`, else `--vault`), read before contact; null:
   * neither was given. Absent only in a recording made before the law (its replay skips the step).
   */
  baseline?: Baseline | null
}

export type ConfigResult =
  | { ok: true; target: Target; warnings: string[] }
  | { ok: false; problems: ConfigProblem[]; help?: boolean; version?: boolean }

export interface ConfigInput {
  /** The command line, read as one layer; ignored when `commandLine` or `layers` is given. */
  argv?: readonly string[]
  /** The command line already read (./sources.ts `commandLineLayer`). */
  commandLine?: CommandLine
  /** The option layers, highest first, already read (a fleet's target: its entry, the command line, defaults:). */
  layers?: readonly OptionLayer[]
  env?: Readonly<Record<string, string | undefined>>
  /** Contents of `.env`, if any. */
  dotenv?: string
  /** Where a relative --api-key-file (and a profile, a catalog, a CA file) is found; default the process's working directory. */
  cwd?: string
  /**
   * The key files this run has read, by path, and their text: a fleet's targets share one (a pipe,
   * `--api-key-file <(pass show endpoint)`, can be read only once).
   */
  keyFiles?: Map<string, string>
  /**
   * The options this command takes (preflight takes only some of verify's): any other is read as
   * if no layer, env or .env gave it (its default). Undefined: every option.
   */
  accepted?: ReadonlySet<OptionFlag>
}

/** Builds the Target from its layers, env and .env; returns every problem found, never throws. */
export function loadConfig(input: ConfigInput): ConfigResult {
  const cwd = input.cwd ?? process.cwd()
  let layers = input.layers
  const early: ConfigProblem[] = []
  if (!layers) {
    const cli = input.commandLine ?? commandLineLayer(input.argv ?? [])
    if (cli.help) return { ok: false, problems: [], help: true }
    if (cli.version) return { ok: false, problems: [], version: true }
    early.push(...cli.problems)
    layers = [cli.layer]
  }
  const read = optionReader(layers, input.env ?? {}, input.dotenv, input.accepted)
  read.problems.push(...early)

  const svcRaw = read.required('svc')
  let svc = ''
  if (svcRaw) {
    if (SVC_NAME.re.test(svcRaw.value)) svc = svcRaw.value
    else if (/^\.{1,2}$/.test(svcRaw.value))
      read.problem(
        svcRaw,
        `${showValue(svcRaw.value)} is a path step, not a service name (the fixtures folder is fixtures/<svc>/<knob>); give the container or unit name`,
      )
    else read.problem(svcRaw, `${showValue(svcRaw.value)} must match [A-Za-z0-9_.-]+ and not start with "-"`)
  }

  const { profile, knobName, entry, value, previous } = readArmed(read, cwd)

  const mode = read.oneOf<Mode>('mode', 'mode', ['live', 'record', 'replay'], 'live')

  let baseUrl: string | null = null
  const urlRaw = read.raw('base-url')
  if (urlRaw && urlRaw.value !== '') {
    const checked = endpointUrl(urlRaw.value, `put the key in ${API_KEY_ENV} (env or .env) or pass --api-key-file PATH`)
    if ('problem' in checked) read.problem(urlRaw, checked.problem)
    else baseUrl = checked.url
  } else if (mode !== 'replay' && !read.refused('base-url')) {
    read.problems.push({
      option: '--base-url',
      message: `--base-url (or VERIFY_BASE_URL) is required in ${mode} mode`,
      key: 'base-url',
      missing: true,
    })
  }

  const apiKey = loadApiKey(read, cwd, input.keyFiles)

  const model = read.checked('model', /^[^\s\0]{1,256}$/, 'must be one model id without spaces')

  // Where the engine runs and how it is reached, under its runtime (./reach.ts).
  const { runtime, host, sshOpts, kubeOpts, unit, ledgerCmd, helpCmd, pidCmd } = readReach(read, svc, profile?.engine.help.command)

  // Not starting with "-": pidof would read it as one of its options.
  const processName =
    read.checked('process', /^[A-Za-z0-9_.][A-Za-z0-9_.-]{0,63}$/, 'must match [A-Za-z0-9_.-]+ and not start with "-"') ??
    profile?.engine.process ??
    'radiance'
  const deployUser = read.checked('deploy-user', USER_RE, 'must match [a-z_][a-z0-9_-]*') ?? null
  const sudo = read.oneOf<SudoMode>('sudo', 'sudo mode', ['auto', 'always', 'never'], 'auto')

  let skip: SkippableProbe[] = []
  const skipRaw = read.raw('skip')
  if (skipRaw && skipRaw.value !== '') {
    const parsed = parseSkip(skipRaw.value)
    if ('problems' in parsed) for (const p of parsed.problems) read.problem(skipRaw, p)
    else skip = parsed.skip
  }

  const dropinCheck = !read.switchOrEnv('no-dropin-check', 'VERIFY_DROPIN_CHECK', true)

  const healthBudgetMs = read.duration('health-budget', '15m')
  const meterWindowMs = read.duration('meter-window', '5m')
  const probeTimeoutMs = read.duration('probe-timeout', '2m')
  const hostTimeoutMs = read.duration('host-timeout', '30s')

  const { fixtures, report, junit, summary, caFile, force } = readFiles(read, svc, knobName, cwd)
  const { prometheusUrl, prometheusMatch } = readPrometheus(read)
  // Read before contact, so a replay takes it from its recording (it is part of the target).
  const baseline = mode === 'replay' ? null : readBaseline(read, svc, baseUrl, cwd)

  // The fleet's own options are read by helpers/fleet/plan.ts; here only refused when malformed.
  for (const flag of ['targets', 'concurrency', 'shard', 'run-id'] as const) read.raw(flag)

  if (read.problems.length > 0 || !knobName || !entry || !profile) return { ok: false, problems: read.problems }
  return {
    ok: true,
    warnings: read.warnings,
    target: {
      svc,
      knob: knobName,
      engine: profile.doc,
      value,
      previous,
      baseUrl,
      apiKey,
      model: model ?? null,
      host,
      sshOpts,
      runtime,
      kubeOpts,
      skip,
      process: processName,
      pidCmd,
      deployUser,
      sudo,
      ledgerCmd,
      helpCmd,
      unit,
      dropinCheck,
      healthBudgetMs,
      meterWindowMs,
      probeTimeoutMs,
      hostTimeoutMs,
      mode,
      fixtures,
      report,
      junit,
      summary,
      caFile,
      force,
      prometheusUrl,
      prometheusMatch,
      baseline: baseline ?? null,
    },
  }
}

/** The contents of `<cwd>/.env`, unless there is none or VERIFY_NO_DOTENV=1. */
export function readDotenv(cwd: string, env: Readonly<Record<string, string | undefined>>): string | undefined {
  if (env.VERIFY_NO_DOTENV === '1') return undefined
  const path = join(cwd, '.env')
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined
}

/** What a `.env` that exists but cannot be read (readDotenv threw) is refused with: one line, its fix. */
export function dotenvProblem(error: unknown): string {
  return `.env: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); fix it, or set VERIFY_NO_DOTENV=1`
}

/** The lines printed for a refused configuration (exit 2). */
export function formatProblems(problems: readonly ConfigProblem[]): string {
  const n = problems.length
  return [
    `armproof: ${n} configuration problem${n === 1 ? '' : 's'}; nothing was contacted.`,
    ...problems.map((p) => `  - ${p.message}`),
  ].join('\n')
}
