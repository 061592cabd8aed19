// pnpm verify --svc X --knob Y [options]: exit 0 green, 1 red, 2 configuration (before or on first contact), 3 inconclusive, 130/143 interrupted.
import { startCompileCache } from './compile-cache.mjs'

startCompileCache()
// Bound now: during the run vitest's runtime replaces process.exit with one that throws.
const exit = process.exit.bind(process)
// A run armproof serve started ends with serve, whatever ends serve (helpers/cli/served-run.ts).
const { watchServedRun } = await import('../helpers/cli/served-run.ts')
watchServedRun(process.env, exit)
const { verify } = await import('../helpers/cli/verify.ts')

const code = await verify({
  rawArgs: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  out: process.stdout,
  err: process.stderr,
  exit: (c) => exit(c),
})
// Everything verify started has ended by now (reports written, host commands finished, the HTTP
// client closed). What would keep the process up is vitest's runtime, which ran the suite in this
// process: its task-update throttle leaves a timer of up to 100 ms. Exit once the output is out.
const flushed = (stream: NodeJS.WriteStream): Promise<void> => new Promise((resolve) => stream.write('', () => resolve()))
await Promise.all([flushed(process.stdout), flushed(process.stderr)])
exit(code)
