// The meter judge through Prometheus (helpers/steps/meter/from-prometheus.ts) in-process: a fake
// Prometheus HTTP API answering the two requests of each poll (the raw samples, the targets'
// metadata) from a timeline of scrapes, pidof answers and a virtual clock. Each way the meter can fail through Prometheus is shown red or
// inconclusive, the two greens and the rollback green, and exactly two queries per poll.
import { describe, expect, test } from 'vitest'
import { VirtualClock } from '../../support/virtual-clock.ts'
import { loadConfig } from '../../../helpers/config/load.ts'
import type { HostClient } from '../../../helpers/seams/host.ts'
import { engineSeen, fakeProcHost, startedAt } from '../../support/fake-proc.ts'
import type { HttpClient } from '../../../helpers/seams/http.ts'
import { createContext, type RunContext } from '../../../helpers/steps/context.ts'
import { JUDGES, BEFORE_GROUP } from '../../../helpers/steps/judges.ts'
import type { Judgement } from '../../../helpers/steps/verdict.ts'

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
  /** Prometheus lost this scrape: up == 0, no other sample. */
  down?: boolean
}

interface Scenario {
  scrapes: Scrape[]
  value: '1' | null
  /** The meter is missing from the target's scrapes (up == 1) after this dt: it went stale. */
  staleAfter?: number
  /** Another instance's series, also taken by the selector. */
  secondInstance?: boolean
  /** A second target with the same labels (relabelled to one instance): its scrapes land in the same series, half a second later. */
  sameLabelsTwin?: boolean
  /** Every query refused with this HTTP status and Prometheus' error body. */
  refuse?: number
  /** The range query's answer carries these warnings (e.g. a failing remote read: a partial response). */
  warnings?: string[]
  /** The targets' metadata declares the meter's family a counter (default: when the meter has a sample). */
  declared?: boolean
  /** What step health handed on; unset: not handed on. */
  healthy?: boolean
  /** process_start_time_seconds per scrape, as Prometheus holds it; default START (the pid's); null: not exported. */
  processStart?: (sc: Scrape) => number | null
  /** The pid's start (s), when not START. */
  pidStart?: number
  /** Step argv found the pid as the holder of the base URL's listening socket (default: by pidof). */
  listenerTied?: boolean
}

/** The start time of the pid step argv read, and of the engine's process collector unless a case says otherwise. */
const START = 1_796_000_000.25

const fmt = (v: Exclude<V, 'absent'>): string => (typeof v === 'number' ? String(v) : v)

