// How many targets of a fleet run at once (helpers/fleet/admission.ts): as many as the run can
// afford (file descriptors, memory, an event loop that keeps up), never more than --concurrency
// N; each waiter served in turn; the first always starts. The resources are made up here.
import { describe, expect, test } from 'vitest'
import {
  admission,
  fleetAdmission,
  forgetGate,
  rememberGate,
  FDS_PER_TARGET,
  FDS_RESERVE,
  MAX_LAG_MS,
  MIN_TARGET_BYTES,
  type Resources,
} from '../../helpers/fleet/admission.ts'
import { planFleet } from '../../helpers/fleet/plan.ts'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tempDir } from '../support/temp-dir.ts'

const MiB = 1 << 20

function resources(over: Partial<{ fds: number; rss: number; heap: number; heapLimit: number; available: number; lag: number }> = {}) {
  const r = { fds: 100_000, rss: 100 * MiB, heap: 50 * MiB, heapLimit: 4096 * MiB, available: 16_384 * MiB, lag: 0, ...over }
  const res: Resources & { r: typeof r } = {
    r,
    fdsFree: () => r.fds,
    rss: () => r.rss,
    heapUsed: () => r.heap,
    heapLimit: () => r.heapLimit,
    available: () => r.available,
    lagMs: () => r.lag,
    close() {},
  }
  return res
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0))

/** Asks `n` slots at once; who got one so far, in order. */
function ask(gate: ReturnType<typeof admission>, n: number) {
  const got: number[] = []
  const releases: Array<() => void> = []
  for (let i = 0; i < n; i++) void gate.acquire().then((release) => (got.push(i), (releases[i] = release)))
  return { got, releases }
}

describe('the fleet lets in as many targets as it can afford', () => {
  test('auto with plenty: every target at once', async () => {
    const gate = admission({ cap: null, targets: 50, resources: resources() })
    const { got } = ask(gate, 50)
    await tick()
    expect(got).toHaveLength(50)
    expect([gate.peak(), gate.ceiling()]).toEqual([50, 50])
  })

  test('--concurrency N caps it, each waiter in turn, a double release gives back one slot', async () => {
    const gate = admission({ cap: 3, targets: 10, resources: resources() })
    const { got, releases } = ask(gate, 10)
    await tick()
    expect(got).toEqual([0, 1, 2])
    releases[1]!()
    releases[1]!()
    await tick()
    expect(got).toEqual([0, 1, 2, 3])
    expect(gate.peak()).toBe(3)
  })

  test('file descriptors: no more targets than their sockets and pipes fit in', async () => {
    const fds = FDS_RESERVE + 4 * FDS_PER_TARGET + 5
    const gate = admission({ cap: null, targets: 20, resources: resources({ fds }) })
    const { got } = ask(gate, 20)
    await tick()
    expect(got).toHaveLength(4)
    expect(gate.ceiling()).toBe(4)
  })

  test('memory: a target is let in only while its share of memory so far still fits; the first always starts', async () => {
    const res = resources({ available: 10 * MiB })
    const gate = admission({ cap: null, targets: 10, resources: res })
    const { got, releases } = ask(gate, 10)
    await tick()
    // Budget: rss at start + half of 10 MiB available; each target counted at least MIN_TARGET_BYTES.
    expect(got).toHaveLength(Math.floor((5 * MiB) / MIN_TARGET_BYTES))
    // The targets in flight grew memory to the budget: nobody more, until one ends.
    res.r.rss += 5 * MiB
    releases[0]!()
    await tick()
    expect(got).toHaveLength(5)
    res.r.rss -= 5 * MiB
    releases[1]!()
    await tick()
    expect(got.length).toBeGreaterThan(5)
    const alone = admission({ cap: null, targets: 2, resources: resources({ available: 0 }) })
    const first = ask(alone, 2)
    await tick()
    expect(first.got).toEqual([0])
  })

  test('an event loop that does not keep up holds the next targets until it does', async () => {
    const res = resources({ lag: MAX_LAG_MS + 1 })
    const gate = admission({ cap: null, targets: 5, resources: res })
    const { got } = ask(gate, 5)
    await tick()
    expect(got).toEqual([0])
    res.r.lag = 0
    await new Promise((resolve) => setTimeout(resolve, 120))
    expect(got).toHaveLength(5)
    gate.close()
  })
})

describe('--concurrency', () => {
  const dir = tempDir('armproof-admission-')
  const file = join(dir, 't.yaml')
  writeFileSync(file, 'targets:\n  - svc: a\n    base-url: http://127.0.0.1:1\n')
  const plan = (argv: string[], env: Record<string, string> = {}) =>
    planFleet({ argv: ['--targets', file, '--knob', 'PREFILL_INTERLEAVE', ...argv], env: { VERIFY_NO_DOTENV: '1', ...env }, cwd: dir })

  test('auto by default, and when asked; a number is the cap; anything else is refused, saying auto', () => {
    const p = (argv: string[], env?: Record<string, string>) => {
      const r = plan(argv, env)
      return r.ok ? r.plan.concurrency : r.problems.map((x) => x.message).join('; ')
    }
    expect(p([])).toBeNull()
    expect(p(['--concurrency', 'auto'])).toBeNull()
    expect(p([], { VERIFY_CONCURRENCY: 'auto' })).toBeNull()
    expect(p(['--concurrency', '12'])).toBe(12)
    expect(p(['--concurrency', '4096'])).toBe(4096)
    expect(p(['--concurrency', 'lots'])).toMatch(/must be auto or a whole number 1–4096/)
    expect(p(['--concurrency', '4097'])).toMatch(/must be auto or a whole number/)
  })
})

describe("the gate a fleet run's report reads", () => {
  test("is the last fleet suite's until its run ends, then none: a later run in the process reports no gate of an earlier one", () => {
    const gate = admission({ cap: 3, targets: 5, resources: resources() })
    rememberGate(gate)
    expect(fleetAdmission()).toEqual({ peak: 0, ceiling: 3 })
    forgetGate()
    expect(fleetAdmission()).toBeUndefined()
    gate.close()
  })
})
