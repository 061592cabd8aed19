// A globalSetup of the unit project: a run started with a temp folder of its own (TMPDIR set, the
// folder holding nothing but what is kept on purpose) ends red when its tests left anything else
// in it: every test file removes what it makes there, passed or failed (./temp-dir.ts). Where the
// temp folder is shared (TMPDIR unset, the folder `pnpm test` shares between runs (./temp-root.ts),
// or a folder others write to) their files come and go at any time, so nothing is checked.
import { readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { resolve } from 'node:path'
import { sharedTempPath } from './temp-root.ts'

/** Kept from one run to the next on purpose. */
const KEPT: readonly RegExp[] = [
  /^armproof-test-compile-cache(-[0-9a-f]{10})?$/, // ./compile-cache.ts
  /^armproof-compile-cache$/, // bin/compile-cache.mjs
  /^radiance-ref-compile-cache$/, // engine/launch.ts
  /^radiance-ref-ports-/, // engine/proc.ts: the port leases the machine's processes share
  /^armproof-effect-tsdb-cache-[0-9a-f]{16}$/, // test/effect/tsdb.ts: promtool's blocks of the effect's scenarios
]
/**
 * vitest's own folder of the run (join(tmpdir(), nanoid()), for its module copies; none in this
 * configuration): vitest removes it after this teardown. Never one of ours, which a 21-character
 * name such as armproof-fleet-XXXXXX could be.
 */
const VITEST_OWN = /^(?!armproof-|radiance-)[A-Za-z0-9_-]{21}$/
/** Names listed in the message, at most. */
const SHOWN = 20

/** What is in `dir` that nobody keeps on purpose. */
export function strays(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => !KEPT.some((k) => k.test(name)) && !VITEST_OWN.test(name))
    .sort()
}

/** The teardown's complaint about `left` in `dir`, or null when nothing is left. */
export function leftMessage(dir: string, left: readonly string[]): string | null {
  if (left.length === 0) return null
  const shown = left.slice(0, SHOWN).join(', ') + (left.length > SHOWN ? `, … (${left.length - SHOWN} more)` : '')
  return (
    `the tests left ${left.length} entr${left.length === 1 ? 'y' : 'ies'} in the temp folder ${dir} ` +
    `(expected: none but the caches kept on purpose): ${shown}; next: the test file (or the helper it calls) that makes one ` +
    'removes it whether its tests pass or fail: tempDir() in test/support/temp-dir.ts, or an afterAll of the file'
  )
}

/** The teardown that checks `dir`, or undefined when it holds strays already (others write there). */
export function tempCheck(dir: string): (() => void) | undefined {
  if (strays(dir).length > 0) return undefined
  return () => {
    const message = leftMessage(dir, strays(dir))
    if (message) throw new Error(message)
  }
}

/** vitest's globalSetup for the unit project: once per run, before any test file; the teardown after the last. */
export default function setup(): (() => void) | undefined {
  const own = process.env.TMPDIR !== undefined && process.env.TMPDIR !== '' && resolve(process.env.TMPDIR) !== sharedTempPath()
  return own ? tempCheck(tmpdir()) : undefined
}
