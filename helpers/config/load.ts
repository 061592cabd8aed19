// Flags + env + .env → one validated Target, before anything is contacted. Every problem is
// collected and reported at once (exit 2); a flag beats env, env beats .env.
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parse as parseDotenv } from 'dotenv'
import { parseDuration } from './duration.ts'
import { canonicalValue, valueProblem, type KnobName } from './knobs.ts'
import { BUILTIN_PROFILES, findKnob, isBuiltinProfile, loadProfile, problemText, type LoadedProfile } from '../profiles/load.ts'
import type { ProfileDoc } from '../profiles/doc.ts'
import { envBoolean, parseCommandLine } from './command-line.ts'
import { API_KEY_ENV, API_KEY_FLAG_REFUSED, OPTIONS, type OptionFlag, type OptionSpec } from './options.ts'
import { SVC_NAME, showValue } from './shell.ts'
import { readReach, USER_RE, type HostSpec } from './reach.ts'
import type { Runtime } from './runtime.ts'
import { parseSkip, type SkippableProbe } from './skips.ts'
import { didYouMean } from './suggest.ts'
import { endpointUrl, prometheusUrlProblem } from './url.ts'
import { parseMatch } from '../prom/query.ts'

export type Mode = 'live' | 'record' | 'replay'
/** When root-only host reads use `sudo -n`: `auto` only after the plain read was refused. */
export type SudoMode = 'auto' | 'always' | 'never'
export type { HostSpec }

/** One validated run request. Plain data: it crosses into vitest's runtime (cloned) through `provide`. */
export interface Target {
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
  fixtures: string
  report: string | null
  junit: string | null
  /** --summary: the Markdown summary's path. */
  summary: string | null
  /** --ca-file: a PEM file of extra CAs for an https endpoint (read when the seams open). */
  caFile: string | null
  /** --force: record mode may overwrite a fixture folder that holds another run. */
  force: boolean
  /** Read the meter through this Prometheus (credentials refused) instead of /metrics; null: scrape /metrics. */
  prometheusUrl: string | null
  /** `--prometheus-match` as given (validated); null: `{instance="<host:port of --base-url>"}`. */
  prometheusMatch: string | null
}

export interface ConfigProblem {
  option: string
  message: string
}

export type ConfigResult = { ok: true; target: Target; warnings: string[] } | { ok: false; problems: ConfigProblem[]; help?: boolean; version?: boolean }

export interface ConfigInput {
  argv?: readonly string[]
  env?: Readonly<Record<string, string | undefined>>
  /** Contents of `.env`, if any. */
  dotenv?: string
  /** Where a relative --api-key-file is found; default the process's working directory. */
  cwd?: string
}

/** No option value is longer than this. */
const MAX_VALUE = 4096

function parseFlags(argv: readonly string[], problems: ConfigProblem[]): { values: Map<OptionFlag, string | boolean>; help: boolean; version: boolean } {
  // `api-key` is known only to be refused: it takes its value with it, so the key is never
  // mistaken for a stray argument (and echoed back as one).
  const parsed = parseCommandLine(argv, OPTIONS, ['api-key'])
  for (const p of parsed.problems) {
    if (p.kind === 'positional') problems.push({ option: 'argument', message: `unexpected argument ${showValue(p.value)}; options start with --` })
    else if (p.kind === 'refused') problems.push({ option: '--api-key', message: API_KEY_FLAG_REFUSED })
    else if (p.kind === 'unknown') problems.push({ option: p.rawName, message: `unknown option ${showValue(p.rawName)}${p.swallowed ? ' (its value is not shown)' : ''}${p.meant !== undefined ? `; did you mean --${p.meant}?` : '; see --help'}` })
    else if (p.kind === 'needs-value') problems.push({ option: `--${p.flag}`, message: `--${p.flag} needs a value` })
    else problems.push({ option: `--${p.flag}`, message: `--${p.flag} takes no value` })
  }
  return { values: parsed.values, help: parsed.help, version: parsed.version }
}

/** A key file larger than this is not a key file. */
const MAX_KEY_FILE_BYTES = 64 * 1024

/** The key's text as a file holds it: one trailing newline (LF or CRLF) dropped, nothing else touched. */
export function keyFromFileText(text: string): string {
  return text.replace(/\r?\n$/, '')
}

