// The Node compile cache every process of `pnpm test` shares (vitest.config.ts sets it for the
// workers, who pass it on to pnpm verify, writeback and the reference engine): compiled code is
// reused from one process and one run to the next. vitest imports each test file, and pnpm
// verify its suite file, under a new `?vitest=<time>` URL every time, so each run also leaves
// entries nothing reads again; the cache is emptied once it holds more than MAX_ENTRIES, which
// costs the next run one cold start instead of letting the folder grow without end.
// One folder per checkout: the cache is keyed by each module's path, so checkouts side by side on
// one machine (git worktrees) share none of it, and in one folder each one's runs would empty it
// for the others, mid-run too, and every process started after that compiles from cold.
import { createHash } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { cacheEntries, pruneCompileCache } from '../../bin/compile-cache.mjs'

export { cacheEntries, pruneCompileCache }

const CHECKOUT = createHash('sha256')
  .update(fileURLToPath(new URL('../..', import.meta.url)))
  .digest('hex')
  .slice(0, 10)
export const TEST_COMPILE_CACHE = join(tmpdir(), `armproof-test-compile-cache-${CHECKOUT}`)
/** About ten runs of `pnpm test` (each leaves some 500 entries, 4 MB), some 40 MB. */
export const MAX_ENTRIES = 5000

/** vitest's globalSetup for the unit project: once per run, before any test file. */
export default function setup(): void {
  pruneCompileCache(TEST_COMPILE_CACHE, MAX_ENTRIES)
}
