// Where each option's value comes from: named layers, the highest first. A one-target run has
// its command line; a fleet's target has its entry in the targets file, the command line, then the
// file's `defaults:` (helpers/fleet/plan.ts); every run then env, then .env. The first layer that
// holds an option gives its value, and says where it came from in the layer's own words
// (`--base-url`, the file's `base-url` or `defaults.base-url`, `VERIFY_BASE_URL`, `… in .env`), so
// a problem names the place the operator wrote it, with its file and line where it has one. The
// loader (./load.ts) reads every option through the `OptionReader` made here.
import { parse as parseDotenv } from 'dotenv'
import { parseDuration } from './duration.ts'
import { envBoolean, parseCommandLine } from './command-line.ts'
import { API_KEY_FLAG_REFUSED, OPTIONS, type OptionFlag, type OptionSpec } from './options.ts'
import { showValue } from './shell.ts'

export type LayerName = 'entry' | 'command line' | 'defaults' | 'env' | '.env'

/** Where in a file a value sits (1-based line). */
export interface FileSpot {
  file: string
  line: number
}

/** A layer of options given as options: the command line, or a targets file's entry or its `defaults:`. */
export interface OptionLayer {
  readonly name: 'entry' | 'command line' | 'defaults'
  /** option → its value (a switch: true or false; false turns off what a lower layer turned on). */
  readonly values: ReadonlyMap<OptionFlag, string | boolean>
  /** How a message names the option in this layer: `--base-url`, `base-url`, `defaults.base-url`. */
  spelled(flag: OptionFlag): string
  /** Where the option sits in a file (an entry's or `defaults:`' key). */
  spot?(flag: OptionFlag): FileSpot | undefined
}

/** An option's value as a layer gave it. */
export interface RawValue {
  value: string
  /** Where it came from, as a message says it (`--svc`, `svc`, `defaults.svc`, `VERIFY_SVC`, `VERIFY_SVC in .env`). */
  from: string
  flag: OptionFlag
  layer: LayerName
  spot?: FileSpot
}

export interface ConfigProblem {
  option: string
  message: string
  /** The option it is about, when it is about one. */
  key?: OptionFlag
  /** The layer whose value it is about, and where that value sits in a file. */
  layer?: LayerName
  spot?: FileSpot
  /** The option is required and no layer gave it. */
  missing?: true
  /** The targets file's entries (0-based) it is about, in the order its message names them (./output-set.ts). */
  entries?: number[]
  /** In a targets file: the file, the line and the key (as the file spells it) the problem is about. */
  at?: { file: string; line?: number; key?: string }
}

/** No option value is longer than this. */
export const MAX_VALUE = 4096

/** The command line, read once: its options as a layer, what it asks besides (help, the version, colour), and the problems of reading it. */
export interface CommandLine {
  layer: OptionLayer
  help: boolean
  version: boolean
  /** --color (true) or --no-color (false), the last one given; undefined when neither. */
  color: boolean | undefined
  problems: ConfigProblem[]
}

/** The command line as a layer, with the problems of reading it (in verify's words); `table`: the command's options (verify's by default, preflight's its own). */
export function commandLineLayer(argv: readonly string[], table: readonly Pick<OptionSpec, 'flag' | 'kind'>[] = OPTIONS): CommandLine {
  // `api-key` is known only to be refused: it takes its value with it, so the key is never
  // mistaken for a stray argument (and echoed back as one).
  const parsed = parseCommandLine(argv, table as readonly { flag: OptionFlag; kind: 'string' | 'boolean' }[], ['api-key'])
  const problems: ConfigProblem[] = []
  for (const p of parsed.problems) {
    if (p.kind === 'positional')
      problems.push({ option: 'argument', message: `unexpected argument ${showValue(p.value)}; options start with --` })
    else if (p.kind === 'refused') problems.push({ option: '--api-key', message: API_KEY_FLAG_REFUSED })
    else if (p.kind === 'unknown')
      problems.push({
        option: p.rawName,
        message: `unknown option ${showValue(p.rawName)}${p.swallowed ? ' (its value is not shown)' : ''}${p.meant !== undefined ? `; did you mean --${p.meant}?` : '; see --help'}`,
      })
    else if (p.kind === 'needs-value') problems.push({ option: `--${p.flag}`, message: `--${p.flag} needs a value` })
    else problems.push({ option: `--${p.flag}`, message: `--${p.flag} takes no value` })
  }
  return {
    layer: { name: 'command line', values: parsed.values, spelled: (flag) => `--${flag}` },
    help: parsed.help,
    version: parsed.version,
    color: parsed.color,
    problems,
  }
}

const SPECS = new Map<string, OptionSpec>(OPTIONS.map((o) => [o.flag, o]))

