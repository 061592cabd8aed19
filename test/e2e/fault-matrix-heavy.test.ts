// The HEAVY rows of the fault matrix (test/support/fault-matrix.ts): engines that stream tens of MB
// (a 30 MB /metrics, a 64 MiB log). Judged in this process like the other rows
// (test/support/prove-in-process.ts), in their own file, so in their own vitest worker, one after
// another: beside the side-by-side rows of test/e2e/fault-matrix.test.ts they would stall those rows'
// timings.
import { afterAll, describe, test } from 'vitest'
import type { EngineHandle } from '../../engine/launch.ts'
import { FAULT_MATRIX, HEAVY } from '../support/fault-matrix.ts'
import { checkRow, rows } from '../support/fault-matrix-check.ts'

const engines: EngineHandle[] = []
afterAll(async () => {
  await Promise.all(engines.map((e) => e.stop()))
})

const CASES = rows(
  FAULT_MATRIX.filter((c) => HEAVY.includes(c.fault)),
  (c) => FAULT_MATRIX.indexOf(c),
)

describe('the fault matrix, heavy rows', () => {
  test('every HEAVY row is a row of the matrix', ({ expect }) => {
    expect(CASES.map((c) => c.fault)).toEqual([...HEAVY])
  })
  test.for(CASES)('$fault: $what → $verdict ($how)', (c, { expect }) => checkRow(c, engines, expect))
})
