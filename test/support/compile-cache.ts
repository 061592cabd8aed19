// The Node compile cache every process of `pnpm test` shares (vitest.config.ts sets it for the
// workers, who pass it on to pnpm verify, writeback and the reference engine): compiled code is
// reused from one process and one run to the next. vitest imports each test file, and pnpm
// verify its suite file, under a new `?vitest=<time>` URL every time, so each run also leaves
// entries nothing reads again; the cache is emptied once it holds more than MAX_ENTRIES, which
// costs the next run one cold start instead of letting the folder grow without end.
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cacheEntries, pruneCompileCache } from '../../bin/compile-cache.ts'

export { cacheEntries, pruneCompileCache }

export const TEST_COMPILE_CACHE = join(tmpdir(), 'armproof-test-compile-cache')
/** About ten runs of `pnpm test` (each leaves some 500 entries, 4 MB), some 40 MB. */
export const MAX_ENTRIES = 5000

/** vitest's globalSetup for the unit project: once per run, before any test file. */
export default function setup(): void {
  pruneCompileCache(TEST_COMPILE_CACHE, MAX_ENTRIES)
}
