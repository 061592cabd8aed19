// A command line as the engine's parser reads it (./rules.ts): which words name a flag, which
// word is its value, and which occurrence wins. Emulates Python's argparse (an
// ArgumentParser with allow_abbrev, `store` actions) behind vLLM's FlexibleArgumentParser
// pre-pass (`--config FILE` first, then `_` → `-` in flag names); test/argparse/resolve.test.ts checks a
// seeded sample against python3's own argparse. Pure.
import type { FlagNames, KnownFlag, ParserRules } from './rules.ts'

/** One occurrence of the flag, as written, and whether it is the one the parser keeps. */
export interface Occurrence {
  /** As written: the argv word(s) (`--prefill_inter 1`, `--prefill-interleave=1`), or the file's entry (`prefill-interleave: 1`). */
  written: string
  value: string
  /** The command line, its config file, or the engine's environment (an env twin, read before the command line). */
  source: 'argv' | 'config' | 'env'
  /** How it names the flag: its own name, with `_` for `-`, or a unique prefix of it. */
  spelling: 'exact' | 'underscore' | 'prefix'
  won: boolean
}

export interface Resolution {
  /** The value the parser ends with; undefined when the flag is given neither on argv nor in the file. */
  value: string | undefined
  occurrences: Occurrence[]
  /** Where the parser would refuse this command line over the flag itself (or its config file). */
  problems: string[]
  /** Where it would refuse other words (an unlisted flag: the build's list may be incomplete; they cannot change this flag's value). */
  refused: string[]
  /** Words that may name the flag but cannot be decided without the build's flag list. */
  unsure: string[]
}

/** The config file named on argv: its path as written, and the argv words that name it. */
export interface ConfigRef {
  path: string
  /** Index of the config flag's word in argv. */
  index: number
  /** `--config=FILE` (one word) rather than `--config FILE`. */
  inline: boolean
}

/** The flags a config file gives, as argv words, and each entry as written (for the truth table). */
export interface ConfigArgs {
  file: string
  /** Per entry of the file: its words (`--key`, `value`…) and the entry as written (`key: value`). */
  entries: Array<{ words: string[]; written: string }>
}

/** The config file argv names, per the rules; a problem when it is named twice or without a file. */
export function findConfig(argv: readonly string[], rules: ParserRules): ConfigRef | { problem: string } | null {
  const flag = rules.configFlag
  if (flag === null) return null
  const at = argv.flatMap((w, i) => (w === flag || w.startsWith(`${flag}=`) ? [i] : []))
  if (at.length === 0) return null
  if (at.length > 1) return { problem: `${flag} is given ${at.length} times; the parser reads one config file only and refuses more` }
  const i = at[0]!
  const word = argv[i]!
  if (word !== flag) return { path: word.slice(flag.length + 1), index: i, inline: true }
  const path = argv[i + 1]
  if (path === undefined || path.startsWith('-')) return { problem: `${flag} is not followed by a file name` }
  return { path, index: i, inline: false }
}

interface Word {
  /** The word as the parser reads it (after the `_` → `-` rewrite). */
  text: string
  /** The word as given. */
  orig: string
  /** What the truth table shows for it: the argv word, or the config file's entry. */
  shown: string
  /** Where it came from: an argv index, or a config entry's index. */
  source: 'argv' | 'config'
  index: number
}

/** `--max_num_seqs=4` → `--max-num-seqs=4`: the name's underscores (before its first `.`) become dashes. */
export function dashed(word: string): string {
  if (!word.startsWith('--')) return word
  const eq = word.indexOf('=')
  const name = eq < 0 ? word : word.slice(0, eq)
  const dot = name.indexOf('.')
  const head = dot < 0 ? name : name.slice(0, dot)
  return `${head.replaceAll('_', '-')}${name.slice(head.length)}${eq < 0 ? '' : word.slice(eq)}`
}

type Item =
  | { kind: 'A'; word: Word }
  | { kind: 'O'; word: Word; flag: KnownFlag; explicit: string | undefined; prefix: boolean }
  | { kind: 'ambiguous'; word: Word; matches: string[] }
  | { kind: 'unknown'; word: Word; explicit: string | undefined }

const NEGATIVE_NUMBER = /^-\d+$|^-\d*\.\d+$/