/** Where a value came from, ranked: a flag beats env, env beats .env. */
function rank(from: string): number {
  return from.startsWith('--') ? 3 : from.endsWith(' in .env') ? 1 : 2
}

/**
 * The API key, from `--api-key-file` / `VERIFY_API_KEY_FILE` or from `VERIFY_API_KEY` (env or
 * .env); the higher-ranked source wins, two at the same rank are a problem. The key is never put
 * in a message; a key file is checked (a regular, readable, non-empty file holding one token) and
 * a file others may read is warned about.
 */
function loadApiKey(
  fileRaw: { value: string; from: string } | undefined,
  env: Readonly<Record<string, string | undefined>>,
  input: ConfigInput,
  problems: ConfigProblem[],
  warnings: string[],
): string | null {
  const problem = (from: string, message: string) => problems.push({ option: from, message: `${from}: ${message}` })
  const envValue = env[API_KEY_ENV]
  const keyRaw = envValue !== undefined && envValue !== '' ? { value: envValue, from: Object.hasOwn(input.env ?? {}, API_KEY_ENV) ? API_KEY_ENV : `${API_KEY_ENV} in .env` } : undefined
  const file = fileRaw && fileRaw.value !== '' ? fileRaw : undefined
  if (file && keyRaw && rank(file.from) === rank(keyRaw.from)) {
    problem(file.from, `and ${keyRaw.from} both give the API key; keep one`)
    return null
  }
  const useFile = file !== undefined && (keyRaw === undefined || rank(file.from) > rank(keyRaw.from))
  let key: string
  let from: string
  if (useFile) {
    from = file.from
    const path = resolve(input.cwd ?? process.cwd(), file.value)
    let text: string
    try {
      const fd = openSync(path, 'r')
      try {
        const st = fstatSync(fd)
        if (st.isDirectory()) {
          problem(from, `${showValue(file.value)} is a directory; give the file that holds the key`)
          return null
        }
        // A regular file, or a pipe (`--api-key-file <(pass show endpoint)`): read to its end, bounded.
        if (st.isFile() && (st.mode & 0o077) !== 0) {
          warnings.push(`${from}: ${showValue(file.value)} may be read by group or others (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}); chmod 600 it`)
        }
        const buffer = Buffer.alloc(MAX_KEY_FILE_BYTES + 1)
        let got = 0
        for (;;) {
          const n = readSync(fd, buffer, got, buffer.length - got, null)
          if (n === 0 || (got += n) >= buffer.length) break
        }
        if (got > MAX_KEY_FILE_BYTES) {
          problem(from, `${showValue(file.value)} holds more than ${MAX_KEY_FILE_BYTES} bytes; a key file holds one token on one line`)
          return null
        }
        text = buffer.subarray(0, got).toString('utf8')
      } finally {
        closeSync(fd)
      }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : code ?? 'cannot be read'
      // A value that is no path at all may be the key itself, given here by mistake: not shown then.
      const shown = code === 'ENOENT' && !/[/.~]/.test(file.value) ? 'the value given (not shown: it does not look like a path; is it the key itself?)' : showValue(file.value)
      problem(from, `${shown} cannot be read (${why})`)
      return null
    }
    key = keyFromFileText(text)
    if (key === '') {
      problem(from, `${showValue(file.value)} is empty; it must hold the key on one line`)
      return null
    }
  } else if (keyRaw) {
    from = keyRaw.from
    key = keyRaw.value
  } else {
    return null
  }
  if (/[\s\0]/.test(key) || key.length > MAX_VALUE) {
    problem(from, `the key must be one token of at most ${MAX_VALUE} characters, without spaces or newlines (the key is not shown)`)
    return null
  }
  return key
}

