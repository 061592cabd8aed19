// The meter judge through Prometheus (helpers/steps/meter/prometheus.ts) in-process: a fake
// Prometheus HTTP API answering the two queries of each poll from a timeline of scrapes, pidof
// answers and a virtual clock. Each way the meter can fail through Prometheus is shown red or
// inconclusive, the two greens and the rollback green, and exactly two queries per poll.
import { describe, expect, test } from 'vitest'
import { VirtualClock } from './support/virtual-clock.ts'
import { loadConfig } from '../helpers/config/load.ts'
import type { HostClient } from '../helpers/seams/host.ts'
import { engineSeen, fakeProcHost } from './support/fake-proc.ts'
import type { HttpClient } from '../helpers/seams/http.ts'
import { createContext, type RunContext } from '../helpers/steps/context.ts'
import { JUDGES, BEFORE_GROUP } from '../helpers/steps/judges.ts'
import type { Judgement } from '../helpers/steps/verdict.ts'

const PROM = 'http://prom.test:9090'
const BASE = 'http://gpu-7.test:8000'
const INSTANCE = 'gpu-7.test:8000'
const MODEL = 'radiance-ref-8b'
const METER = 'radiance:engine_steps_held_total'
const T0 = Date.UTC(2026, 10, 30, 2, 0, 0)
const PID = '4242'

type V = number | 'NaN' | 'absent'
interface Scrape {
  /** ms after the run's start (may be negative: before it). */
  dt: number
  meter: V
  requests: number
  /** The meter under another prefix too (the prefix trap). */
  lookalike?: boolean
  /** The meter only for another model. */
  model?: string
}

interface Scenario {
  scrapes: Scrape[]
  value: '1' | null
  /** The meter series is no longer current (stale) at evaluation times after this dt. */
  staleAfter?: number
  /** Another instance's series, also taken by the selector. */
  secondInstance?: boolean
  /** Every query refused with this HTTP status and Prometheus' error body. */
  refuse?: number
}

const fmt = (v: Exclude<V, 'absent'>): string => (typeof v === 'number' ? String(v) : v)

function fakeProm(s: Scenario): { http: HttpClient; queries: () => number } {
  let queries = 0
  const series = (sc: Scrape, instance: string): Array<{ metric: Record<string, string>; v: string }> => {
    const base = { instance, job: 'radiance' }
    const out = [{ metric: { __name__: 'up', ...base }, v: '1' }, { metric: { __name__: 'vllm:request_success_total', ...base, engine: '0', finished_reason: 'stop', model_name: MODEL }, v: String(sc.requests) }]
    if (sc.meter !== 'absent') out.push({ metric: { __name__: METER, ...base, engine: '0', model_name: sc.model ?? MODEL }, v: fmt(sc.meter) })
    if (sc.lookalike) out.push({ metric: { __name__: 'vllm:engine_steps_held_total', ...base, engine: '0', model_name: MODEL }, v: '5' })
    return out
  }
  const http: HttpClient = {
    async request(req) {
      queries++
      const u = new URL(req.url)
      expect(`${u.origin}${u.pathname}`).toBe(`${PROM}/api/v1/query`)
      const reply = (status: number, body: unknown) => ({ status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), url: req.url, redirects: [], durationMs: 1 })
      if (s.refuse) return reply(s.refuse, { status: 'error', errorType: 'bad_data', error: 'parse error: unexpected character' })
      const query = u.searchParams.get('query')!
      expect(query).toContain(`instance="${INSTANCE}"`)
      const at = Math.round(Number(u.searchParams.get('time')) * 1000)
      const range = /\[(\d+)s\]$/.exec(query)
      const seen = s.scrapes.filter((sc) => T0 + sc.dt <= at)
      const instances = s.secondInstance ? [INSTANCE, 'gpu-8.test:8000'] : [INSTANCE]
      const keyed = new Map<string, { metric: Record<string, string>; values: Array<[number, string]> }>()
      for (const sc of seen) {
        for (const inst of instances) {
          for (const x of series(sc, inst)) {
            const key = JSON.stringify(x.metric)
            if (!keyed.has(key)) keyed.set(key, { metric: x.metric, values: [] })
            keyed.get(key)!.values.push([(T0 + sc.dt) / 1000, x.v])
          }
        }
      }
      if (range) {
        const from = at - Number(range[1]) * 1000
        const result = [...keyed.values()].map((k) => ({ metric: k.metric, values: k.values.filter(([t]) => t * 1000 > from) })).filter((k) => k.values.length > 0)
        return reply(200, { status: 'success', data: { resultType: 'matrix', result } })
      }
      const stale = (m: Record<string, string>) => m.__name__ === METER && s.staleAfter !== undefined && at > T0 + s.staleAfter
      const result = [...keyed.values()].filter((k) => !stale(k.metric) && k.values.some(([t]) => t * 1000 === T0 + seen.at(-1)!.dt)).map((k) => ({ metric: k.metric, value: k.values.at(-1) }))
      return reply(200, { status: 'success', data: { resultType: 'vector', result } })
    },
  }
  return { http, queries: () => queries }
}

