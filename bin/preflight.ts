// pnpm preflight --svc X --knob Y --value V --previous P [options]: exit 0 ready to deploy, 1 not, 2 configuration, 3 cannot tell, 4 the report unwritten.
import { startCompileCache } from './compile-cache.mjs'

startCompileCache()
const { preflight } = await import('../helpers/cli/preflight.ts')

const exit = process.exit.bind(process)
process.exitCode = await preflight({
  rawArgs: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  out: process.stdout,
  err: process.stderr,
  // SIGINT / SIGTERM: the checks made so far written as the report, marked interrupted; exit 130 / 143.
  exit: (code) => exit(code),
})
