// pnpm writeback --report FILE --vault DIR [options]: exit 0 written (or already there), 2 refused.
import { startCompileCache } from './compile-cache.mjs'

startCompileCache()
const { writeback } = await import('../helpers/writeback/command.ts')

process.exitCode = await writeback({
  rawArgs: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  out: process.stdout,
  err: process.stderr,
})