/** Builds the Target from flags, env and .env; returns every problem found, never throws. */
export function loadConfig(input: ConfigInput): ConfigResult {
  const problems: ConfigProblem[] = []
  const warnings: string[] = []
  const fileEnv = input.dotenv ? parseDotenv(input.dotenv) : {}
  const env = { ...fileEnv, ...input.env }
  const { values: flags, help, version } = parseFlags(input.argv ?? [], problems)
  if (help) return { ok: false, problems: [], help: true }
  if (version) return { ok: false, problems: [], version: true }

  const problem = (from: string, message: string) => problems.push({ option: from, message: `${from}: ${message}` })
  const refused = new Set<OptionFlag>()
  /** The raw value of an option, with where it came from, for messages. Multi-line and huge values are refused here, once. */
  const raw = (flag: OptionFlag): { value: string; from: string } | undefined => {
    if (refused.has(flag)) return undefined
    const spec: OptionSpec = OPTIONS.find((o) => o.flag === flag)!
    const f = flags.get(flag)
    const found =
      typeof f === 'string'
        ? { value: f, from: `--${flag}` }
        : env[spec.env] !== undefined
          ? { value: env[spec.env]!, from: Object.hasOwn(input.env ?? {}, spec.env) ? spec.env : `${spec.env} in .env` }
          : undefined
    if (found && (/[\0\r\n]/.test(found.value) || found.value.length > MAX_VALUE)) {
      refused.add(flag)
      const shown = spec.secret ? '(value not shown)' : showValue(found.value, 40)
      problem(found.from, found.value.length > MAX_VALUE ? `${shown} is ${found.value.length} characters long; at most ${MAX_VALUE}` : `${shown} must be one line (no newline or NUL)`)
      return undefined
    }
    return found
  }
  const required = (flag: OptionFlag): { value: string; from: string } | undefined => {
    const r = raw(flag)
    if (refused.has(flag)) return undefined
    if (!r || r.value === '') {
      const spec = OPTIONS.find((o) => o.flag === flag)!
      problems.push({ option: `--${flag}`, message: `--${flag} (or ${spec.env}) is required` })
      return undefined
    }
    return r
  }
  const checked = (flag: OptionFlag, re: RegExp, rule: string): string | undefined => {
    const r = raw(flag)
    if (!r || r.value === '') return undefined
    if (!re.test(r.value)) {
      problem(r.from, `${showValue(r.value)} ${rule}`)
      return undefined
    }
    return r.value
  }
  const duration = (flag: OptionFlag, fallback: string): number => {
    const r = raw(flag)
    const text = r && r.value !== '' ? r.value : fallback
    const ms = parseDuration(text)
    if (ms === undefined || ms <= 0) {
      problem(r?.from ?? `--${flag}`, `${showValue(text)} is not a duration like 90s, 5m, 1h30m`)
      return 0
    }
    return ms
  }

  const svcRaw = required('svc')
  let svc = ''
  if (svcRaw) {
    if (SVC_NAME.re.test(svcRaw.value)) svc = svcRaw.value
    else if (/^\.{1,2}$/.test(svcRaw.value)) problem(svcRaw.from, `${showValue(svcRaw.value)} is a path step, not a service name (the fixtures folder is fixtures/<svc>/<knob>); give the container or unit name`)
    else problem(svcRaw.from, `${showValue(svcRaw.value)} must match [A-Za-z0-9_.-]+ and not start with "-"`)
  }

  // The engine profile (--engine: a built-in or a file) and its knobs, with --catalog's added.
  const engineRaw = raw('engine')
  const catalogRaw = raw('catalog')
  const engineName = engineRaw && engineRaw.value !== '' ? engineRaw.value : 'radiance'
  const catalogName = catalogRaw && catalogRaw.value !== '' ? catalogRaw.value : null
  let profile: LoadedProfile | undefined
  if (!refused.has('engine') && !refused.has('catalog')) {
    const loaded = loadProfile(engineName, catalogName, input.cwd ?? process.cwd())
    if ('problems' in loaded) {
      for (const p of loaded.problems) {
        const from = p.file === catalogName ? catalogRaw!.from : (engineRaw?.from ?? '--engine')
        const notBuiltin = p.file === engineName && p.message === 'no such file' && !isBuiltinProfile(engineName)
        problem(from, notBuiltin ? `${showValue(engineName)} is neither a built-in profile (${BUILTIN_PROFILES.join(', ')}) nor a profile file (no such file)` : problemText(p))
      }
    } else profile = loaded
  }

  const knobRaw = required('knob')
  let knobName: KnobName | undefined
  if (knobRaw && profile) {
    const found = findKnob(profile.knobs, knobRaw.value)
    const names = [...profile.knobs.keys()]
    const whose = profile.engine.name === 'radiance' && catalogName === null ? '' : ` (the ${profile.engine.name} profile${catalogName ? ` and ${catalogName}` : ''})`
    if (found) knobName = found
    else problem(knobRaw.from, `unknown knob ${showValue(knobRaw.value)}${didYouMean(knobRaw.value, names) || ';'} known knobs${whose}: ${names.join(', ')}`)
  }
  const entry = knobName && profile ? profile.knobs.get(knobName) : undefined

  const knobValue = (flag: 'value' | 'previous'): string | null => {
    const r = raw(flag)
    if (!r || r.value === '' || !knobName || !entry) return null
    const spec = entry.spec
    const why = valueProblem(spec, r.value)
    if (why) {
      problem(r.from, `${showValue(r.value)} does not fit ${knobName}: ${why}`)
      return null
    }
    return canonicalValue(spec, r.value)
  }
  const value = knobValue('value')
  const previous = knobValue('previous')
  // A no-op arm: --value and --previous both given and the same (an empty one is the default):
  // the run would prove nothing changed and print a rollback line that rolls back nothing.
  const valueRaw = raw('value')
  const previousRaw = raw('previous')
  if (knobName && entry && valueRaw && previousRaw && !problems.some((p) => p.option === valueRaw.from || p.option === previousRaw.from)) {
    const fallback = entry.spec.default
    const [v, p] = [value ?? fallback, previous ?? fallback]
    if ((valueRaw.value === '' && previousRaw.value === '') || (v != null && v === p)) {
      const shown = (r: { value: string }) => (r.value === '' ? `"" (the default${fallback != null ? `, ${fallback}` : ''})` : showValue(r.value))
      problem(valueRaw.from, `${shown(valueRaw)} and ${previousRaw.from} ${shown(previousRaw)} are the same ${knobName}: this arm changes nothing, and its rollback line would roll back nothing; give --previous the value the endpoint ran before this deploy (or leave it out for the default)`)
    }
  }

  /** An option whose value is one of a few words. */
  const oneOf = <T extends string>(flag: OptionFlag, what: string, choices: readonly T[], fallback: T): T => {
    const r = raw(flag)
    if (!r || r.value === '') return fallback
    if ((choices as readonly string[]).includes(r.value)) return r.value as T
    problem(r.from, `invalid ${what} ${showValue(r.value)}; must be one of: ${choices.join(', ')}`)
    return fallback
  }
  const mode = oneOf<Mode>('mode', 'mode', ['live', 'record', 'replay'], 'live')

  let baseUrl: string | null = null
  const urlRaw = raw('base-url')
  if (urlRaw && urlRaw.value !== '') {
    const checked = endpointUrl(urlRaw.value, `put the key in ${API_KEY_ENV} (env or .env) or pass --api-key-file PATH`)
    if ('problem' in checked) problem(urlRaw.from, checked.problem)
    else baseUrl = checked.url
  } else if (mode !== 'replay' && !refused.has('base-url')) {
    problems.push({ option: '--base-url', message: `--base-url (or VERIFY_BASE_URL) is required in ${mode} mode` })
  }

  const apiKey = loadApiKey(raw('api-key-file'), env, input, problems, warnings)

  const model = checked('model', /^[^\s\0]{1,256}$/, 'must be one model id without spaces')

  // Where the engine runs and how it is reached, under its runtime (./reach.ts).
  const { runtime, host, sshOpts, kubeOpts, unit, ledgerCmd, helpCmd, pidCmd } = readReach({ raw, problem }, svc, profile?.engine.help.command)

  // Not starting with "-": pidof would read it as one of its options.
  const processName = checked('process', /^[A-Za-z0-9_.][A-Za-z0-9_.-]{0,63}$/, 'must match [A-Za-z0-9_.-]+ and not start with "-"') ?? profile?.engine.process ?? 'radiance'
  const deployUser = checked('deploy-user', USER_RE, 'must match [a-z_][a-z0-9_-]*') ?? null
  const sudo = oneOf<SudoMode>('sudo', 'sudo mode', ['auto', 'always', 'never'], 'auto')

  let skip: SkippableProbe[] = []
  const skipRaw = raw('skip')
  if (skipRaw && skipRaw.value !== '') {
    const parsed = parseSkip(skipRaw.value)
    if ('problems' in parsed) for (const p of parsed.problems) problem(skipRaw.from, p)
    else skip = parsed.skip
  }

  let dropinCheck = true
  if (flags.get('no-dropin-check') === true) dropinCheck = false
  else if (env.VERIFY_DROPIN_CHECK !== undefined && env.VERIFY_DROPIN_CHECK !== '') {
    const v = env.VERIFY_DROPIN_CHECK
    const yes = envBoolean(v)
    if (yes === false) dropinCheck = false
    else if (yes === undefined) problem('VERIFY_DROPIN_CHECK', `${showValue(v)} must be 0 or 1`)
  }

  const healthBudgetMs = duration('health-budget', '15m')
  const meterWindowMs = duration('meter-window', '5m')
  const probeTimeoutMs = duration('probe-timeout', '2m')
  const hostTimeoutMs = duration('host-timeout', '30s')

  const pathOption = (flag: 'fixtures' | 'report' | 'junit' | 'summary' | 'ca-file'): string | null => raw(flag)?.value || null
  const fixtures = pathOption('fixtures') ?? `fixtures/${svc || '<svc>'}/${knobName ?? '<knob>'}`
  const report = pathOption('report')
  const junit = pathOption('junit')
  const summary = pathOption('summary')
  const caFile = pathOption('ca-file')
  if (caFile) {
    const caFrom = raw('ca-file')!.from
    try {
      const pem = readFileSync(resolve(input.cwd ?? process.cwd(), caFile), 'utf8')
      if (!/-----BEGIN CERTIFICATE-----/.test(pem)) problem(caFrom, `${showValue(caFile)} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      problem(caFrom, `${showValue(caFile)} cannot be read (${code === 'ENOENT' ? 'no such file' : code ?? 'error'})`)
    }
  }
  let force = flags.get('force') === true
  if (!force && env.VERIFY_FORCE !== undefined && env.VERIFY_FORCE !== '') {
    const v = env.VERIFY_FORCE
    const yes = envBoolean(v)
    if (yes === true) force = true
    else if (yes === undefined) problem('VERIFY_FORCE', `${showValue(v)} must be 0 or 1`)
  }

  let prometheusUrl: string | null = null
  const promRaw = raw('prometheus-url')
  if (promRaw && promRaw.value !== '') {
    const why = prometheusUrlProblem(promRaw.value)
    if (why) problem(promRaw.from, why)
    else prometheusUrl = new URL(promRaw.value).href.replace(/\/+$/, '')
  }
  let prometheusMatch: string | null = null
  const matchRaw = raw('prometheus-match')
  if (matchRaw && matchRaw.value !== '') {
    const parsed = parseMatch(matchRaw.value)
    if ('error' in parsed) problem(matchRaw.from, `${showValue(matchRaw.value, 80)}: ${parsed.error}`)
    else if (!prometheusUrl && !refused.has('prometheus-url')) problem(matchRaw.from, 'only applies with --prometheus-url (the meter is otherwise read from /metrics)')
    else prometheusMatch = matchRaw.value
  }

  // The fleet's own options are read by helpers/fleet/plan.ts; here only refused when malformed.
  for (const flag of ['targets', 'concurrency', 'shard', 'run-id'] as const) raw(flag)

  if (problems.length > 0 || !knobName || !entry || !profile) return { ok: false, problems }
  return {
    ok: true,
    warnings,
    target: {
      svc, knob: knobName, engine: profile.doc, value, previous, baseUrl, apiKey, model: model ?? null, host, sshOpts, runtime, kubeOpts, skip,
      process: processName, pidCmd, deployUser, sudo, ledgerCmd, helpCmd, unit, dropinCheck,
      healthBudgetMs, meterWindowMs, probeTimeoutMs, hostTimeoutMs, mode, fixtures, report, junit,
      summary, caFile: caFile === null ? null : resolve(input.cwd ?? process.cwd(), caFile), force,
      prometheusUrl, prometheusMatch,
    },
  }
}

/** The contents of `<cwd>/.env`, unless there is none or VERIFY_NO_DOTENV=1. */
export function readDotenv(cwd: string, env: Readonly<Record<string, string | undefined>>): string | undefined {
  if (env.VERIFY_NO_DOTENV === '1') return undefined
  const path = join(cwd, '.env')
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined
}

/** The lines printed for a refused configuration (exit 2). */
export function formatProblems(problems: readonly ConfigProblem[]): string {
  const n = problems.length
  return [`armproof: ${n} configuration problem${n === 1 ? '' : 's'}; nothing was contacted.`, ...problems.map((p) => `  - ${p.message}`)].join('\n')
}