/** argparse's `_parse_optional`: is this word an option, and which one. */
function classify(word: Word, known: readonly KnownFlag[] | null, rules: ParserRules): Item {
  const w = word.text
  if (!w.startsWith('-') || w === '-') return { kind: 'A', word }
  const byName = (name: string) => known?.find((k) => k.name === name)
  const exact = byName(w)
  if (exact) return { kind: 'O', word, flag: exact, explicit: undefined, prefix: false }
  const eq = w.indexOf('=')
  const name = eq < 0 ? w : w.slice(0, eq)
  const explicit = eq < 0 ? undefined : w.slice(eq + 1)
  if (eq >= 0 && byName(name)) return { kind: 'O', word, flag: byName(name)!, explicit, prefix: false }
  if (known && rules.abbreviations && w.startsWith('--')) {
    const matches = known.filter((k) => k.name.startsWith(name))
    if (matches.length > 1) return { kind: 'ambiguous', word, matches: matches.map((k) => k.name) }
    if (matches.length === 1) return { kind: 'O', word, flag: matches[0]!, explicit, prefix: true }
  }
  if (NEGATIVE_NUMBER.test(w) && !(known ?? []).some((k) => NEGATIVE_NUMBER.test(k.name))) return { kind: 'A', word }
  if (w.includes(' ')) return { kind: 'A', word }
  return { kind: 'unknown', word, explicit }
}

/** The parser's flags: the build's, and its `--config` flag where the build's list lacks it. */
function withConfigFlag(known: readonly KnownFlag[], rules: ParserRules): readonly KnownFlag[] {
  return rules.configFlag && !known.some((k) => k.name === rules.configFlag)
    ? [...known, { name: rules.configFlag, takesValue: true }]
    : known
}

/** Every word classified as the parser would; after `--` every word is an argument. */
function classifyAll(words: readonly Word[], flags: readonly KnownFlag[], rules: ParserRules): Item[] {
  let rest = false
  return words.map((w) => {
    if (rest) return { kind: 'A', word: w }
    if (w.text === '--') {
      rest = true
      return { kind: 'A', word: w }
    }
    return classify(w, flags, rules)
  })
}

/**
 * The value of `flag` in `argv` (the process's whole argv: the program's own leading words are
 * skipped), and of the config file's flags when argv names one (`config`, read by the caller).
 * `known`: the build's flags from its --help; without them only exact spellings can be decided
 * and a possible prefix of the flag is `unsure`. `flag` may be one name, or every name of it
 * (`FlagNames`: other spellings, a switch and its negation, which give `true` and `false`).
 */
export function resolveFlag(
  argv: readonly string[],
  flag: string | FlagNames,
  rules: ParserRules,
  known: readonly KnownFlag[] | null,
  config?: ConfigArgs,
): Resolution {
  const spelled: FlagNames = typeof flag === 'string' ? { names: [flag] } : flag
  const negated = spelled.switch?.negated ?? null
  const mine = new Set([...spelled.names, ...(negated !== null ? [negated] : [])])
  const problems: string[] = []
  const refused: string[] = []
  const unsure: string[] = []
  const refuse = (about: string, text: string) => (mine.has(about) ? problems : refused).push(text)
  const ref = findConfig(argv, rules)
  if (ref && 'problem' in ref) problems.push(ref.problem)
  if (ref && !('problem' in ref) && !config) unsure.push(`the flags of ${ref.path} (not read)`)
  const words = parserWords(argv, rules, config)

  // Without the build's flag list only the flag's own spellings are decided (a knob's flag takes a value, a switch none).
  const exactOnly = known === null
  const listed: readonly KnownFlag[] = known ?? [...mine].map((name) => ({ name, takesValue: spelled.switch === undefined }))
  const items = classifyAll(words, withConfigFlag(listed, rules), exactOnly ? { ...rules, abbreviations: false } : rules)
  const found: Array<Omit<Occurrence, 'won'>> = []
  const spelling = (w: Word, prefix: boolean): Occurrence['spelling'] =>
    prefix ? 'prefix' : w.text.split('=')[0] !== w.orig.split('=')[0] ? 'underscore' : 'exact'
  for (let i = 0; i < items.length; i++) {
    const it = items[i]!
    if (it.kind === 'A') continue
    if (it.kind === 'ambiguous') {
      refuse(it.matches.find((m) => mine.has(m)) ?? it.word.text, `ambiguous option: ${it.word.text} could match ${it.matches.join(', ')}`)
      continue
    }
    const next = items[i + 1]
    if (it.kind === 'unknown') {
      const name = it.word.text.split('=')[0]!
      if (!exactOnly) refused.push(`unrecognized arguments: ${it.word.orig}`)
      else if (rules.abbreviations && name.startsWith('--') && name.length > 2 && [...mine].some((f) => f.startsWith(name)))
        unsure.push(it.word.orig)
      // Without the flag list, a `--name` is taken to consume the word after it, as most flags do.
      if (exactOnly && it.explicit === undefined && next?.kind === 'A') i++
      continue
    }
    let value: string
    let written = it.word.shown
    if (it.flag.takesValue) {
      if (it.explicit !== undefined) value = it.explicit
      else if (next?.kind === 'A') {
        value = next.word.text
        if (it.word.source === 'argv') written = `${it.word.shown} ${next.word.shown}`
        i++
      } else {
        refuse(it.flag.name, `argument ${it.flag.name}: expected one argument`)
        continue
      }
    } else {
      if (it.explicit !== undefined) {
        refuse(it.flag.name, `argument ${it.flag.name}: ignored explicit argument '${it.explicit}'`)
        continue
      }
      // A switch stands for true, its negation for false.
      value = spelled.switch ? (it.flag.name === negated ? 'false' : 'true') : ''
    }
    if (mine.has(it.flag.name)) found.push({ written, value, source: it.word.source, spelling: spelling(it.word, it.prefix) })
  }
  const winner = found.length === 0 ? -1 : rules.lastWins ? found.length - 1 : 0
  const occurrences = found.map((o, i) => ({ ...o, won: i === winner }))
  return { value: winner < 0 ? undefined : occurrences[winner]!.value, occurrences, problems, refused, unsure }
}

