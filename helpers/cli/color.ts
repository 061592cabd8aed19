// Whether armproof's output is coloured, decided here once per run and asked by every output
// (step lines, the verdict and closing lines, a fleet's lines). The conventions of its neighbours:
//   --color / --no-color    on the command line, beat everything else (the last one given wins)
//   FORCE_COLOR             non-empty: colour even when piped; FORCE_COLOR=0 or false: none
//   NO_COLOR                non-empty (any value): no colour; an empty NO_COLOR= is unset (no-color.org)
//   TERM=dumb               no colour
// otherwise colour only on a terminal, and never under CI=true (a log keeps plain text).

/** What the flags and env say; `auto` leaves it to whether the stream is a terminal. */
export type ColorChoice = 'always' | 'never' | 'auto'

type Env = Readonly<Record<string, string | undefined>>

/** `flag`: the command line's --color (true) / --no-color (false), as the one parser read it (helpers/config/command-line.ts). */
export function colorChoice(flag: boolean | undefined, env: Env): ColorChoice {
  if (flag !== undefined) return flag ? 'always' : 'never'
  const force = env.FORCE_COLOR?.trim()
  if (force !== undefined && force !== '') return /^(0|false)$/i.test(force) ? 'never' : 'always'
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return 'never'
  if (env.TERM === 'dumb') return 'never'
  return 'auto'
}

/** Whether the run is under CI (`CI=true` or `CI=1`): no live redraws, no colour unless forced. */
export function underCi(env: Env): boolean {
  return env.CI === 'true' || env.CI === '1'
}

/** Whether lines written to `stream` get ANSI colour. */
export function paints(choice: ColorChoice, stream: { isTTY?: boolean }, env: Env): boolean {
  if (choice !== 'auto') return choice === 'always'
  return stream.isTTY === true && !underCi(env)
}