/** How the loader reads options, and takes their problems back. */
export interface OptionReader {
  /** The env and .env, merged (env wins), for the variables that are no option's twin. */
  readonly env: Readonly<Record<string, string | undefined>>
  readonly problems: ConfigProblem[]
  readonly warnings: string[]
  /** The raw value of an option from the highest layer holding it. Multi-line and huge values are refused here, once. */
  raw(flag: OptionFlag): RawValue | undefined
  /** The option's value was refused (by `raw`): nothing more is said of it. */
  refused(flag: OptionFlag): boolean
  /**
   * A switch with an env twin of 0/1: the highest option layer that sets it, true or false (an
   * entry's `false` beats env); else the twin (`inverted`: 1 means the switch is off, as
   * VERIFY_DROPIN_CHECK=1 for --no-dropin-check), a problem where it is neither 0 nor 1; else off.
   */
  switchOrEnv(flag: OptionFlag, name: string, inverted?: boolean): boolean
  /** Where a variable that is no option's twin came from: itself, or `NAME in .env`. */
  envFrom(name: string): string
  /** A problem with a value (said as `from: message`, at its place), or with an option named as given. */
  problem(source: RawValue | string, message: string): void
  required(flag: OptionFlag): RawValue | undefined
  /** The value when it matches `re`; else a problem (`rule` says what it must be). */
  checked(flag: OptionFlag, re: RegExp, rule: string): string | undefined
  duration(flag: OptionFlag, fallback: string): number
  /** An option whose value is one of a few words. */
  oneOf<T extends string>(flag: OptionFlag, what: string, choices: readonly T[], fallback: T): T
}

/** The reader over `layers` (highest first), then env, then .env. */
export function optionReader(
  layers: readonly OptionLayer[],
  envInput: Readonly<Record<string, string | undefined>> = {},
  dotenv?: string,
  accepted?: ReadonlySet<OptionFlag>,
): OptionReader {
  const problems: ConfigProblem[] = []
  const fileEnv = dotenv ? parseDotenv(dotenv) : {}
  const env = { ...fileEnv, ...envInput }
  const envFrom = (name: string) => (Object.hasOwn(envInput, name) ? name : `${name} in .env`)
  const refusedFlags = new Set<OptionFlag>()
  const problem = (source: RawValue | string, message: string): void => {
    if (typeof source === 'string') {
      problems.push({ option: source, message: `${source}: ${message}` })
      return
    }
    problems.push({
      option: source.from,
      message: `${source.from}: ${message}`,
      key: source.flag,
      layer: source.layer,
      ...(source.spot ? { spot: source.spot } : {}),
    })
  }
  const raw = (flag: OptionFlag): RawValue | undefined => {
    if (refusedFlags.has(flag)) return undefined
    // A command that takes only some of verify's options (preflight) reads neither the others nor their twins.
    if (accepted && !accepted.has(flag)) return undefined
    const spec = SPECS.get(flag)!
    const layer = layers.find((l) => typeof l.values.get(flag) === 'string')
    let found: RawValue | undefined
    if (layer) {
      const spot = layer.spot?.(flag)
      found = { value: layer.values.get(flag) as string, from: layer.spelled(flag), flag, layer: layer.name, ...(spot ? { spot } : {}) }
    } else if (env[spec.env] !== undefined) {
      const from = envFrom(spec.env)
      found = { value: env[spec.env]!, from, flag, layer: from === spec.env ? 'env' : '.env' }
    }
    if (found && (/[\0\r\n]/.test(found.value) || found.value.length > MAX_VALUE)) {
      refusedFlags.add(flag)
      const shown = spec.secret ? '(value not shown)' : showValue(found.value, 40)
      problem(
        found,
        found.value.length > MAX_VALUE
          ? `${shown} is ${found.value.length} characters long; at most ${MAX_VALUE}`
          : `${shown} must be one line (no newline or NUL)`,
      )
      return undefined
    }
    return found
  }
  const reader: OptionReader = {
    env,
    problems,
    warnings: [],
    raw,
    refused: (flag) => refusedFlags.has(flag),
    switchOrEnv(flag, name, inverted = false) {
      if (accepted && !accepted.has(flag)) return false
      const layer = layers.find((l) => typeof l.values.get(flag) === 'boolean')
      if (layer) return layer.values.get(flag) === true
      const v = env[name]
      if (v === undefined || v === '') return false
      const yes = envBoolean(v)
      if (yes === undefined) {
        problem(envFrom(name), `${showValue(v)} must be 0 or 1`)
        return false
      }
      return yes !== inverted
    },
    envFrom,
    problem,
    required(flag) {
      const r = raw(flag)
      if (refusedFlags.has(flag)) return undefined
      if (!r || r.value === '') {
        // An empty value given somewhere is said of that layer (a command line's, once for a fleet).
        problems.push({
          option: `--${flag}`,
          message: `--${flag} (or ${SPECS.get(flag)!.env}) is required`,
          key: flag,
          missing: true,
          ...(r ? { layer: r.layer, ...(r.spot ? { spot: r.spot } : {}) } : {}),
        })
        return undefined
      }
      return r
    },
    checked(flag, re, rule) {
      const r = raw(flag)
      if (!r || r.value === '') return undefined
      if (!re.test(r.value)) {
        problem(r, `${showValue(r.value)} ${rule}`)
        return undefined
      }
      return r.value
    },
    duration(flag, fallback) {
      const r = raw(flag)
      const text = r && r.value !== '' ? r.value : fallback
      const ms = parseDuration(text)
      if (ms === undefined || ms <= 0) {
        problem(r ?? `--${flag}`, `${showValue(text)} is not a duration like 90s, 5m, 1h30m`)
        return 0
      }
      return ms
    },
    oneOf(flag, what, choices, fallback) {
      const r = raw(flag)
      if (!r || r.value === '') return fallback
      if ((choices as readonly string[]).includes(r.value)) return r.value as (typeof choices)[number]
      problem(r, `invalid ${what} ${showValue(r.value)}; must be one of: ${choices.join(', ')}`)
      return fallback
    },
  }
  return reader
}
