// The start order of `pnpm test` (test/support/slow-first.ts) names test files by their path under
// test/: a file moved or renamed without its entry there starts late, silently (an outdated list
// costs time, never a result). Every entry must name a test file that the unit project runs, once.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, test } from 'vitest'
import { SLOW_FIRST } from '../support/slow-first.ts'

const TEST_DIR = fileURLToPath(new URL('..', import.meta.url))

test('every file the start order names is a test file under test/, named once', () => {
  expect(SLOW_FIRST.length).toBeGreaterThan(0)
  for (const name of SLOW_FIRST) {
    expect(name, name).toMatch(/^(?!support\/)[\w./-]+\.test\.ts$/)
    expect(existsSync(join(TEST_DIR, name)), `test/support/slow-first.ts names ${name}, which is not a file under test/`).toBe(true)
  }
  expect(new Set(SLOW_FIRST).size).toBe(SLOW_FIRST.length)
})
