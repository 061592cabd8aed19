import { readFileSync } from 'node:fs'
import { expect, test } from 'vitest'
import { faultsMarkdown } from '../scripts/faults-doc.ts'

test('docs/faults.md is the table generated from the fault matrix (run pnpm faults-doc after changing it)', () => {
  expect(readFileSync(new URL('../docs/faults.md', import.meta.url), 'utf8')).toBe(faultsMarkdown())
})
