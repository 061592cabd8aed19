// Refuses, in one line, a Node older than package.json's `engines.node`, before anything written
// in TypeScript is loaded (an old Node fails on a `.ts` entry before any of its code runs).
// Plain JavaScript that any Node >= 14 parses. Three uses:
//   node bin/node-check.mjs && node bin/verify.ts …   (the package.json scripts)
//   import './node-check.mjs'                          (bin/armproof.mjs, the installed command)
//   node bin/node-check.mjs --status                   (bootstrap.sh: exit 0 or 1, prints nothing)
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
// --status only when run as a script, never through the installed command's own argv.
const status = /node-check\.mjs$/.test(process.argv[1] || '') && process.argv.includes('--status')
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
const wanted = String(pkg.engines?.node)
const floor = /^>=\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(wanted)
if (!floor) throw new Error(`package.json engines.node must read ">=X.Y", got ${JSON.stringify(wanted)}`)
const need = floor.slice(1).map((n) => Number(n || 0))
const have = process.versions.node.split('.').map(Number)
let ok = true
for (let i = 0; i < 3; i++) {
  if (have[i] !== need[i]) {
    ok = have[i] > need[i]
    break
  }
}

if (!ok) {
  if (status) process.exit(1)
  // In a checkout the bootstrap brings a local Node; an installed package can only name the version.
  const fix = existsSync(`${root}bootstrap.sh`)
    ? 'run `sh bootstrap.sh demo` (or `sh bootstrap.sh test`, `sh bootstrap.sh verify …`): it installs Node 24 and pnpm 12.4.2 into .tools/ and runs the command with them'
    : 'install Node 24 LTS and run armproof with it'
  process.stderr.write(`armproof needs Node ${wanted} (24 LTS); this is Node ${process.versions.node} (${process.execPath}): ${fix}\n`)
  process.exit(2)
}
if (status) process.exit(0)
