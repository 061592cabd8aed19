// A run proven to be about another engine than the one step argv read ends there: the steps after
// the proof are not judged (no health budget, no meter window is waited), the proof's own step
// fails with it, and the section's work before its steps is not done. Coordinated only through
// the step outputs (StepOutputs.wrongEngine), whoever proved it.
import { describe, expect, test } from 'vitest'
import { loadConfig } from '../../helpers/config/load.ts'
import type { HttpClient } from '../../helpers/seams/http.ts'
import { createContext, type WrongEngine } from '../../helpers/steps/context.ts'
import { beforeGroup, judgeStep, proofRun } from '../../helpers/steps/judges.ts'
import { EXIT_CODES, runVerdict } from '../../helpers/steps/verdict.ts'
import { VirtualClock } from '../support/virtual-clock.ts'
import { engineSeen, fakeProcHost } from '../support/fake-proc.ts'

const PROOF: WrongEngine = {
  step: 'meter',
  verdict: 'failed',
  expected: 'process_start_time_seconds of the endpoint = the start time of pid 4242 (step argv)',
  observed: 'the endpoint says 1764500100.5, pid 4242 started at 1764500010',
  where: 'GET http://gpu-7:8000/metrics',
  next: 'point --base-url at the engine --host reads',
}

function run() {
  const config = loadConfig({
    argv: ['--svc', 'llm-7', '--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--base-url', 'http://gpu-7:8000', '--host', 'local'],
    env: {},
  })
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
  test("ends: later steps are not judged (nothing is asked, no budget waited), the proof's step fails with a proof that the engine is wrong, and the run is red", async () => {
    const { r, asked, host } = run()
    r.given.wrongEngine = PROOF
    await beforeGroup(r, 'behaviour')
    const health = await judgeStep(r, 'health', 'health')
    const exact = await judgeStep(r, 'probe.exact', 'exact')
    const meter = await judgeStep(r, 'meter', 'meter')
    expect(asked()).toBe(0)
    expect(host.calls).toEqual([])
    expect(health).toMatchObject({
      verdict: 'skipped',
      observed: `not judged: the run is proven to be about another engine than the one step argv read (${PROOF.observed})`,
      next: PROOF.next,
    })
    expect(health.intendedSkip).toBeUndefined()
    expect(exact.verdict).toBe('skipped')
    expect(meter).toMatchObject({
      verdict: 'failed',
      expected: PROOF.expected,
      observed: PROOF.observed,
      where: PROOF.where,
      next: PROOF.next,
    })
    expect(runVerdict([health, exact, meter], new Set())).toBe('red')
  })

  test('without a proof the steps are judged as ever (here: the health step asks /health)', async () => {
    const { r, asked } = run()
    await expect(judgeStep(r, 'health', 'health')).rejects.toThrow('no request may be sent')
    expect(asked()).toBe(1)
  })
})

describe('a proof that the endpoint is another engine (the engine not at fault)', () => {
  test("is inconclusive, not red: the proof's step is inconclusive with it, the later steps are not judged, exit 3", async () => {
    const { r, asked } = run()
    r.given.wrongEngine = { ...PROOF, verdict: 'inconclusive' }
    const exact = await judgeStep(r, 'probe.exact', 'exact')
    const meter = await judgeStep(r, 'meter', 'meter')
    expect(asked()).toBe(0)
    expect(exact).toMatchObject({ verdict: 'skipped', next: PROOF.next })
    expect(meter).toMatchObject({
      verdict: 'inconclusive',
      expected: PROOF.expected,
      observed: PROOF.observed,
      where: PROOF.where,
      next: PROOF.next,
    })
    expect(runVerdict([exact, meter], new Set())).toBe('inconclusive')
    expect(EXIT_CODES[runVerdict([exact, meter], new Set())]).toBe(3)
  })
})

