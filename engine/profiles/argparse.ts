// The part of Python's argparse (3.11 semantics) that the Python engines' command lines lean on:
// `--flag V` and `--flag=V`, unique prefixes of long flags (allow_abbrev), the last occurrence
// winning, BooleanOptionalAction's `--x`/`--no-x`, store_true, nargs '+', one optional positional,
// negative numbers as values, `--` ending the options, and argparse's own error texts (exit 2).
import type { PyValue } from './pyrepr.ts'
import { pyRepr } from './pyrepr.ts'

export type ArgType = { kind: 'str' } | { kind: 'int' } | { kind: 'float' } | { kind: 'choice'; choices: readonly string[] }

export interface OptionSpec {
  /** Option strings as declared, e.g. ['--tensor-parallel-size', '-tp']; a boolean_optional also gets `--no-<name>`. */
  strings: readonly string[]
  dest: string
  action: 'store' | 'store_true' | 'boolean_optional'
  nargs?: '+'
  type?: ArgType
  default: PyValue
  help: string
  /** The config group the flag belongs to (vLLM's `--help=<group>`). */
  group: string
  required?: boolean
}

export interface ParserSpec {
  prog: string
  usage: string
  /** One optional positional (nargs '?'), e.g. vLLM's model_tag. */
  positional?: { dest: string; default: PyValue; help: string }
  options: readonly OptionSpec[]
}

export type Parsed = { kind: 'ok'; values: Map<string, PyValue>; help: false } | { kind: 'help' } | { kind: 'error'; message: string }

/** Every option string of a spec, `--no-x` included, in declaration order. */
export function optionStrings(spec: OptionSpec): string[] {
  if (spec.action !== 'boolean_optional') return [...spec.strings]
  return spec.strings.flatMap((s) => (s.startsWith('--') ? [s, `--no-${s.slice(2)}`] : [s]))
}

/** The name argparse gives an option in its messages: its option strings joined by '/'. */
export function actionName(spec: OptionSpec): string {
  return optionStrings(spec).join('/')
}

const NEGATIVE = /^-\d+$|^-\d*\.\d+$/

function convert(spec: OptionSpec, raw: string): { value: PyValue } | { error: string } {
  const type = spec.type ?? { kind: 'str' }
  const name = actionName(spec)
  switch (type.kind) {
    case 'str':
      return { value: raw }
    case 'int': {
      const t = raw.trim().replaceAll('_', '')
      if (!/^[+-]?\d+$/.test(t) || /^_|_$|__/.test(raw.trim())) return { error: `argument ${name}: invalid int value: ${pyRepr(raw)}` }
      return { value: Number(t) }
    }
    case 'float': {
      const n = Number(raw.trim())
      if (raw.trim() === '' || (!Number.isFinite(n) && !/^[+-]?(inf|infinity|nan)$/i.test(raw.trim())))
        return { error: `argument ${name}: invalid float value: ${pyRepr(raw)}` }
      return { value: n }
    }
    case 'choice':
      if (!type.choices.includes(raw))
        return { error: `argument ${name}: invalid choice: ${pyRepr(raw)} (choose from ${type.choices.map((c) => pyRepr(c)).join(', ')})` }
      return { value: raw }
  }
}

interface Classified {
  kind: 'O' | 'A'
  spec?: OptionSpec
  optionString?: string
  explicit?: string
}