function fakeProm(s: Scenario): { http: HttpClient; queries: () => number } {
  let queries = 0
  const series = (sc: Scrape, instance: string, twin = false): Array<{ metric: Record<string, string>; v: string }> => {
    const base = { instance, job: 'radiance' }
    if (sc.down) return [{ metric: { __name__: 'up', ...base }, v: '0' }]
    const out = [
      { metric: { __name__: 'up', ...base }, v: '1' },
      {
        metric: { __name__: 'vllm:request_success_total', ...base, engine: '0', finished_reason: 'stop', model_name: MODEL },
        v: String(sc.requests),
      },
    ]
    const stale = s.staleAfter !== undefined && sc.dt > s.staleAfter
    if (sc.meter !== 'absent' && !stale)
      out.push({ metric: { __name__: METER, ...base, engine: '0', model_name: sc.model ?? MODEL }, v: fmt(twin ? 500 : sc.meter) })
    if (sc.lookalike) out.push({ metric: { __name__: 'vllm:engine_steps_held_total', ...base, engine: '0', model_name: MODEL }, v: '5' })
    const start = twin ? START - 40 : s.processStart ? s.processStart(sc) : START
    if (start !== null) out.push({ metric: { __name__: 'process_start_time_seconds', ...base }, v: String(start) })
    return out
  }
  const targets = (): Array<{ instance: string; twin: boolean }> => [
    { instance: INSTANCE, twin: false },
    ...(s.secondInstance ? [{ instance: 'gpu-8.test:8000', twin: false }] : []),
    ...(s.sameLabelsTwin ? [{ instance: INSTANCE, twin: true }] : []),
  ]
  const http: HttpClient = {
    async request(req) {
      queries++
      const u = new URL(req.url)
      const reply = (status: number, body: unknown) => ({
        status,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        url: req.url,
        redirects: [],
        durationMs: 1,
      })
      if (s.refuse) return reply(s.refuse, { status: 'error', errorType: 'bad_data', error: 'parse error: unexpected character' })
      if (u.pathname === '/api/v1/targets') {
        expect(u.searchParams.get('state')).toBe('active')
        const activeTargets = targets().map((t) => ({
          labels: { instance: t.instance, job: 'radiance' },
          scrapeUrl: `http://${t.instance}/metrics`,
        }))
        return reply(200, { status: 'success', data: { activeTargets, droppedTargets: [] } })
      }
      if (u.pathname === '/api/v1/targets/metadata') {
        expect(u.searchParams.get('match_target')).toBe(`{instance="${INSTANCE}"}`)
        const declared = s.declared ?? s.scrapes.some((sc) => sc.meter !== 'absent')
        const data = targets()
          .filter((t) => t.instance === INSTANCE)
          .flatMap((t) => [
            ...(declared
              ? [{ target: { instance: t.instance, job: 'radiance' }, metric: METER, type: 'counter', help: '', unit: '' }]
              : []),
            {
              target: { instance: t.instance, job: 'radiance' },
              metric: 'vllm:request_success_total',
              type: 'counter',
              help: '',
              unit: '',
            },
          ])
        return reply(200, { status: 'success', data })
      }
      expect(`${u.origin}${u.pathname}`).toBe(`${PROM}/api/v1/query`)
      const query = u.searchParams.get('query')!
      expect(query).toContain(`instance="${INSTANCE}"`)
      const at = Math.round(Number(u.searchParams.get('time')) * 1000)
      const range = /\[(\d+)s\]$/.exec(query)
      expect(range, 'an instant query sees only what lies within the lookback delta: never asked').not.toBeNull()
      const keyed = new Map<string, { metric: Record<string, string>; values: Array<[number, string]> }>()
      for (const sc of s.scrapes.filter((x) => T0 + x.dt <= at)) {
        for (const t of targets()) {
          const when = T0 + sc.dt + (t.twin ? 500 : 0)
          if (when > at) continue
          for (const x of series(sc, t.instance, t.twin)) {
            const key = JSON.stringify(x.metric)
            if (!keyed.has(key)) keyed.set(key, { metric: x.metric, values: [] })
            keyed.get(key)!.values.push([when / 1000, x.v])
          }
        }
      }
      const from = at - Number(range![1]) * 1000
      const result = [...keyed.values()]
        .map((k) => ({ metric: k.metric, values: k.values.filter(([t]) => t * 1000 > from).sort(([a], [b]) => a - b) }))
        .filter((k) => k.values.length > 0)
      return reply(200, { status: 'success', data: { resultType: 'matrix', result }, ...(s.warnings ? { warnings: s.warnings } : {}) })
    },
  }
  return { http, queries: () => queries }
}

async function judge(s: Scenario): Promise<{ j: Judgement<'meter'>; queries: number }> {
  const argv = [
    '--svc',
    'llm-7',
    '--knob',
    'PREFILL_INTERLEAVE',
    '--base-url',
    BASE,
    '--meter-window',
    '10s',
    '--host',
    'local',
    '--model',
    MODEL,
    '--prometheus-url',
    PROM,
  ]
  if (s.value !== null) argv.push('--value', s.value)
  const config = loadConfig({ argv, env: {} })
  if (!config.ok) throw new Error(JSON.stringify(config.problems))
  const prom = fakeProm(s)
  // The engine lookup of step argv, run again after the watch: one process named radiance, pid PID, started at START.
  const { btime, startTicks } = startedAt(s.pidStart ?? START)
  const host: HostClient = fakeProcHost({ procs: [{ pid: PID, name: 'radiance', startTicks }], btime })
  const ctx: RunContext = createContext({
    target: config.target,
    http: prom.http,
    host,
    clock: new VirtualClock(T0),
    choices: { pick: (_n, o) => o[0]! },
  })
  const health = s.healthy !== undefined ? { healthy: s.healthy } : {}
  const given = await BEFORE_GROUP.behaviour!(ctx, health)
  const j = await JUDGES.meter(ctx, {
    ...given,
    ...health,
    engineProcess: engineSeen(PID, true, {
      startTimeSeconds: s.pidStart ?? START,
      ...(s.listenerTied ? { listenerTied: true, foundBy: 'listener' as const } : {}),
    }),
  })
  return { j, queries: prom.queries() }
}

/** One scrape a second from `from` ms, the meter and requests given per scrape. */
const timeline = (meter: V[], requests: number[], from = 500): Scrape[] =>
  meter.map((m, i) => ({ dt: from + i * 1000, meter: m, requests: requests[i] ?? requests.at(-1)! }))
const ramp = <T>(n: number, f: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => f(i))

