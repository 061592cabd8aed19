// The vitest pool `pnpm verify` runs the arm suite in (helpers/cli/in-process-pool.ts): vitest's
// @experimental worker runtime checked before it is used, and, when it is not what the pool was
// written for, the suite run under vitest's stock forks pool instead, to the same verdicts and
// report, with the reason in one line.
import { join } from 'node:path'
import * as vitestWorker from 'vitest/worker'
import { describe, expect, test } from 'vitest'
import { workerRuntime } from '../../helpers/cli/in-process-pool.ts'
import type { Report } from '../../helpers/report/json.ts'
import { ROOT, cleanup, runVerify, verdicts, armedArgs } from '../support/run-verify.ts'
import { armedEngine } from '../support/armed-engine.ts'
import { SUITE_PROCESS_LINE } from '../support/suite-process.ts'

describe("vitest's worker runtime, checked before the in-process pool uses it", () => {
  const fn0 = () => {}
  const fn1 = (_a: unknown) => {}
  const fn3 = (_a: unknown, _b: unknown, _c: unknown) => {}

  test('vitest 5.1.2 (the pinned one) has what the pool calls', () => {
    const runtime = workerRuntime(vitestWorker)
    expect(runtime).not.toHaveProperty('why')
    expect(runtime).toMatchObject({
      init: vitestWorker.init,
      runBaseTests: vitestWorker.runBaseTests,
      setupEnvironment: vitestWorker.setupEnvironment,
    })
  })

  test('a function missing, not a function, or taking other parameters: the pool is not used, and why is one line', () => {
    expect(workerRuntime({ runBaseTests: fn3, setupEnvironment: fn1 })).toEqual({ why: 'vitest/worker exports no init' })
    expect(workerRuntime({ init: fn1, runBaseTests: {}, setupEnvironment: fn1 })).toEqual({
      why: "vitest/worker's runBaseTests is of type object, not a function",
    })
    expect(workerRuntime({ init: fn1, runBaseTests: fn3, setupEnvironment: fn0 })).toEqual({
      why: "vitest/worker's setupEnvironment takes 0 parameter(s), this pool passes 1",
    })
    expect(workerRuntime({ init: fn3, runBaseTests: fn3, setupEnvironment: fn1 })).toEqual({
      why: "vitest/worker's init takes 3 parameter(s), this pool passes 1",
    })
  })
})

/** A report reduced to what both pools must agree on: every verdict, and the shape (each key path with its value's type); the values a run draws or times (words, ids, durations) are its own. */
function verdictsAndShape(report: Report | undefined): unknown {
  if (!report) return undefined
  const shape = new Set<string>()
  const walk = (value: unknown, path: string): void => {
    if (Array.isArray(value)) return void (value.length === 0 ? shape.add(`${path}[]: empty`) : value.forEach((v) => walk(v, `${path}[]`)))
    if (value !== null && typeof value === 'object') return void Object.entries(value).forEach(([k, v]) => walk(v, `${path}.${k}`))
    shape.add(`${path}: ${value === null ? 'null' : typeof value}`)
  }
  walk(report, '')
  return {
    verdict: report.verdict,
    exitCode: report.exitCode,
    error: report.error,
    notes: report.notes,
    steps: verdicts(report),
    truth: report.truth?.rows.map((r) => `${r.source}: ${r.verdict}`),
    shape: [...shape].sort(),
  }
}

describe('the stock pool, against the reference engine', () => {
  const armed = armedEngine('pool', 'rpool')

  test("a vitest whose worker runtime changed: the suite runs in a forked worker, says why in one line, and reaches the in-process pool's verdicts and report", async () => {
    const engine = armed()
    const args = armedArgs(engine)
    const preload = (...files: string[]) => ({ NODE_OPTIONS: files.map((f) => `--import=${join(ROOT, 'test/support', f)}`).join(' ') })
    const inProcess = await runVerify(args, { engine, env: preload('suite-process.ts') })
    const forked = await runVerify(args, { engine, env: preload('suite-process.ts', 'no-worker-runtime.ts') })
    try {
      const out = (run: typeof forked) => `${run.stdout}\n${run.stderr}`
      expect(inProcess.exitCode, out(inProcess)).toBe(0)
      expect(forked.exitCode, out(forked)).toBe(0)
      expect(inProcess.stderr.match(SUITE_PROCESS_LINE)?.[1], out(inProcess)).toBe('true')
      expect(forked.stderr.match(SUITE_PROCESS_LINE)?.[1], out(forked)).toBe('false')
      expect(inProcess.stderr).not.toMatch(/forked/)
      expect(forked.stderr.match(/^armproof: warning: .*$/gm)).toEqual([
        'armproof: warning: the suite runs in a worker forked by vitest, not in this process: vitest/worker exports no init',
      ])
      expect(verdictsAndShape(forked.report)).toEqual(verdictsAndShape(inProcess.report))
      expect(forked.report?.verdict).toBe('green')
      // The same runbook printed: each step's line up to its observed value (` 1 ✓ dropins  no drop-in … — …`).
      const stepLines = (run: typeof forked) =>
        run.stdout
          .split('\n')
          .filter((l) => /^\s*\d+ \S+ [a-z.-]+ /.test(l))
          .map((l) => l.split('  — ')[0]!.replace(/\s+/g, ' ').trim())
      expect(stepLines(forked)).toHaveLength(10)
      // The three probes run side by side and each line is printed as its probe ends: the same lines, in either order among them.
      expect(stepLines(forked).toSorted()).toEqual(stepLines(inProcess).toSorted())
    } finally {
      cleanup(inProcess)
      cleanup(forked)
    }
  })
})