async function judge(s: Scenario): Promise<{ j: Judgement<'meter'>; queries: number }> {
  const argv = ['--svc', 'llm-7', '--knob', 'PREFILL_INTERLEAVE', '--base-url', BASE, '--meter-window', '10s', '--host', 'local', '--model', MODEL, '--prometheus-url', PROM]
  if (s.value !== null) argv.push('--value', s.value)
  const config = loadConfig({ argv, env: {} })
  if (!config.ok) throw new Error(JSON.stringify(config.problems))
  const prom = fakeProm(s)
  // The engine lookup of step argv, run again after the watch: one process named radiance, pid PID.
  const host: HostClient = fakeProcHost({ procs: [{ pid: PID, name: 'radiance' }] })
  const ctx: RunContext = createContext({ target: config.target, http: prom.http, host, clock: new VirtualClock(T0), choices: { pick: (_n, o) => o[0]! } })
  const given = await BEFORE_GROUP['behaviour survived']!(ctx)
  const j = await JUDGES.meter(ctx, { ...given, engineProcess: engineSeen(PID, true) })
  return { j, queries: prom.queries() }
}

/** One scrape a second from `from` ms, the meter and requests given per scrape. */
const timeline = (meter: V[], requests: number[], from = 500): Scrape[] => meter.map((m, i) => ({ dt: from + i * 1000, meter: m, requests: requests[i] ?? requests.at(-1)! }))
const ramp = <T,>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i))