// The meter's baseline page, read before the probes, is the first place the run can be proven to
// be about two engines (helpers/steps/meter/two-engines.ts, by the rule of helpers/steps/meter/bind.ts).
describe('the baseline page of another engine ends the run before the probes', () => {
  // pid 4242 started at btime + 1000 ticks / 100 = 1764500010 (the fake host's defaults).
  const PID_START = 1764500010
  const page = (start: number | null) =>
    [
      ...(start === null ? [] : ['# TYPE process_start_time_seconds gauge', `process_start_time_seconds ${start}`]),
      '# TYPE radiance:engine_steps_held_total counter',
      'radiance:engine_steps_held_total{engine="0",model_name="radiance-ref-8b"} 0.0',
      '# TYPE vllm:request_success_total counter',
      'vllm:request_success_total{finished_reason="stop",model_name="radiance-ref-8b"} 3.0',
      '',
    ].join('\n')

  async function baseline(start: number | null, procsNow: Array<{ pid: string; name: string; startTicks?: number }>) {
    const config = loadConfig({
      argv: ['--svc', 'llm-7', '--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--base-url', 'http://gpu-7:8000', '--host', 'local'],
      env: {},
    })
    if (!config.ok) throw new Error(JSON.stringify(config.problems))
    const urls: string[] = []
    const http: HttpClient = {
      async request(req) {
        urls.push(req.url)
        if (!req.url.endsWith('/metrics')) throw new Error(`only /metrics may be read before the probes, not ${req.url}`)
        return {
          status: 200,
          headers: { 'content-type': 'text/plain; version=0.0.4' },
          body: page(start),
          url: req.url,
          redirects: [],
          durationMs: 1,
        }
      },
    }
    const host = fakeProcHost({ procs: procsNow })
    const r = proofRun(
      createContext({ target: config.target, http, host, clock: new VirtualClock(0), choices: { pick: (_n, o) => o[0]! } }),
    )
    r.given.healthy = true
    r.given.engineProcess = engineSeen('4242', true, { startTimeSeconds: PID_START, foundBy: 'container' })
    await beforeGroup(r, 'behaviour')
    return { r, urls, host }
  }

  test('a page started an hour before the pid, which still runs: inconclusive, the probes skipped, nothing sent to the other engine', async () => {
    const { r, urls, host } = await baseline(PID_START - 3600, [{ pid: '4242', name: 'radiance' }])
    expect(urls).toEqual(['http://gpu-7:8000/metrics'])
    // The process was looked up again (the same pid, started at the same time), once.
    expect(host.calls.length).toBeGreaterThan(0)
    expect(r.given.wrongEngine).toMatchObject({ step: 'meter', verdict: 'inconclusive', where: 'GET http://gpu-7:8000/metrics' })
    expect(r.given.wrongEngine!.observed).toContain('this run is about two engines')
    expect(r.given.wrongEngine!.observed).toContain(
      `process_start_time_seconds ${PID_START - 3600} at scrape 1 (the baseline, before the probes)`,
    )
    expect(r.given.wrongEngine!.next).toContain('point --base-url at the engine step argv read')
    const probes = await Promise.all((['probe.exact', 'probe.tools', 'probe.vision'] as const).map((id) => judgeStep(r, id, id)))
    const meter = await judgeStep(r, 'meter', 'meter')
    expect(urls).toHaveLength(1)
    expect(probes.map((p) => p.verdict)).toEqual(['skipped', 'skipped', 'skipped'])
    expect(meter.verdict).toBe('inconclusive')
    expect(runVerdict([...probes, meter], new Set())).toBe('inconclusive')
  })

  test('a page started at another time and the pid argv read gone: a restart, red', async () => {
    const { r } = await baseline(PID_START + 60, [{ pid: '5151', name: 'radiance' }])
    expect(r.given.wrongEngine).toMatchObject({ step: 'meter', verdict: 'failed' })
    expect(r.given.wrongEngine!.observed).toContain('the engine restarted during the proof')
    expect(r.given.wrongEngine!.observed).toContain('step argv read pid 4242')
    const meter = await judgeStep(r, 'meter', 'meter')
    expect(meter.verdict).toBe('failed')
  })

  test("a page with the pid's own start time, or none: the run goes on (a page nothing ties is the meter's own verdict)", async () => {
    for (const start of [PID_START, null]) {
      const { r, host } = await baseline(start, [{ pid: '4242', name: 'radiance' }])
      expect(r.given.wrongEngine, String(start)).toBeUndefined()
      expect(r.given.baseline?.source, String(start)).toBe('metrics')
      // No re-check was needed to know it.
      expect(host.calls, String(start)).toEqual([])
    }
  })
})
