// Runs the fault matrix (test/support/fault-matrix.ts): for every fault, the proof against a
// reference engine with that one misbehaviour gives the expected verdict, exit code, red steps and
// message (test/support/fault-matrix-check.ts). Zero false greens: a non-green case never exits 0.
// The rows of END_TO_END run whole `pnpm verify` processes (a key file, a key echoed back, kubectl
// through the command's environment); the operator's mistakes run the same verify() in this
// process (they are answered before the proof steps); the others judge the same steps in this
// process (test/support/prove-in-process.ts). The three HEAVY rows run in
// test/e2e/fault-matrix-heavy.test.ts. As in the profiles' matrix (fault-matrix-profiles.test.ts):
// host programs start from the spawner, and rows that need the very same engine share one, one
// row after another (test/support/shared-engines.ts).
import { afterAll, beforeAll, describe, test } from 'vitest'
import type { EngineHandle } from '../../engine/launch.ts'
import { useSpawner } from '../../helpers/seams/executor.ts'
import { FAULT_MATRIX, HEAVY, type FaultCase } from '../support/fault-matrix.ts'
import { checkRow, rows, startRowOf } from '../support/fault-matrix-check.ts'
import { sharedEngines } from '../support/shared-engines.ts'

const engines: EngineHandle[] = []
// Forked from this worker (which holds every row's run), each host program would cost page-table copies of it.
beforeAll(() => useSpawner(true))
afterAll(async () => {
  useSpawner(false)
  await Promise.all(engines.map((e) => e.stop()))
})

// The rows that wait out the whole health budget start first, so the side-by-side run does not end on them.
const waitsHealthBudget = (c: FaultCase): boolean => c.steps.health === 'inconclusive'
const CASES = rows(
  FAULT_MATRIX.filter((c) => !HEAVY.includes(c.fault)),
  (c) => FAULT_MATRIX.indexOf(c),
).sort((a, b) => Number(waitsHealthBudget(b)) - Number(waitsHealthBudget(a)))

// Rows that need the very same engine and never change it share one, one row after another.
const SHARED = sharedEngines(CASES, (first) => startRowOf(first, engines))

describe.concurrent('the fault matrix', () => {
  test.for(CASES)('$fault: $what → $verdict ($how)', (c, { expect }) => {
    const share = SHARED.get(c)
    return share ? share.run((row) => checkRow(c, engines, expect, row)) : checkRow(c, engines, expect)
  })
})
