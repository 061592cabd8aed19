// pnpm effect [options]: exit 0 no metric worse, 1 a metric worse, 2 configuration, 3 inconclusive, 4 an output not written.
import { startCompileCache } from './compile-cache.mjs'

startCompileCache()
const { effect } = await import('../helpers/effect/command.ts')

process.exitCode = await effect({
  rawArgs: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  out: process.stdout,
  err: process.stderr,
})
