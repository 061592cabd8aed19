// A run proven to be about another engine than the one step argv read ends there: the steps after
// the proof are not judged (no health budget, no meter window is waited), the proof's own step
// fails with it, and the section's work before its steps is not done. Coordinated only through
// the step outputs (StepOutputs.wrongEngine), whoever proved it.
import { describe, expect, test } from 'vitest'
import { loadConfig } from '../helpers/config/load.ts'
import type { HttpClient } from '../helpers/seams/http.ts'
import { createContext, type WrongEngine } from '../helpers/steps/context.ts'
import { beforeGroup, judgeStep, proofRun } from '../helpers/steps/judges.ts'
import { runVerdict } from '../helpers/steps/verdict.ts'
import { VirtualClock } from './support/virtual-clock.ts'
import { fakeProcHost } from './support/fake-proc.ts'

const PROOF: WrongEngine = {
  step: 'meter',
  expected: 'process_start_time_seconds of the endpoint = the start time of pid 4242 (step argv)',
  observed: 'the endpoint says 1764500100.5, pid 4242 started at 1764500010',
  where: 'GET http://gpu-7:8000/metrics',
  next: 'point --base-url at the engine --host reads',
}

function run() {
  const config = loadConfig({ argv: ['--svc', 'llm-7', '--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--base-url', 'http://gpu-7:8000', '--host', 'local'], env: {} })
  if (!config.ok) throw new Error(JSON.stringify(config.problems))
  let asked = 0
  const http: HttpClient = {
    async request() {
      asked++
      throw new Error('no request may be sent once the run is proven to be about another engine')
    },
  }
  const host = fakeProcHost({ procs: [] })
  const r = proofRun(createContext({ target: config.target, http, host, clock: new VirtualClock(0), choices: { pick: (_n, o) => o[0]! } }))
  return { r, asked: () => asked, host }
}

describe('a run proven to be about another engine', () => {
  test('ends: later steps are not judged (nothing is asked, no budget waited), the proof\'s step fails with it, and the run is red', async () => {
    const { r, asked, host } = run()
    r.given.wrongEngine = PROOF
    await beforeGroup(r, 'behaviour survived')
    const health = await judgeStep(r, 'health', 'health')
    const exact = await judgeStep(r, 'probe.exact', 'exact')
    const meter = await judgeStep(r, 'meter', 'meter')
    expect(asked()).toBe(0)
    expect(host.calls).toEqual([])
    expect(health).toMatchObject({ verdict: 'skipped', observed: `not judged: the run is proven to be about another engine than the one step argv read (${PROOF.observed})`, next: PROOF.next })
    expect(health.intendedSkip).toBeUndefined()
    expect(exact.verdict).toBe('skipped')
    expect(meter).toMatchObject({ verdict: 'failed', expected: PROOF.expected, observed: PROOF.observed, where: PROOF.where, next: PROOF.next })
    expect(runVerdict([health, exact, meter], new Set())).toBe('red')
  })

  test('without a proof the steps are judged as ever (here: the health step asks /health)', async () => {
    const { r, asked } = run()
    await expect(judgeStep(r, 'health', 'health')).rejects.toThrow('no request may be sent')
    expect(asked()).toBe(1)
  })
})