/** The words the parser reads, config file entries first (the command line beats them), argv's from its first flag on, the config flag itself left out. */
function parserWords(argv: readonly string[], rules: ParserRules, config: ConfigArgs | undefined): Word[] {
  const start = argv.findIndex((w) => w.startsWith('-'))
  const ref = findConfig(argv, rules)
  const skip = new Set<number>(ref && !('problem' in ref) ? (ref.inline ? [ref.index] : [ref.index, ref.index + 1]) : [])
  const words: Word[] = []
  for (const [i, e] of (config?.entries ?? []).entries())
    for (const w of e.words) words.push({ text: w, orig: w, shown: e.written, source: 'config', index: i })
  if (start >= 0)
    for (let i = start; i < argv.length; i++)
      if (!skip.has(i)) words.push({ text: argv[i]!, orig: argv[i]!, shown: argv[i]!, source: 'argv', index: i })
  for (const w of words) if (rules.underscoreIsDash) w.text = dashed(w.text)
  return words
}

/** The whole command line as the parser reads it: every flag it resolves, by its name, and the positional words. */
export interface CommandLineResolution {
  /** Each flag given, by its name as the build lists it, with the value the parser keeps ('' for a switch). */
  flags: Map<string, string>
  /** The positional words after the program's own (argv[0]): before the first flag (a subcommand, a script), and between the flags. */
  positionals: string[]
  /** Where the parser would refuse the command line (an ambiguous prefix, a flag without its value). */
  problems: string[]
  /** Flags the build's list does not name, as written: kept in `flags` under their own name (their value only when written `--x=v`). */
  unlisted: string[]
}

/**
 * Every flag of `argv` (and of its config file's `config`), read as the engine's parser reads
 * it with the build's flag list `known` (its --help): unique prefixes and `_` spellings resolved
 * to the listed name, the winning occurrence's value kept. The config flag names a file, not a
 * setting: it is not among the flags (the file's flags are).
 */
export function resolveCommandLine(
  argv: readonly string[],
  rules: ParserRules,
  known: readonly KnownFlag[],
  config?: ConfigArgs,
): CommandLineResolution {
  const problems: string[] = []
  const ref = findConfig(argv, rules)
  if (ref && 'problem' in ref) problems.push(ref.problem)
  const start = argv.findIndex((w) => w.startsWith('-'))
  const positionals = argv.slice(1, start < 0 ? argv.length : start)
  const words = parserWords(argv, rules, config)
  const flags = withConfigFlag(known, rules)
  const out = new Map<string, string>()
  const unlisted: string[] = []
  const items = classifyAll(words, flags, rules)
  for (let i = 0; i < items.length; i++) {
    const it = items[i]!
    // A positional word (the `--` that ends the flags among them, as written).
    if (it.kind === 'A') {
      positionals.push(it.word.orig)
      continue
    }
    if (it.kind === 'ambiguous') {
      problems.push(`ambiguous option: ${it.word.text} could match ${it.matches.join(', ')}`)
      continue
    }
    if (it.kind === 'unknown') {
      // A flag --help does not list (the build's list may be incomplete): kept as written, its value only when given with `=`.
      const name = it.word.text.split('=')[0]!
      unlisted.push(it.word.orig)
      if (rules.lastWins || !out.has(name)) out.set(name, it.explicit ?? '')
      continue
    }
    const next = items[i + 1]
    let value = ''
    if (it.flag.takesValue) {
      if (it.explicit !== undefined) value = it.explicit
      else if (next?.kind === 'A') {
        value = next.word.text
        i++
      } else {
        problems.push(`argument ${it.flag.name}: expected one argument`)
        continue
      }
    } else if (it.explicit !== undefined) {
      problems.push(`argument ${it.flag.name}: ignored explicit argument '${it.explicit}'`)
      continue
    }
    if (it.flag.name === rules.configFlag) continue
    if (rules.lastWins || !out.has(it.flag.name)) out.set(it.flag.name, value)
  }
  return { flags: out, positionals, problems, unlisted }
}
