// The package scripts' one entry: `pnpm verify …` runs `node bin/run.mjs verify …`, and so for
// every command package.json runs through it. In one Node process it refuses a Node older than
// engines.node (node-check.mjs), turns on the compile cache (compile-cache.mjs), and only then
// loads the command's TypeScript entry, bin/<command>.ts. Plain JavaScript because Node strips a
// `.ts` entry with its TypeScript stripper (WebAssembly, some 15 MB and 30 ms to load) before any of
// the entry's code runs, so before the entry could turn the cache on; from here, with a warm cache,
// the stripper is never loaded at all.
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import './node-check.mjs'

const name = process.argv[2] ?? ''
const scripts = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).scripts ?? {}
// A command is a package script that runs through this launcher: package.json says which, once.
if (scripts[name] !== `node bin/run.mjs ${name}`) {
  const known = Object.keys(scripts).filter((s) => scripts[s] === `node bin/run.mjs ${s}`)
  process.stderr.write(
    `armproof: bin/run.mjs needs a command first (${known.join(', ')}), got ${JSON.stringify(name)}: run \`pnpm <command> …\`\n`,
  )
  process.exit(2)
}
// Imported only now: on an old Node, node-check.mjs has already said what it needs.
const { startCompileCache } = await import('./compile-cache.mjs')
startCompileCache()
const entry = new URL(`./${name}.ts`, import.meta.url)
// The command sees the argv `node bin/<command>.ts …` gives it: its arguments from argv[2], and
// argv[1] naming its entry (how helpers/config/invocation.ts tells who started it).
process.argv.splice(1, 2, fileURLToPath(entry))
await import(entry.href)
