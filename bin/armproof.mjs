#!/usr/bin/env node
// The installed `armproof` command (package.json `bin`). Plain JavaScript so that an old Node gets
// one line saying what it needs (bin/node-check.mjs) instead of a stack trace; then the program
// itself, built from bin/armproof.ts to dist/ by `pnpm build` (run by `pnpm pack`).
import { existsSync } from 'node:fs'
import './node-check.mjs'

const built = new URL('../dist/bin/armproof.js', import.meta.url)
if (!existsSync(built)) {
  process.stderr.write(
    'armproof: dist/ is missing: this is a checkout, not a package; run `pnpm build` (or use `pnpm verify`, `pnpm demo` here)\n',
  )
  process.exit(2)
}
await import(built.href)