describe('the meter through Prometheus', () => {
  test('a rise after the baseline scrape: green, "rose during this run\'s traffic", two queries per poll', async () => {
    const { j, queries } = await judge({ value: '1', scrapes: timeline([0, 0, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3], [0, 0, 3]) })
    expect(j.verdict).toBe('passed')
    expect((j.evidence.meter as { proof: string }).proof).toBe('rose')
    expect(j.observed).toMatch(/0 → 2 in Prometheus: rose during this run's traffic, moved after 2\.5s; pid 4242 \(read by step argv\) still runs/)
    const p = j.evidence.prometheus as { polls: number; queries: number }
    expect(p.queries).toBe(2 * p.polls)
    expect(queries % 2).toBe(0)
  })

  test('above zero since before the run and flat, in the process argv read: green, "moved before this run"', async () => {
    const { j } = await judge({ value: '1', scrapes: timeline(ramp(12, () => 7), ramp(12, (i) => i)) })
    expect(j.verdict).toBe('passed')
    expect((j.evidence.meter as { proof: string }).proof).toBe('before-run')
  })

  test('flat at zero while requests flowed: red, the arm did nothing', async () => {
    const { j } = await judge({ value: '1', scrapes: timeline(ramp(12, () => 0), ramp(12, (i) => i)) })
    expect(j.verdict).toBe('failed')
    expect(j.observed).toMatch(/stayed at 0 in Prometheus for 10s while \d+ request\(s\) reached the engine/)
    expect(j.next).toMatch(/roll back with PREFILL_INTERLEAVE=/)
  })

  test('flat at zero without traffic: inconclusive, never red', async () => {
    const { j } = await judge({ value: '1', scrapes: timeline(ramp(12, () => 0), [4]) })
    expect(j.verdict).toBe('inconclusive')
    expect(j.observed).toMatch(/no traffic reached the engine/)
  })

  test('a counter that goes down in Prometheus is a reset: red', async () => {
    const { j } = await judge({ value: '1', scrapes: timeline([5, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2], ramp(11, (i) => i)) })
    expect(j.verdict).toBe('failed')
    expect(j.observed).toMatch(/counter reset: Prometheus holds .* going down during the proof \(5 → 1\)/)
  })

  test('absent after two scrapes is not zero: red, and a lookalike under another prefix is named', async () => {
    const scrapes = timeline(ramp(12, () => 'absent' as const), ramp(12, (i) => i)).map((s) => ({ ...s, lookalike: true }))
    const { j } = await judge({ value: '1', scrapes })
    expect(j.verdict).toBe('failed')
    expect(j.observed).toMatch(/radiance:engine_steps_held_total is absent from Prometheus .* after [2-9]\d* successful scrape\(s\).*another prefix: vllm:engine_steps_held_total/)
  })

  test('fewer than two scrapes in the window is never called absent: inconclusive', async () => {
    const { j } = await judge({ value: '1', scrapes: [{ dt: 500, meter: 'absent', requests: 0 }] })
    expect(j.verdict).toBe('inconclusive')
    expect(j.observed).toMatch(/too few to call .* absent/)
  })

  test('NaN in the window: red', async () => {
    const { j } = await judge({ value: '1', scrapes: timeline([0, 0, 'NaN', 3, 3, 3], ramp(6, (i) => i)) })
    expect(j.verdict).toBe('failed')
    expect(j.observed).toMatch(/= NaN/)
  })

  test('a series that went stale during the proof: red (absent is not zero)', async () => {
    const { j } = await judge({ value: '1', scrapes: timeline(ramp(12, () => 0), ramp(12, (i) => i)), staleAfter: 3000 })
    expect(j.verdict).toBe('failed')
    expect(j.observed).toMatch(/went stale in Prometheus during the proof/)
  })

  test('the meter only for another model: red, another model\'s counter is not this engine\'s', async () => {
    const scrapes = timeline(ramp(12, (i) => i), ramp(12, (i) => i)).map((s) => ({ ...s, model: 'other-70b' }))
    const { j } = await judge({ value: '1', scrapes })
    expect(j.verdict).toBe('failed')
    expect(j.observed).toMatch(/only for model_name="other-70b", not for the served model "radiance-ref-8b"/)
  })

  test('a selector that takes two instances: inconclusive, narrow --prometheus-match', async () => {
    const { j } = await judge({ value: '1', scrapes: timeline([0, 0, 3, 3], [0, 0, 3]), secondInstance: true })
    expect(j.verdict).toBe('inconclusive')
    expect(j.next).toMatch(/narrow --prometheus-match/)
  })

  test('Prometheus refuses the query: inconclusive (the operator\'s to fix), never red', async () => {
    const { j } = await judge({ value: '1', scrapes: timeline([0, 3], [0, 3]), refuse: 400 })
    expect(j.verdict).toBe('inconclusive')
    expect(j.observed).toMatch(/Prometheus refused the query \(HTTP 400, bad_data\)/)
  })

  test('a rollback: zero while traffic flows is green; any value above zero is red', async () => {
    const green = await judge({ value: null, scrapes: timeline(ramp(12, () => 0), ramp(12, (i) => i)) })
    expect(green.j.verdict).toBe('passed')
    expect((green.j.evidence.meter as { proof: string }).proof).toBe('stayed-at-zero')
    const red = await judge({ value: null, scrapes: timeline([0, 0, 2, 2], [0, 0, 2]) })
    expect(red.j.verdict).toBe('failed')
    expect(red.j.observed).toMatch(/not 0, although PREFILL_INTERLEAVE is at its default/)
  })
})
