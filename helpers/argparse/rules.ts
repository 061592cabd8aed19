// How an engine's parser reads its command line, as data: an engine profile swaps these (stock
// vLLM and radiance share them; llama.cpp or SGLang bring their own: helpers/profiles/*.yaml
// `parser:`). ./resolve.ts applies them.

export interface ParserRules {
  /**
   * `_` and `-` are one in a `--flag`'s name: the name (before a `=`, and before its first `.`) is
   * rewritten with dashes before parsing, as vLLM's FlexibleArgumentParser does.
   */
  underscoreIsDash: boolean
  /** A unique prefix of a long flag is that flag (argparse's `allow_abbrev`, on by default). */
  abbreviations: boolean
  /** A flag given twice keeps its last value (argparse's `store` action); false: the first one stands. */
  lastWins: boolean
  /**
   * The flag naming a YAML file of flags (keys are flag names without dashes), given as
   * `--config FILE` or `--config=FILE`, at most once. Its flags are put before the command line's,
   * so the command line beats the file. Null: the engine reads no such file.
   */
  configFlag: string | null
  /**
   * The prefix that turns a switch off: argparse's BooleanOptionalAction gives every `--x` a
   * `--no-x` (vLLM's bool fields). Null or absent: a switch has no negation (store_true).
   */
  negation?: string | null
}

/**
 * How one knob's flag is written: its own name and its other spellings (`-np` for `--parallel`),
 * each taking a value; or, for a switch, the bare flag (true) and its negation (false).
 */
export interface FlagNames {
  names: readonly string[]
  /** A switch: the flag takes no value and stands for `true`; `negated` for `false`. */
  switch?: { negated: string | null }
}

/** The flag's names as the parser reads them: the knob's flag, its aliases, and for a switch its negation under the parser's rules. */
export function flagNames(
  spec: { flag: string; aliases?: readonly string[]; type: { kind: string } },
  rules: Pick<ParserRules, 'negation'>,
): FlagNames {
  const names = [spec.flag, ...(spec.aliases ?? [])]
  if (spec.type.kind !== 'bool') return { names }
  const negation = rules.negation ?? null
  return { names, switch: { negated: negation !== null ? `${negation}${spec.flag.replace(/^--/, '')}` : null } }
}

/** radiance parses as vLLM's FlexibleArgumentParser (an argparse.ArgumentParser) does. */
export const RADIANCE_PARSER: ParserRules = { underscoreIsDash: true, abbreviations: true, lastWins: true, configFlag: '--config' }

/** One flag the build's --help lists, and whether it takes a value (`--x VALUE`, `--x {a,b}`) or not (`--x`). */
export interface KnownFlag {
  name: string
  takesValue: boolean
}
