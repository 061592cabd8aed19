// `armproof <command> [options]`: the installed command (package.json `bin` → bin/armproof.mjs,
// which checks the Node version, then loads this file built to dist/bin/armproof.js). Each command
// is the same program as its pnpm script in a checkout: `armproof verify …` is `pnpm verify …`.
import pkg from '../package.json' with { type: 'json' }
import { closest } from '../helpers/config/suggest.ts'
import { VERSION_FLAGS, VERSION_TEXT } from '../helpers/config/invocation.ts'

/**
 * Each command: `run` loads it (it reads its options from process.argv); `help` is its --help text
 * alone, from a module that holds only what the text needs (demo answers --help itself before it
 * loads anything else).
 */
const COMMANDS = {
  verify: {
    run: () => import('./verify.ts'),
    help: async () => (await import('../helpers/cli/verify-help.ts')).verifyHelp(),
    what: 'prove one knob arm on one service, or on a fleet with --targets FILE (exit 0 green, 1 red, 2 usage, 3 inconclusive; a fleet: the worst)',
  },
  preflight: {
    run: () => import('./preflight.ts'),
    help: async () => (await import('../helpers/cli/preflight-help.ts')).preflightHelp(),
    what: "before the deploy: the running build's --help lists the flag and the value is legal, the engine runs --previous, no drop-in, the checkout on main and clean, the env file changes the knob alone (exit 0 ready, 1 not, 2 usage, 3 cannot tell)",
  },
  writeback: {
    run: () => import('./writeback.ts'),
    help: async () => (await import('../helpers/writeback/options.ts')).writebackHelp(),
    what: "write a green report into the endpoint's vault page",
  },
  'merge-reports': {
    run: () => import('./merge-reports.ts'),
    help: async () => (await import('../helpers/fleet/merge-help.ts')).mergeHelp(),
    what: 'merge the --report files of a sharded fleet run (--shard i/n) into one',
  },
  serve: {
    run: () => import('./serve.ts'),
    help: async () => (await import('../helpers/serve/options.ts')).serveHelp(),
    what: 'answer a rollout controller (Argo Rollouts, Flagger) over HTTP: POST /verify/<svc> runs that target of --targets FILE (200 green, 412 not green, 503 busy, 401 no token)',
  },
  demo: {
    run: () => import('./demo.ts'),
    help: null,
    what: 'verify the reference engine on loopback with PREFILL_INTERLEAVE armed to 1 (no endpoint, no network)',
  },
  effect: {
    run: () => import('./effect.ts'),
    help: async () => (await import('../helpers/effect/help.ts')).effectHelp(),
    what: 'judge later, from the real traffic in Prometheus, what the arm did to latency and cadence (exit 0 no metric worse, 1 worse, 2 usage, 3 inconclusive)',
  },
} as const

const USAGE = `armproof ${pkg.version}: ${pkg.description}

Usage: armproof <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(10)} ${c.what}`)
  .join('\n')}

  armproof <command> --help   the command's options (every flag has an env twin; .env in the current folder is read)
  armproof --version, -V      the version (the same line as every command's --version)

Reports, fixtures and .env are read and written relative to the current folder.`

/** What asks for help, of armproof itself or of one command. */
const HELP_FLAGS: readonly string[] = ['--help', '-h']

const [command, ...rest] = process.argv.slice(2)
if (command === undefined || HELP_FLAGS.includes(command) || command === 'help') {
  process.stdout.write(`${USAGE}\n`)
} else if (VERSION_FLAGS.includes(command) || command === '-v') {
  process.stdout.write(`${VERSION_TEXT}\n`)
} else if (Object.hasOwn(COMMANDS, command)) {
  const chosen = COMMANDS[command as keyof typeof COMMANDS]
  // `armproof <command> --version` or `--help` and nothing else: the same text the command prints,
  // at once, without loading the command (a verify's loads vitest: some 0.1–0.2 CPU-s more).
  if (rest.length === 1 && VERSION_FLAGS.includes(rest[0]!)) process.stdout.write(`${VERSION_TEXT}\n`)
  else if (rest.length === 1 && HELP_FLAGS.includes(rest[0]!) && chosen.help) process.stdout.write(`${await chosen.help()}\n`)
  else {
    // Each command reads its own options from process.argv.slice(2), as under `pnpm <command>`.
    process.argv = [process.argv[0]!, process.argv[1]!, ...rest]
    await chosen.run()
  }
} else {
  process.stderr.write(
    `armproof: unknown command ${JSON.stringify(command)}${closest(command, Object.keys(COMMANDS)) ? ` (did you mean ${closest(command, Object.keys(COMMANDS))}?)` : ''}; commands: ${Object.keys(COMMANDS).join(', ')} (armproof --help)\n`,
  )
  process.exitCode = 2
}
