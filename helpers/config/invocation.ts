// How this process was started, decided once, and so how every message names a command: the
// installed command (`armproof verify …`), a package script in a checkout (`pnpm verify …`), the
// bootstrap (`sh bootstrap.sh verify …`), or a bin called straight (`node bin/verify.ts …`; the
// last two are never ended by pnpm 12's ELIFECYCLE line). Usage lines and `next:` hints ask `command()`; none writes a launcher itself. The version
// text is here too: every command answers `--version` / `-V` with the same line.
import pkg from '../../package.json' with { type: 'json' }

export type Launcher = 'armproof' | 'pnpm' | 'bootstrap' | 'node'

/** armproof's commands, as the installed `armproof` names them and as their bins are called. */
export type CommandName = 'verify' | 'preflight' | 'writeback' | 'merge-reports' | 'demo' | 'effect' | 'serve'

/** What `--version` and `-V` print, on every command. */
export const VERSION_TEXT = `armproof ${pkg.version}`

/** The flags that ask for the version (the top-level `armproof -v` is kept as a third). */
export const VERSION_FLAGS: readonly string[] = ['--version', '-V']

/**
 * The launcher from the script node was started with (`process.argv[1]`) and pnpm's
 * `npm_lifecycle_event`: the installed bin is `armproof` (npm's symlink) or `armproof.mjs`, or one
 * of the package's built bins (`dist/bin/verify.js`, a run `armproof serve` started); a bin of
 * this checkout started by its own package script is pnpm's, or the bootstrap's when bootstrap.sh
 * ran that script (it says `ARMPROOF_LAUNCHER=bootstrap:<script>`); started by anything else (a
 * shell, CI, an outer `pnpm test` whose variables leak into the child) it was called straight.
 */
export function launcherOf(script: string | undefined, env: Readonly<Record<string, string | undefined>>): Launcher {
  const path = script ?? ''
  if (/(?:^|[\\/])armproof(?:\.mjs)?$/.test(path)) return 'armproof'
  // A built bin of the installed package (dist/bin/verify.js, as `armproof serve` starts each run): the installed command's.
  if (/(?:^|[\\/])dist[\\/]bin[\\/][a-z-]+\.js$/.test(path)) return 'armproof'
  const bin = /(?:^|[\\/])bin[\\/]([a-z-]+)\.ts$/.exec(path)?.[1]
  if (bin !== undefined && env.ARMPROOF_LAUNCHER === `bootstrap:${bin}`) return 'bootstrap'
  if (bin !== undefined && env.npm_lifecycle_event !== bin) return 'node'
  // A package script, or a caller in this process (a test, vitest): the checkout's documented form.
  return 'pnpm'
}

let decided: Launcher | undefined

/** This process's launcher, decided at the first question and kept. */
export function launcher(): Launcher {
  decided ??= launcherOf(process.argv[1], process.env)
  return decided
}

/** How to run `name` the way this process was run: `armproof writeback`, `pnpm writeback`, `node bin/writeback.ts`. */
export function command(name: CommandName, how: Launcher = launcher()): string {
  if (how === 'armproof') return `armproof ${name}`
  if (how === 'node') return `node bin/${name}.ts`
  if (how === 'bootstrap') return `sh bootstrap.sh ${name}`
  return `pnpm ${name}`
}

/** Whether argv asks for the version (as its first word for the top-level `armproof`, anywhere for a command). */
export function asksVersion(argv: readonly string[]): boolean {
  return argv.some((a) => VERSION_FLAGS.includes(a))
}
