// How an engine's parser reads its command line, as data: an engine profile swaps these (stock
// vLLM and radiance share them; llama.cpp or SGLang bring their own). ./resolve.ts applies them.

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
}

/** radiance parses as vLLM's FlexibleArgumentParser (an argparse.ArgumentParser) does. */
export const RADIANCE_PARSER: ParserRules = { underscoreIsDash: true, abbreviations: true, lastWins: true, configFlag: '--config' }

/** One flag the build's --help lists, and whether it takes a value (`--x VALUE`, `--x {a,b}`) or not (`--x`). */
export interface KnownFlag {
  name: string
  takesValue: boolean
}