/** Parses `argv` as argparse would; `help` is what `-h/--help` does (it wins if reached before an error). */
export function parseArgs(parser: ParserSpec, argv: readonly string[]): Parsed {
  const table = new Map<string, OptionSpec>()
  for (const spec of parser.options) for (const s of optionStrings(spec)) table.set(s, spec)
  const HELP = {
    strings: ['-h', '--help'],
    dest: 'help',
    action: 'store_true',
    default: false,
    help: '',
    group: 'options',
  } as const satisfies OptionSpec
  for (const s of HELP.strings) table.set(s, HELP)
  const classified: Classified[] = []
  let dashdash = false
  for (const arg of argv) {
    if (dashdash || !arg.startsWith('-') || arg === '-') {
      classified.push({ kind: 'A' })
      continue
    }
    if (arg === '--') {
      dashdash = true
      classified.push({ kind: 'A' })
      continue
    }
    const exact = table.get(arg)
    if (exact) {
      classified.push({ kind: 'O', spec: exact, optionString: arg })
      continue
    }
    const eq = arg.indexOf('=')
    if (eq > 0 && table.has(arg.slice(0, eq))) {
      classified.push({ kind: 'O', spec: table.get(arg.slice(0, eq))!, optionString: arg.slice(0, eq), explicit: arg.slice(eq + 1) })
      continue
    }
    const matches = prefixMatches(table, arg)
    if (matches.length > 1)
      return { kind: 'error', message: `ambiguous option: ${arg} could match ${matches.map((m) => m.optionString).join(', ')}` }
    if (matches.length === 1) {
      classified.push({ kind: 'O', ...matches[0]! })
      continue
    }
    if (NEGATIVE.test(arg) || arg.includes(' ')) classified.push({ kind: 'A' })
    else classified.push({ kind: 'O' })
  }
  const values = new Map<string, PyValue>()
  if (parser.positional) values.set(parser.positional.dest, parser.positional.default)
  for (const spec of parser.options) values.set(spec.dest, spec.default)
  const extras: string[] = []
  const given = new Set<string>()
  let positionalTaken = parser.positional === undefined
  for (let i = 0; i < argv.length; i++) {
    const c = classified[i]!
    const arg = argv[i]!
    if (c.kind === 'A') {
      // The first `--` is dropped when a positional is still to take the arguments after it; else it is an extra.
      if (arg === '--' && !positionalTaken && !argv.slice(0, i).includes('--')) continue
      if (!positionalTaken) {
        values.set(parser.positional!.dest, arg)
        positionalTaken = true
      } else extras.push(arg)
      continue
    }
    const spec = c.spec
    if (!spec) {
      extras.push(arg)
      continue
    }
    const name = actionName(spec)
    if (spec === HELP) return { kind: 'help' }
    given.add(spec.dest)
    if (spec.action !== 'store') {
      if (c.explicit !== undefined) return { kind: 'error', message: `argument ${name}: ignored explicit argument ${pyRepr(c.explicit)}` }
      values.set(spec.dest, spec.action === 'store_true' ? true : !c.optionString!.startsWith('--no-'))
      continue
    }
    const raws: string[] = []
    if (c.explicit !== undefined) raws.push(c.explicit)
    else {
      while (i + 1 < argv.length && classified[i + 1]!.kind === 'A' && argv[i + 1] !== '--' && (spec.nargs === '+' || raws.length === 0))
        raws.push(argv[++i]!)
    }
    if (raws.length === 0)
      return { kind: 'error', message: `argument ${name}: expected ${spec.nargs === '+' ? 'at least one argument' : 'one argument'}` }
    const converted: PyValue[] = []
    for (const raw of raws) {
      const one = convert(spec, raw)
      if ('error' in one) return { kind: 'error', message: one.error }
      converted.push(one.value)
    }
    values.set(spec.dest, spec.nargs === '+' ? converted : converted[0]!)
  }
  const missing = parser.options.filter((o) => o.required && !given.has(o.dest))
  if (missing.length > 0) return { kind: 'error', message: `the following arguments are required: ${missing.map(actionName).join(', ')}` }
  if (extras.length > 0) return { kind: 'error', message: `unrecognized arguments: ${extras.join(' ')}` }
  return { kind: 'ok', values, help: false }
}

/** argparse's `_get_option_tuples`: long flags by unique prefix (the part before `=`), short ones by their first two characters. */
function prefixMatches(
  table: ReadonlyMap<string, OptionSpec>,
  arg: string,
): Array<{ spec: OptionSpec; optionString: string; explicit?: string }> {
  const out: Array<{ spec: OptionSpec; optionString: string; explicit?: string }> = []
  if (arg.startsWith('--')) {
    const eq = arg.indexOf('=')
    const prefix = eq === -1 ? arg : arg.slice(0, eq)
    const explicit = eq === -1 ? undefined : arg.slice(eq + 1)
    for (const [s, spec] of table)
      if (s.startsWith(prefix)) out.push({ spec, optionString: s, ...(explicit !== undefined ? { explicit } : {}) })
    return out
  }
  const short = arg.slice(0, 2)
  for (const [s, spec] of table) {
    if (s === short) out.push({ spec, optionString: s, explicit: arg.slice(2) })
    else if (s.startsWith(arg)) out.push({ spec, optionString: s })
  }
  return out
}

/** What argparse prints for an error: the usage line and `<prog>: error: <message>`. */
export function errorText(parser: ParserSpec, message: string): string {
  return `usage: ${parser.usage}\n${parser.prog}: error: ${message}\n`
}
