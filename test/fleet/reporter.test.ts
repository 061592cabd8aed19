// The fleet's reporter (helpers/fleet/reporter.ts): when a target began and ended. vitest hands a
// reporter its results in batches; a target's end is its last step's end as vitest timed it, so
// two targets whose results come in one batch still end in the order they ran.
import { describe, expect, test } from 'vitest'
import { FleetReporter } from '../../helpers/fleet/reporter.ts'
import type { CaseLike } from '../../helpers/report/collect.ts'
import { stepTarget } from '../support/step-context.ts'

const sink = { write: () => true }

/** A target's top suite whose test cases vitest timed at `times` ([startTime, duration] each, ms since the epoch). */
function suite(i: number, times: ReadonlyArray<readonly [number, number]> | null) {
  const cases: CaseLike[] = (times ?? [[0, 0]]).map(([startTime, duration], j) => ({
    name: `step ${j}`,
    meta: () => ({}),
    result: () => ({ state: 'passed' }),
    ...(times ? { diagnostic: () => ({ startTime, duration }) } : {}),
  }))
  return {
    name: `target ${i}`,
    parent: { type: 'module' },
    meta: () => ({ armproofTarget: i }),
    errors: () => [],
    children: { allTests: () => cases, allSuites: () => [] },
  }
}

function reporter(n: number): FleetReporter {
  const target = stepTarget(['--knob', 'PREFILL_INTERLEAVE', '--value', '1'])
  return new FleetReporter({
    targets: Array.from({ length: n }, (_, i) => ({ label: `t${i}`, target })),
    out: sink,
    err: sink,
    live: false,
  })
}

describe('a target ends with its last step, as vitest timed it', () => {
  test('two targets whose results come in one batch, one after the other: each its own end, in the order they ran', () => {
    const r = reporter(2)
    const t0 = Date.now()
    r.onTestSuiteReady(suite(0, []))
    r.onTestSuiteReady(suite(1, []))
    // The first ran from t0 for 12 s; the second, after it (--concurrency 1), for 3 s.
    r.onTestSuiteResult(
      suite(0, [
        [t0, 2000],
        [t0 + 2000, 10_000],
      ]),
    )
    r.onTestSuiteResult(
      suite(1, [
        [t0 + 12_500, 1000],
        [t0 + 13_500, 2000],
      ]),
    )
    r.onTestRunEnd([], [])
    const [first, second] = r.outcomes()
    expect(first!.finishedAt!.getTime()).toBe(t0 + 12_000)
    expect(second!.finishedAt!.getTime()).toBe(t0 + 15_500)
  })

  test('never before the target began; without vitest’s timing, when its result came', () => {
    const r = reporter(2)
    const before = Date.now()
    r.onTestSuiteReady(suite(0, []))
    // A clock that disagrees (a step timed before the suite was seen to begin): the end is its beginning.
    r.onTestSuiteResult(suite(0, [[before - 120_000, 10]]))
    r.onTestSuiteReady(suite(1, []))
    r.onTestSuiteResult(suite(1, null))
    r.onTestRunEnd([], [])
    const [clamped, untimed] = r.outcomes()
    expect(clamped!.finishedAt!.getTime()).toBe(clamped!.startedAt!.getTime())
    expect(untimed!.finishedAt!.getTime()).toBeGreaterThanOrEqual(before)
    expect(untimed!.finishedAt!.getTime()).toBeLessThanOrEqual(Date.now())
  })
})
