// The one command-line parser of armproof's commands (verify and writeback): node's parseArgs
// over a command's option table, every problem collected (never thrown), and one set of words
// for an env twin's yes and no. Each command says the problems in its own words.
import { parseArgs } from 'node:util'
import { closest } from './suggest.ts'

/** Words an env twin of a boolean option may hold, for both commands (case and spaces ignored). */
export const TRUE_WORDS: readonly string[] = ['1', 'true', 'yes', 'on']
export const FALSE_WORDS: readonly string[] = ['', '0', 'false', 'no', 'off']

/** true / false for a yes or no word, undefined for anything else. */
export function envBoolean(raw: string): boolean | undefined {
  const v = raw.trim().toLowerCase()
  if (TRUE_WORDS.includes(v)) return true
  if (FALSE_WORDS.includes(v)) return false
  return undefined
}

export interface OptionShape<F extends string> {
  flag: F
  kind: 'string' | 'boolean'
}

export type ArgvProblem =
  | { kind: 'positional'; value: string }
  /**
   * `swallowed`: the word after an unknown option that sounds like a secret was taken as its value.
   * `meant`: the known flag it is a near miss of (`--meter-windw` → `meter-window`), if any; the
   * word after a near miss of a string option is taken as its value, not as a stray argument.
   */
  | { kind: 'unknown'; rawName: string; swallowed: boolean; meant?: string }
  | { kind: 'needs-value' | 'takes-no-value'; flag: string }
  /** An option the command knows only to refuse it (e.g. verify's --api-key). */
  | { kind: 'refused'; flag: string }

export interface ParsedArgv<F extends string> {
  values: Map<F, string | true>
  help: boolean
  /** --version or -V was given. */
  version: boolean
  /** --color (true) or --no-color (false), the last one given; undefined when neither (see ./color.ts). */
  color: boolean | undefined
  problems: ArgvProblem[]
}

/**
 * Flags → values, in order; `refused` options take their value with them (so a secret given to
 * one is never mistaken for a stray argument and echoed back).
 */
export function parseCommandLine<F extends string>(
  argv: readonly string[],
  table: ReadonlyArray<OptionShape<F>>,
  refused: readonly string[] = [],
): ParsedArgv<F> {
  const options: Record<string, { type: 'string' | 'boolean' }> = {
    help: { type: 'boolean' },
    h: { type: 'boolean' },
    version: { type: 'boolean' },
    V: { type: 'boolean' },
    color: { type: 'boolean' },
    'no-color': { type: 'boolean' },
  }
  for (const r of refused) options[r] = { type: 'string' }
  for (const o of table) options[o.flag] = { type: o.kind }
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true })
  const values = new Map<F, string | true>()
  const problems: ArgvProblem[] = []
  let help = false
  let version = false
  let color: boolean | undefined
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!
    if (t.kind === 'positional') {
      problems.push({ kind: 'positional', value: t.value })
    } else if (t.kind === 'option') {
      if (t.name === 'help' || t.name === 'h') {
        help = true
        continue
      }
      if (t.name === 'version' || t.name === 'V') {
        version = true
        continue
      }
      // Every command takes the colour switches (whether it paints is ./color.ts' to say).
      if ((t.name === 'color' || t.name === 'no-color') && t.value === undefined) {
        color = t.name === 'color'
        continue
      }
      if (refused.includes(t.name)) {
        problems.push({ kind: 'refused', flag: t.name })
        continue
      }
      const spec = table.find((o) => o.flag === t.name)
      if (!spec) {
        // The word after an unknown option that sounds like a secret (--token, --api_key, …) is
        // most likely that secret: taken as its value and never shown.
        const next = tokens[i + 1]
        const secretish = /key|token|secret|pass|auth|bearer|cred/i.test(t.name)
        const swallowed = secretish && t.value === undefined && !t.inlineValue && next?.kind === 'positional' && next.index === t.index + 1
        if (swallowed) i++
        const meant = swallowed ? undefined : closest(t.name, [...table.map((o) => o.flag), 'help', 'version', 'color', 'no-color'])
        const meantSpec = table.find((o) => o.flag === meant)
        if (
          meantSpec?.kind === 'string' &&
          t.value === undefined &&
          !t.inlineValue &&
          next?.kind === 'positional' &&
          next.index === t.index + 1
        )
          i++
        problems.push({ kind: 'unknown', rawName: t.rawName, swallowed, ...(meant !== undefined ? { meant } : {}) })
      } else if (spec.kind === 'string' && typeof t.value !== 'string') {
        problems.push({ kind: 'needs-value', flag: spec.flag })
      } else if (spec.kind === 'boolean' && t.value !== undefined) {
        problems.push({ kind: 'takes-no-value', flag: spec.flag })
      } else {
        values.set(spec.flag, spec.kind === 'boolean' ? true : (t.value as string))
      }
    }
  }
  return { values, help, version, color, problems }
}
