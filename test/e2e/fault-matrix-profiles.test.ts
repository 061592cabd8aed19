// Runs the fault matrix of the other engines (test/support/profile-matrix.ts): each built-in knob of
// the vllm, sglang and llama.cpp profiles, and a catalog file's, against the reference engine
// speaking that engine, judged in this process side by side (test/support/fault-matrix-check.ts),
// in its own file beside test/e2e/fault-matrix.test.ts. Zero false greens: a non-green case never exits 0.
import { afterAll, beforeAll, describe, test } from 'vitest'
import type { EngineHandle } from '../../engine/launch.ts'
import { useSpawner } from '../../helpers/seams/executor.ts'
import { PROFILE_MATRIX } from '../support/profile-matrix.ts'
import { checkRow, rows, startRowOf } from '../support/fault-matrix-check.ts'
import { sharedEngines } from '../support/shared-engines.ts'

const engines: EngineHandle[] = []
// Host programs start from the spawner, as in a fleet run: forked from this worker (which holds
// every row's run), each would cost page-table copies of it; their answers are the same.
beforeAll(() => useSpawner(true))
afterAll(async () => {
  useSpawner(false)
  await Promise.all(engines.map((e) => e.stop()))
})

// Numbered after radiance's rows (their svc and process names are machine-wide): 500 on.
const CASES = rows(PROFILE_MATRIX, (c) => 500 + PROFILE_MATRIX.indexOf(c))

// Rows that need the very same engine and never change it share one, one row after another (test/support/shared-engines.ts).
const SHARED = sharedEngines(CASES, (first) => startRowOf(first, engines))

describe.concurrent('the fault matrix of the other engines', () => {
  test.for(CASES)('$fault: $what → $verdict ($how)', (c, { expect }) => {
    const share = SHARED.get(c)
    return share ? share.run((row) => checkRow(c, engines, expect, row)) : checkRow(c, engines, expect)
  })
})