describe('the meter through Prometheus', () => {
  test('a rise after the baseline scrape: green, "rose during this run\'s traffic", two queries per poll', async () => {
    const { j, queries } = await judge({ value: '1', scrapes: timeline([0, 0, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3], [0, 0, 3]) })
    expect(j.verdict).toBe('passed')
    expect((j.evidence.meter as { proof: string }).proof).toBe('rose')
    expect(j.observed).toMatch(
      /0 → 2 in Prometheus: rose during this run's traffic, moved after 2\.5s; pid 4242 \(read by step argv\) still runs/,
    )
    const p = j.evidence.prometheus as { polls: number; queries: number }
    expect(p.queries).toBe(2 * p.polls)
    expect(queries % 2).toBe(0)
  })

  test('above zero since before the run and flat, in the process argv read: green, "moved before this run"', async () => {
    const { j } = await judge({
      value: '1',
      scrapes: timeline(
        ramp(12, () => 7),
        ramp(12, (i) => i),
      ),
    })
    expect(j.verdict).toBe('passed')
    expect((j.evidence.meter as { proof: string }).proof).toBe('before-run')
  })

  test('flat at zero while requests flowed: red, the arm did nothing', async () => {
    const { j } = await judge({
      value: '1',
      scrapes: timeline(
        ramp(12, () => 0),
        ramp(12, (i) => i),
      ),
    })
    expect(j.verdict).toBe('failed')
    expect(j.observed).toMatch(/stayed at 0 in Prometheus for 10s while \d+ request\(s\) reached the engine/)
    expect(j.next).toMatch(/roll back with PREFILL_INTERLEAVE=/)
  })

  test('flat at zero without traffic: inconclusive, never red', async () => {
    const { j } = await judge({
      value: '1',
      scrapes: timeline(
        ramp(12, () => 0),
        [4],
      ),
    })
    expect(j.verdict).toBe('inconclusive')
    expect(j.observed).toMatch(/no traffic reached the engine/)
  })

  test('a counter that goes down in Prometheus is a reset: red', async () => {
    const { j } = await judge({
      value: '1',
      scrapes: timeline(
        [5, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2],
        ramp(11, (i) => i),
      ),
    })
    expect(j.verdict).toBe('failed')
    expect(j.observed).toMatch(/counter reset: Prometheus holds .* going down during the proof \(5 → 1\)/)
  })

  test('absent after two scrapes is not zero: red, and a lookalike under another prefix is named', async () => {
    const scrapes = timeline(
      ramp(12, () => 'absent' as const),
      ramp(12, (i) => i),
    ).map((s) => ({ ...s, lookalike: true }))
    const { j } = await judge({ value: '1', scrapes })
    expect(j.verdict).toBe('failed')
    expect(j.observed).toMatch(
      /radiance:engine_steps_held_total is absent from Prometheus .* after [2-9]\d* successful scrape\(s\).*another prefix: vllm:engine_steps_held_total/,
    )
  })

  test('fewer than two scrapes in the window is never called absent: inconclusive', async () => {
    const { j } = await judge({ value: '1', scrapes: [{ dt: 500, meter: 'absent', requests: 0 }] })
    expect(j.verdict).toBe('inconclusive')
    expect(j.observed).toMatch(/too few to call .* absent/)
  })

  test('NaN in the window: red', async () => {
    const { j } = await judge({
      value: '1',
      scrapes: timeline(
        [0, 0, 'NaN', 3, 3, 3],
        ramp(6, (i) => i),
      ),
    })
    expect(j.verdict).toBe('failed')
    expect(j.observed).toMatch(/= NaN/)
  })

  // The fake went stale on the instant query only, before issue 21: now the raw samples lack the meter while up == 1.
  test('a series that went stale during the proof: red (absent is not zero)', async () => {
    const { j } = await judge({
      value: '1',
      scrapes: timeline(
        ramp(12, () => 0),
        ramp(12, (i) => i),
      ),
      staleAfter: 3000,
    })
    expect(j.verdict).toBe('failed')
    expect(j.observed).toMatch(/went stale in Prometheus during the proof/)
  })

  test("the meter only for another model: red, another model's counter is not this engine's", async () => {
    const scrapes = timeline(
      ramp(12, (i) => i),
      ramp(12, (i) => i),
    ).map((s) => ({ ...s, model: 'other-70b' }))
    const { j } = await judge({ value: '1', scrapes })
    expect(j.verdict).toBe('failed')
    expect(j.observed).toMatch(/only for model_name="other-70b", not for the served model "radiance-ref-8b"/)
  })

  test('a selector that takes two instances: inconclusive, narrow --prometheus-match', async () => {
    const { j } = await judge({ value: '1', scrapes: timeline([0, 0, 3, 3], [0, 0, 3]), secondInstance: true })
    expect(j.verdict).toBe('inconclusive')
    expect(j.next).toMatch(/narrow --prometheus-match/)
  })

  test("two targets relabelled to one label set are two targets (one up series, the targets' metadata lists both): inconclusive, never one replica's counter for the other's pid", async () => {
    const { j } = await judge({ value: '1', scrapes: timeline([0, 0, 0, 0], [0, 1, 2, 3]), sameLabelsTwin: true })
    expect(j.verdict).toBe('inconclusive')
    expect(j.observed).toMatch(
      /takes the series of 2 targets \(\{instance="gpu-7\.test:8000",job="radiance"\}, \{instance="gpu-7\.test:8000",job="radiance"\}\)/,
    )
    expect(j.next).toMatch(/narrow --prometheus-match/)
  })

  test('up == 0 mid-window (Prometheus lost scrapes while the pid kept serving): not observed, never red; the rise after the gap is green', async () => {
    const scrapes = timeline(
      [0, 0, 0, 0, 3, 3, 3, 3, 3, 3],
      ramp(10, (i) => i),
    ).map((sc, i) => (i === 2 || i === 3 ? { ...sc, down: true } : sc))
    const { j } = await judge({ value: '1', scrapes })
    expect(j.verdict).toBe('passed')
    expect(j.observed).toMatch(/0 → 3 in Prometheus: rose during this run's traffic/)
  })

  test('up == 0 for the rest of the window after the first scrape: inconclusive, saying the scrapes failed, never red', async () => {
    const scrapes = timeline(
      ramp(12, () => 0),
      ramp(12, (i) => i),
    ).map((sc, i) => (i > 0 ? { ...sc, down: true } : sc))
    const { j } = await judge({ value: '1', scrapes })
    expect(j.verdict).toBe('inconclusive')
    expect(j.observed).toMatch(
      /fewer than two scrapes fell inside the window in 10s; \d+ scrape\(s\) of the target in the window failed \(up == 0\): not observed/,
    )
  })

  test('an answer with warnings (a partial response) lacking the meter proves no absence: inconclusive, never red', async () => {
    const warnings = ['remote_read: error sending request: dial tcp 10.0.0.9:9201: connect: connection refused']
    const { j } = await judge({
      value: '1',
      scrapes: timeline(
        ramp(12, () => 'absent' as const),
        ramp(12, (i) => i),
      ),
      warnings,
    })
    expect(j.verdict).toBe('inconclusive')
    expect(j.observed).toMatch(
      /^Prometheus answered with warnings \(remote_read: error sending request.*\): an answer that may lack series proves no absence/,
    )
    const flat = await judge({
      value: '1',
      scrapes: timeline(
        ramp(12, () => 0),
        ramp(12, (i) => i),
      ),
      warnings,
    })
    expect(flat.j.verdict).toBe('inconclusive')
    const rollback = await judge({
      value: null,
      scrapes: timeline(
        ramp(12, () => 0),
        ramp(12, (i) => i),
      ),
      warnings,
    })
    expect(rollback.j.verdict).toBe('inconclusive')
  })

  test('an answer with warnings that shows a rise: what it shows is judged, green', async () => {
    const { j } = await judge({ value: '1', scrapes: timeline([0, 0, 2, 3], [0, 0, 3]), warnings: ['partial response'] })
    expect(j.verdict).toBe('passed')
  })

  test("a family the targets' metadata declares a counter with no sample yet (a lazy labelled counter) is zero so far: the rollback green, the arm red, never absent", async () => {
    const none = timeline(
      ramp(12, () => 'absent' as const),
      ramp(12, (i) => i),
    )
    const rollback = await judge({ value: null, scrapes: none, declared: true })
    expect(rollback.j.verdict).toBe('passed')
    expect(rollback.j.observed).toContain('carries no sample yet: zero so far')
    const arm = await judge({ value: '1', scrapes: none, declared: true })
    expect(arm.j.verdict).toBe('failed')
    expect(arm.j.observed).toMatch(/stayed at 0 in Prometheus for 10s while \d+ request\(s\) reached the engine/)
    const rises = await judge({ value: '1', scrapes: timeline(['absent', 'absent', 4, 4], [0, 1, 2, 3]), declared: true })
    expect(rises.j.verdict).toBe('passed')
    expect(rises.j.observed).toMatch(/0 → 4 in Prometheus: rose/)
  })

  test("Prometheus refuses the query: inconclusive (the operator's to fix), never red", async () => {
    const { j } = await judge({ value: '1', scrapes: timeline([0, 3], [0, 3]), refuse: 400 })
    expect(j.verdict).toBe('inconclusive')
    expect(j.observed).toMatch(/Prometheus refused the query \(HTTP 400, bad_data\)/)
  })

  test("the series' process_start_time_seconds is not the pid's: two engines, inconclusive, never the other's counter", async () => {
    const { j } = await judge({ value: '1', scrapes: timeline([0, 0, 2, 3], [0, 0, 3]), processStart: () => START - 120 })
    expect(j.verdict).toBe('inconclusive')
    expect(j.observed).toMatch(
      /^the endpoint is served by a process started at .* \(process_start_time_seconds 1795999880\.25 at the scrape at 2026-11-30T02:00:00\.500Z\), the pid argv read \(4242\) started at .*: this run is about two engines/,
    )
  })

  test('a series set without process_start_time_seconds, the pid found by pidof: the series birth cannot tie it (another process may have started in the same window), inconclusive', async () => {
    const { j } = await judge({ value: '1', scrapes: timeline([0, 0, 2, 3], [0, 0, 3]), processStart: () => null })
    expect(j.verdict).toBe('inconclusive')
    expect(j.observed).toContain('carries no process_start_time_seconds')
    expect(j.observed).toMatch(
      /the series' birth does not tie it: pid 4242 was found by pidof --process, not as the holder of the base URL's listening socket/,
    )
  })

  test('a series set without process_start_time_seconds whose first scrape already succeeded: its birth is not observed, nothing ties it to the pid, inconclusive', async () => {
    const { j, queries } = await judge({
      value: '1',
      scrapes: timeline([0, 0, 2, 3], [0, 0, 3]),
      processStart: () => null,
      listenerTied: true,
    })
    expect(j.verdict).toBe('inconclusive')
    expect(j.observed).toMatch(
      /the series' birth does not tie it: Prometheus' first scrape of the target since .* already successful, not before pid 4242 started/,
    )
    expect(j.next).toMatch(/^let Prometheus keep the target's series across the restart/)
    const p = j.evidence.prometheus as { polls: number; queries: number; tie: { tied: boolean; queries: number } }
    // The tie's two reads (the history, the active targets), again at each poll while fewer than two scrapes are held, beside the polls' two each.
    expect(p.tie.tied).toBe(false)
    expect(p.tie.queries % 2).toBe(0)
    expect(p.tie.queries).toBeGreaterThanOrEqual(2)
    expect(queries).toBe(2 * (p.polls + 1) + p.tie.queries)
  })

  test('a series set without process_start_time_seconds born after the pid started (every scrape failed before): tied by its birth, green, the resolution said', async () => {
    const down = Array.from({ length: 6 }, (_, i) => ({ dt: -5500 + i * 1000, meter: 'absent' as const, requests: 0, down: true }))
    const { j } = await judge({
      value: '1',
      scrapes: [...down, ...timeline([0, 0, 2, 3, 3, 3], [0, 0, 3])],
      processStart: () => null,
      listenerTied: true,
      pidStart: (T0 - 3000) / 1000,
    })
    expect(j.verdict).toBe('passed')
    expect(j.observed).toMatch(/tied by the series' birth \(no process_start_time_seconds\): http:\/\/gpu-7\.test:8000\/metrics/)
    expect(j.observed).toContain('resolution one scrape interval, 1000 ms')
    const tie = (j.evidence.prometheus as { tie: { tied: boolean; evidence: { intervalMs: number; broke: string } } }).tie
    expect(tie).toMatchObject({ tied: true, evidence: { intervalMs: 1000, broke: 'failed-scrapes', lastBefore: null } })
  })

  test('/health never answered 200: no baseline wait and no query, inconclusive at once', async () => {
    const { j, queries } = await judge({ value: '1', healthy: false, scrapes: timeline([0, 0, 2, 3], [0, 0, 3]) })
    expect(j.verdict).toBe('inconclusive')
    expect(j.observed).toMatch(/^not watched: \/health never answered 200/)
    expect(j.where).toBe(`Prometheus ${PROM}`)
    expect(queries).toBe(0)
  })

  test('a rollback: zero while traffic flows is green; any value above zero is red', async () => {
    const green = await judge({
      value: null,
      scrapes: timeline(
        ramp(12, () => 0),
        ramp(12, (i) => i),
      ),
    })
    expect(green.j.verdict).toBe('passed')
    expect((green.j.evidence.meter as { proof: string }).proof).toBe('stayed-at-zero')
    const red = await judge({ value: null, scrapes: timeline([0, 0, 2, 2], [0, 0, 2]) })
    expect(red.j.verdict).toBe('failed')
    expect(red.j.observed).toMatch(/not 0, although PREFILL_INTERLEAVE is at its default/)
  })
})
