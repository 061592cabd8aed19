// Runs the fault table of writeback and replay (test/support/writeback-faults.ts): every row does
// its harm, checks what must hold (page, files, output), and must end with its exit code and
// message. docs/writeback-faults.md is generated from the same rows and kept equal here.
import { readFileSync } from 'node:fs'
import { afterAll, describe, expect, test } from 'vitest'
import { writebackFaultsMarkdown } from '../../scripts/faults-doc.ts'
import { stopSharedEngine } from '../support/record-faults.ts'
import { WRITEBACK_FAULTS, type FaultRow } from '../support/writeback-faults.ts'

async function check(row: FaultRow): Promise<void> {
  const got = await row.run()
  expect(got.output, got.output).toContain(row.message)
  expect(got.exit, got.output).toBe(row.exit)
}

// The record rows' shared engine (test/support/record-faults.ts) ends with the table.
afterAll(stopSharedEngine)

// The many-process rows one at a time, first; then every other row at once.
describe('the writeback and replay fault table: many processes', () => {
  test.each(WRITEBACK_FAULTS.filter((r) => r.alone))('$area: $fault → exit $exit', check, 120_000)
})

describe.concurrent('the writeback and replay fault table', () => {
  test.each(WRITEBACK_FAULTS.filter((r) => !r.alone))('$area: $fault → exit $exit', check, 120_000)
})

test('docs/writeback-faults.md is the table generated from the rows (run pnpm faults-doc after changing them)', () => {
  expect(readFileSync(new URL('../../docs/writeback-faults.md', import.meta.url), 'utf8')).toBe(writebackFaultsMarkdown())
})
