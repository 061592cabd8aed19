// `node --import ./scripts/perf/count-modules.mjs …`: on exit, appends to $PERF_MODULES_OUT one
// JSON line, {"pid":…,"modules":N,"undici":M}: the modules this process loaded (every URL the
// module loader loaded, Node's built-ins included), and how many of them are undici's.
import { appendFileSync } from 'node:fs'
import { registerHooks } from 'node:module'

const loaded = new Set()
registerHooks({
  load(url, context, nextLoad) {
    loaded.add(url)
    return nextLoad(url, context)
  },
})
process.on('exit', () => {
  const out = process.env.PERF_MODULES_OUT
  if (!out) return
  const undici = [...loaded].filter((u) => /\/node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?undici\//.test(u)).length
  appendFileSync(out, `${JSON.stringify({ pid: process.pid, modules: loaded.size, undici })}\n`)
})
