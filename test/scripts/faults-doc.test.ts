import { readFileSync } from 'node:fs'
import { expect, test } from 'vitest'
import { faultsMarkdown } from '../../scripts/faults-doc.ts'
import { SURROUNDINGS } from '../support/fault-matrix.ts'

test('docs/faults.md is the table generated from the fault matrix (run pnpm faults-doc after changing it)', () => {
  expect(readFileSync(new URL('../../docs/faults.md', import.meta.url), 'utf8')).toBe(faultsMarkdown())
})

test('every fault of the surroundings in the docs has its test in test/e2e/ssh.test.ts', () => {
  const source = readFileSync(new URL('../e2e/ssh.test.ts', import.meta.url), 'utf8')
  for (const f of SURROUNDINGS) expect(source, f.fault).toContain(f.test)
})
