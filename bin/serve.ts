// pnpm serve --targets FILE [--listen HOST:PORT]: serves verdicts over HTTP to a rollout controller
// until SIGTERM / SIGINT (exit 143 / 130); exit 2 when it cannot start (every problem said).
import { startCompileCache } from './compile-cache.mjs'

startCompileCache()
const { serve } = await import('../helpers/serve/command.ts')

process.exitCode = await serve({
  rawArgs: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  out: process.stdout,
  err: process.stderr,
})
