// pnpm merge-reports --out merged.json shard-1.json shard-2.json …: one fleet report from the
// shards of a fleet run; exit = the merged worst verdict, 2 when refused.
import { startCompileCache } from './compile-cache.mjs'

startCompileCache()
const { mergeReports } = await import('../helpers/fleet/merge.ts')

process.exitCode = await mergeReports({
  rawArgs: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  out: process.stdout,
  err: process.stderr,
})
