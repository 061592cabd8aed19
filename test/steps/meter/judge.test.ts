// The meter judge in-process (helpers/steps/meter/judge.ts), behind fake seams: /metrics pages served
// in sequence, pidof answers, a virtual clock. First the cases one by one, then a property test:
// random scrape sequences (resets, foreign series, non-finite values, duplicates, malformed
// lines, flat, rising, absent, restarts) are never green unless rule 3 of issue 10 holds over
// the scrapes the judge read: the served series rose during the run, or it was above zero at the
// first scrape of the very process argv read. Seeded, so a failure names its case.
import { describe, expect, test } from 'vitest'
import { VirtualClock } from '../../support/virtual-clock.ts'
import { loadConfig, type Target } from '../../../helpers/config/load.ts'
import type { HostClient, HostResult } from '../../../helpers/seams/host.ts'
import { HttpError, type HttpClient } from '../../../helpers/seams/http.ts'
import { createContext, type EngineProcess, type RunContext } from '../../../helpers/steps/context.ts'
import { checkMeter, takeBaseline } from '../../../helpers/steps/meter/judge.ts'
import type { Judgement } from '../../../helpers/steps/verdict.ts'
import { prng } from '../../support/prng.ts'
import { engineSeen, fakeProcHost, startedAt } from '../../support/fake-proc.ts'

const METER = 'radiance:engine_steps_held_total'
const SERVED = 'radiance-ref-8b'
const OTHER = 'radiance-other-70b'
const BASE = 'http://engine.test:8000'
const PID = '4242'

type Value = number | 'NaN' | '+Inf' | '-Inf' | 'absent'

/** One scrape's page, as data. */
interface Page {
  /** Served series by engine label ('0', '1'); 'absent' leaves the line out. */
  served: Record<string, Value>
  /** Another model's series (engine "9"), or none. */
  foreign?: number
  /** No model_name label on any meter series. */
  noModelLabel?: boolean
  type: 'counter' | 'gauge' | 'untyped' | 'none'
  /** Engine label whose line is written twice. */
  duplicate?: string
  malformed?: boolean
  requests: number
  processStart?: number
}

function fmt(v: Exclude<Value, 'absent'>): string {
  return typeof v === 'number' ? (Number.isInteger(v) ? `${v}.0` : String(v)) : v
}

function render(p: Page): string {
  const lines: string[] = [
    '# HELP vllm:request_success_total Count of successfully processed requests.',
    '# TYPE vllm:request_success_total counter',
  ]
  lines.push(`vllm:request_success_total{engine="0",finished_reason="stop",model_name="${SERVED}"} ${fmt(p.requests)}`)
  if (p.malformed) lines.push('radiance:engine_steps_held_total{engine="0" 7 garbage }}')
  if (p.type !== 'none') lines.push(`# TYPE ${METER} ${p.type}`)
  const model = (m: string) => (p.noModelLabel ? '' : `,model_name="${m}"`)
  for (const [engine, v] of Object.entries(p.served)) {
    if (v === 'absent') continue
    const line = `${METER}{engine="${engine}"${model(SERVED)}} ${fmt(v)}`
    lines.push(line)
    if (p.duplicate === engine) lines.push(line)
  }
  if (p.foreign !== undefined) lines.push(`${METER}{engine="9"${model(OTHER)}} ${fmt(p.foreign)}`)
  if (p.processStart !== undefined) lines.push('# TYPE process_start_time_seconds gauge', `process_start_time_seconds ${p.processStart}`)
  return `${lines.join('\n')}\n`
}

interface Scenario {
  /** The pages in scrape order; the last one repeats once they run out. */
  pages: Page[]
  /** Scrapes refused (connection refused) before the pages are served. */
  refusedFirst?: number
  value: '1' | null
  /** What step argv left behind (the rest of engineProcess: tied by the listener, start time unread). */
  argv?: { pid: string; argvHeld: boolean } & Partial<EngineProcess>
  /** What pidof says after the watch: a pid list, or a host failure. */
  pidofNow: string[] | 'unreachable'
  model: string | null
  baseline: boolean
  /** What step health handed on; unset: not handed on. */
  healthy?: boolean
}

function target(value: '1' | null, model: string | null): Target {
  const argv = ['--svc', 'demo', '--knob', 'PREFILL_INTERLEAVE', '--base-url', BASE, '--meter-window', '10s', '--host', 'local']
  if (value !== null) argv.push('--value', value)
  if (model !== null) argv.push('--model', model)
  const r = loadConfig({ argv, env: {} })
  if (!r.ok) throw new Error(JSON.stringify(r.problems))
  return r.target
}

interface Run {
  judgement: Judgement<'meter'>
  scrapes: number
  pidofCalls: number
}

async function judge(s: Scenario): Promise<Run> {
  let served = 0
  let refused = 0
  let pidofCalls = 0
  const http: HttpClient = {
    async request(req) {
      expect(req.url).toBe(`${BASE}/metrics`)
      if (refused < (s.refusedFirst ?? 0)) {
        refused++
        throw new HttpError('refused', req.url, 'ECONNREFUSED')
      }
      const page = s.pages[Math.min(served++, s.pages.length - 1)]!
      return {
        status: 200,
        headers: { 'content-type': 'text/plain; version=0.0.4' },
        body: render(page),
        url: req.url,
        redirects: [],
        durationMs: 1,
      }
    },
  }
  // The engine lookup of step argv, run again after the watch (helpers/engine/recheck.ts): what pidof finds now, no listener.
  // The pid argv read, where it still runs, started when argv saw it start.
  const seen = s.argv?.startTimeSeconds != null ? startedAt(s.argv.startTimeSeconds) : undefined
  const fake = fakeProcHost(() =>
    s.pidofNow === 'unreachable'
      ? { procs: [], failure: 'unreachable' }
      : {
          procs: s.pidofNow.map((pid) => ({
            pid,
            name: 'radiance',
            ...(seen && pid === s.argv?.pid ? { startTicks: seen.startTicks } : {}),
          })),
          ...(seen ? { btime: seen.btime } : {}),
        },
  )
  const host: HostClient = {
    where: 'local',
    async run(req): Promise<HostResult> {
      if (req.script.includes('pidof radiance')) pidofCalls++
      return fake.run(req)
    },
  }
  const ctx: RunContext = createContext({
    target: target(s.value, s.model),
    http,
    host,
    clock: new VirtualClock(Date.UTC(2026, 10, 30, 2, 0, 0)),
    choices: { pick: (_n, o) => o[0]! },
  })
  const baseline = s.baseline ? await takeBaseline(ctx) : {}
  // Unless a scenario says otherwise: the pid holds the base URL's listening socket, its start time unread.
  const engineProcess = (a: NonNullable<Scenario['argv']>): EngineProcess =>
    engineSeen(a.pid, a.argvHeld, { foundBy: 'listener', listenerTied: true, ...a })
  const judgement = await checkMeter(ctx, {
    ...(s.argv ? { engineProcess: engineProcess(s.argv) } : {}),
    ...baseline,
    ...(s.healthy !== undefined ? { healthy: s.healthy } : {}),
  })
  return { judgement, scrapes: served, pidofCalls }
}

const page = (served: Record<string, Value>, extra: Partial<Page> = {}): Page => ({ served, type: 'counter', requests: 0, ...extra })
const rising = (values: number[], extra: Partial<Page> = {}): Page[] => values.map((v, i) => page({ '0': v }, { requests: i, ...extra }))
const healthy: Omit<Scenario, 'pages'> = { value: '1', argv: { pid: PID, argvHeld: true }, pidofNow: [PID], model: SERVED, baseline: true }

describe('the meter judge, case by case', () => {
  test('a rise of the served series during the run is green, said as such, with the process still the one argv read', async () => {
    const r = await judge({ ...healthy, pages: rising([0, 0, 3]) })
    expect(r.judgement.verdict).toBe('passed')
    expect(r.judgement.observed).toContain(`${METER}{engine="0",model_name="${SERVED}"} 0 → 3: rose during this run's traffic`)
    expect(r.judgement.observed).toContain(`pid ${PID} (read by step argv) still runs, alone`)
    expect(r.judgement.evidence.meter).toMatchObject({
      proof: 'rose',
      first: 0,
      last: 3,
      model: SERVED,
      series: `${METER}{engine="0",model_name="${SERVED}"}`,
    })
    expect(r.pidofCalls).toBe(1)
  })

  test('above zero at the first scrape and flat, in the very process argv read: green, "moved before this run"', async () => {
    const r = await judge({ ...healthy, pages: rising([7, 7, 7]) })
    expect(r.judgement.verdict).toBe('passed')
    expect(r.judgement.observed).toContain(`was already 7 at the first scrape of pid ${PID}`)
    expect(r.judgement.observed).toContain('it moved before this run')
    expect(r.judgement.evidence.meter).toMatchObject({ proof: 'before-run', movedAt: null, movedAfterMs: null })
  })

  test.each([
    // The scenario's engine was found by its listener: the re-check's lookup says how it finds the engine now (helpers/engine/recheck.ts).
    [
      'another pid runs now',
      { pidofNow: ['5151'] },
      'failed',
      `step argv read pid ${PID}; now pid 5151 is the only process pidof radiance finds`,
    ],
    ['no process runs now', { pidofNow: [] }, 'failed', 'pidof radiance found no process'],
    ['pidof cannot run again', { pidofNow: 'unreachable' }, 'inconclusive', 'could not be looked up again'],
    ['argv read no single process', { argv: undefined }, 'inconclusive', 'step argv read no single engine process'],
    [
      'argv read the process but it lacked the flag',
      { argv: { pid: PID, argvHeld: false } },
      'inconclusive',
      `step argv did not hold for pid ${PID}`,
    ],
  ] as const)(
    'above zero before the run is not green when the process cannot be proven the same: %s',
    async (_what, change, verdict, text) => {
      const r = await judge({ ...healthy, ...change, pages: rising([7, 7, 7]) } as Scenario)
      expect(r.judgement.verdict).toBe(verdict)
      expect(r.judgement.observed).toContain(text)
      expect(r.judgement.next).toBeTruthy()
    },
  )

  test('a rise while pidof finds another process is red: the engine restarted', async () => {
    const r = await judge({ ...healthy, pidofNow: ['5151'], pages: rising([0, 2]) })
    expect(r.judgement.verdict).toBe('failed')
    expect(r.judgement.observed).toContain(
      'the engine restarted during the proof: step argv read pid 4242; now pid 5151 is the only process pidof radiance finds',
    )
  })

  test('a counter that goes down is a reset: red, naming both readings and the pid', async () => {
    const r = await judge({ ...healthy, pidofNow: ['5151'], pages: rising([1000, 3, 9]) })
    expect(r.judgement.verdict).toBe('failed')
    expect(r.judgement.observed).toContain(
      `counter reset: ${METER}{engine="0",model_name="${SERVED}"} read 1000 at scrape 1, then 3 at scrape 2`,
    )
    expect(r.judgement.observed).toContain(
      '(step argv read pid 4242; now pid 5151 is the only process pidof radiance finds; no process here listens on port 8000)',
    )
    const same = await judge({ ...healthy, pages: rising([1000, 3, 9]) })
    expect(same.judgement.observed).toContain(`pid ${PID} (read by step argv) still runs, alone: the engine core restarted inside it`)
  })

  test('process_start_time_seconds that changes between scrapes is a restart, even while the counter rises', async () => {
    const pages = [page({ '0': 1 }, { processStart: 1.7e9 }), page({ '0': 5 }, { processStart: 1.7e9 + 60 })]
    const r = await judge({ ...healthy, pages })
    expect(r.judgement.verdict).toBe('failed')
    expect(r.judgement.observed).toContain('process_start_time_seconds went from 1700000000 to 1700000060 between scrape 1 and scrape 2')
  })

  test("another model's series that moves is never summed in: the served model's flat series is judged, and the other is named", async () => {
    const pages = [0, 1, 2, 3].map((i) => page({ '0': 0 }, { foreign: i * 5, requests: i }))
    const r = await judge({ ...healthy, pages })
    expect(r.judgement.verdict).toBe('failed')
    expect(r.judgement.observed).toContain(`not judged: ${METER}{engine="9",model_name="${OTHER}"}`)
    expect(r.judgement.evidence.meter).toMatchObject({ notJudged: [`${METER}{engine="9",model_name="${OTHER}"}`], last: 0 })
  })

  test('a page with the meter only for another model: red, absent for the served one', async () => {
    const r = await judge({ ...healthy, pages: [page({ '0': 'absent' }, { foreign: 4 })] })
    expect(r.judgement.verdict).toBe('failed')
    expect(r.judgement.observed).toBe(
      `${METER} has no series for the served model "${SERVED}"; the page has it only for model_name="${OTHER}"`,
    )
  })

  test('two models and the served one unknown: inconclusive, it asks for --model', async () => {
    const r = await judge({ ...healthy, model: null, pages: rising([0, 3], { foreign: 1 }) })
    expect(r.judgement.verdict).toBe('inconclusive')
    expect(r.judgement.next).toContain('pass --model')
  })

  test('several engines serving the model: each is judged and reported; one that rose proves the arm', async () => {
    const pages = [page({ '0': 0, '1': 0 }), page({ '0': 0, '1': 4 }, { requests: 2 })]
    const r = await judge({ ...healthy, pages })
    expect(r.judgement.verdict).toBe('passed')
    expect(r.judgement.observed).toContain(`${METER}{engine="1",model_name="${SERVED}"} 0 → 4`)
    expect(r.judgement.observed).toContain(`judged the served model's 2 series (model_name="${SERVED}")`)
    expect((r.judgement.evidence.meter as { judged: unknown[] }).judged).toEqual([
      { series: `${METER}{engine="0",model_name="${SERVED}"}`, first: 0, last: 0, fromScrape: 1 },
      { series: `${METER}{engine="1",model_name="${SERVED}"}`, first: 0, last: 4, fromScrape: 1 },
    ])
  })

  test('a page without model_name: a green names the one series it judged and says the page named no model', async () => {
    const r = await judge({ ...healthy, pages: rising([0, 2], { noModelLabel: true }) })
    expect(r.judgement.verdict).toBe('passed')
    expect(r.judgement.observed).toContain(`${METER}{engine="0"} 0 → 2: rose during this run's traffic`)
    expect(r.judgement.observed).toContain(`the page names no model_name on ${METER}: judged its one series (${METER}{engine="0"})`)
  })

  test('a page without model_name: every series is judged apart, and the observed text says so', async () => {
    const pages = [0, 1, 2].map((i) => page({ '0': 0 }, { foreign: 0, noModelLabel: true, requests: i }))
    const r = await judge({ ...healthy, pages })
    expect(r.judgement.verdict).toBe('failed')
    expect(r.judgement.observed).toContain(`the page names no model_name on ${METER}: judged each of its 2 series`)
  })

  test.each([
    ['+Inf', '= +Inf'],
    ['-Inf', '= -Inf'],
    ['NaN', '= NaN'],
    [-1, '= -1'],
  ] as const)('the meter reading %s is red', async (v, text) => {
    const r = await judge({ ...healthy, pages: [page({ '0': v as Value })] })
    expect(r.judgement.verdict).toBe('failed')
    expect(r.judgement.observed).toContain(text)
  })

  test('the same series twice in one page is a malformed page: red', async () => {
    const r = await judge({ ...healthy, pages: rising([0, 3], { duplicate: '0' }) })
    expect(r.judgement.verdict).toBe('failed')
    expect(r.judgement.observed).toBe(
      `malformed page: the same series appears twice: ${METER}{engine="0",model_name="${SERVED}"} (lines 5 and 6)`,
    )
  })

  test('a page Prometheus would refuse whole is red, naming the line, even while the meter rises', async () => {
    const r = await judge({ ...healthy, pages: rising([0, 3], { malformed: true }) })
    expect(r.judgement.verdict).toBe('failed')
    expect(r.judgement.observed).toMatch(
      /^the Prometheus server would refuse this \/metrics page whole: line 4 does not parse \(.+\): "radiance:engine_steps_held_total\{engine=\\"0\\" 7 garbage \}\}"$/,
    )
    expect(r.judgement.next).toContain("sed -n '4p'")
  })

  test.each([
    ['gauge', 'failed'],
    ['untyped', 'passed'],
    ['none', 'passed'],
  ] as const)('declared # TYPE %s: %s (a counter, or untyped with _total)', async (type, verdict) => {
    const r = await judge({ ...healthy, pages: rising([0, 3], { type }) })
    expect(r.judgement.verdict).toBe(verdict)
  })

  test('a series that vanishes mid-run is red: absent is not zero', async () => {
    const pages = [page({ '0': 0, '1': 0 }), page({ '0': 0 }, { requests: 3 })]
    const r = await judge({ ...healthy, pages })
    expect(r.judgement.verdict).toBe('failed')
    expect(r.judgement.observed).toContain(`${METER}{engine="1",model_name="${SERVED}"} vanished from the page at scrape 2`)
  })

  test('/metrics refusing connections at first is waited out; refusing for the whole window is inconclusive, never green', async () => {
    const late = await judge({ ...healthy, baseline: false, refusedFirst: 3, pages: rising([0, 4]) })
    expect(late.judgement.verdict).toBe('passed')
    expect(late.judgement.evidence).toMatchObject({ scrapeFailures: 3, scrapes: 2 })
    const never = await judge({ ...healthy, baseline: false, refusedFirst: 1_000, pages: rising([5]) })
    expect(never.judgement.verdict).toBe('inconclusive')
    expect(never.judgement.observed).toMatch(/^no \/metrics page could be read in 10s \(\d+ tries\): connection refused/)
  })

  describe('a counter family declared with no sample yet is zero so far, not absent (issue 20 rule 5)', () => {
    const none = (extra: Partial<Page> = {}) => page({ '0': 'absent' }, extra)
    test('declared, then its first child appears: a rise from zero, green', async () => {
      const r = await judge({ ...healthy, pages: [none(), none({ requests: 1 }), page({ '0': 3 }, { requests: 2 })] })
      expect(r.judgement.verdict).toBe('passed')
      expect(r.judgement.observed).toContain(`${METER}{engine="0",model_name="${SERVED}"} 0 → 3: rose during this run's traffic`)
      expect(r.judgement.evidence.meter).toMatchObject({ proof: 'rose', first: 0, last: 3 })
    })
    test('declared and never a child at the default while traffic flows: the rollback stayed at zero, green', async () => {
      const r = await judge({ ...healthy, value: null, pages: [none(), none({ requests: 1 }), none({ requests: 2 })] })
      expect(r.judgement.verdict).toBe('passed')
      expect(r.judgement.observed).toContain('carries no sample yet: zero so far')
      expect(r.judgement.evidence.meter).toMatchObject({ proof: 'stayed-at-zero', first: 0, last: 0 })
    })
    test('declared and never a child while the armed engine serves traffic: the arm did nothing, red', async () => {
      const r = await judge({ ...healthy, pages: [none(), none({ requests: 1 }), none({ requests: 2 })] })
      expect(r.judgement.verdict).toBe('failed')
      expect(r.judgement.observed).toMatch(
        /stayed at 0 for 10s while 2 request\(s\) reached the engine \(.*is declared a counter and carries no sample yet: zero so far/,
      )
    })
    test('declared and never a child without traffic: inconclusive', async () => {
      const r = await judge({ ...healthy, pages: [none(), none()] })
      expect(r.judgement.verdict).toBe('inconclusive')
      expect(r.judgement.observed).toContain('no traffic reached the engine')
    })
    test('declared a gauge with no sample: not a counter, red', async () => {
      const r = await judge({ ...healthy, pages: [none({ type: 'gauge' })] })
      expect(r.judgement.verdict).toBe('failed')
      expect(r.judgement.observed).toContain('is declared "# TYPE … gauge", not a counter')
    })
    test('not declared at all: absent stays absent, red', async () => {
      const r = await judge({ ...healthy, pages: [none({ type: 'none' }), page({ '0': 3 }, { requests: 2 })] })
      expect(r.judgement.verdict).toBe('failed')
      expect(r.judgement.observed).toMatch(/is absent from \d+ samples/)
    })
    test('a child that goes away leaves the family declared and empty: vanished, red', async () => {
      const r = await judge({ ...healthy, pages: [page({ '0': 2 }), none({ requests: 1 })] })
      expect(r.judgement.verdict).toBe('failed')
      expect(r.judgement.observed).toContain('vanished from the page at scrape 2')
    })
  })

  describe('each page is bound to the pid step argv read (issue 20 rule 2)', () => {
    const START = 1_796_000_000.25
    const known = (extra: Partial<EngineProcess> = {}) => ({
      argv: {
        pid: PID,
        argvHeld: true,
        startTimeSeconds: START,
        startTimeResolution: 0.01,
        foundBy: 'pidof' as const,
        listenerTied: false,
        ...extra,
      },
    })
    const started = (values: number[], at: number | ((i: number) => number | undefined)) =>
      rising(values).map((p, i) => {
        const s = typeof at === 'number' ? at : at(i)
        return s === undefined ? p : { ...p, processStart: s }
      })
    test("a page started when the pid argv read started is that pid's: green", async () => {
      const r = await judge({ ...healthy, ...known(), pages: started([0, 2, 4], START) })
      expect(r.judgement.verdict).toBe('passed')
      expect(r.judgement.observed).toContain("rose during this run's traffic")
    })
    test("a page printed to a coarser resolution still binds (1.79600000025e+09 = the pid's start to 0.01 s)", async () => {
      const r = await judge({ ...healthy, ...known(), pages: started([0, 2], 1.79600000025e9) })
      expect(r.judgement.verdict).toBe('passed')
    })
    test('a page of a process started at another time, the pid still running: two engines, inconclusive at once from the baseline, naming both start times', async () => {
      const r = await judge({ ...healthy, ...known(), pages: started([0, 2, 4], START - 3600) })
      expect(r.judgement.verdict).toBe('inconclusive')
      const iso = (t: number) => new Date(t * 1000).toISOString()
      expect(r.judgement.observed).toContain(
        `the endpoint is served by a process started at ${iso(START - 3600)} (process_start_time_seconds ${START - 3600} at scrape 1), the pid argv read (${PID}) started at ${iso(START)}`,
      )
      expect(r.judgement.observed).toContain('this run is about two engines')
      expect(r.judgement.next).toMatch(/point --base-url at the engine step argv read/)
      expect(r.scrapes).toBe(1)
      expect(r.pidofCalls).toBe(1)
    })
    test('one clock tick apart is another process', async () => {
      const r = await judge({ ...healthy, ...known(), pages: started([0, 2], START + 0.01) })
      expect(r.judgement.verdict).toBe('inconclusive')
      expect(r.judgement.observed).toContain('this run is about two engines')
    })
    test('a page of another start time while the pid argv read is gone: the engine restarted, red', async () => {
      const r = await judge({ ...healthy, ...known(), pidofNow: ['5151'], pages: started([0, 2], START + 60) })
      expect(r.judgement.verdict).toBe('failed')
      expect(r.judgement.observed).toMatch(
        /^the engine restarted during the proof: the endpoint is served by a process started at .*; step argv read pid 4242; pidof radiance now finds 5151$/,
      )
    })
    test('bound at first, then another process answers (a load balancer): two engines, never green, even while the counter rises', async () => {
      const r = await judge({ ...healthy, ...known(), pages: started([0, 3, 5], (i) => (i === 1 ? START + 7 : START)) })
      expect(r.judgement.verdict).toBe('inconclusive')
      expect(r.judgement.observed).toContain('at scrape 2), the pid argv read')
    })
    test('a page without process_start_time_seconds, the listener not tied: inconclusive, naming what is missing and how to give it', async () => {
      const r = await judge({ ...healthy, ...known(), pages: rising([0, 2]) })
      expect(r.judgement.verdict).toBe('inconclusive')
      expect(r.judgement.observed).toBe(
        `nothing ties GET ${BASE}/metrics to the pid step argv read (${PID}): scrape 1 carries no process_start_time_seconds, and the base URL's listening socket was not tied to pid ${PID} (found by pidof --process)`,
      )
      expect(r.judgement.next).toContain('--pid-cmd')
      expect(r.scrapes).toBe(1)
    })
    test('a page without process_start_time_seconds served by the pid holding the listening socket: bound by the socket, green', async () => {
      const r = await judge({ ...healthy, ...known({ foundBy: 'listener', listenerTied: true }), pages: rising([0, 2]) })
      expect(r.judgement.verdict).toBe('passed')
    })
    test("the pid's start time unread and the listener not tied: inconclusive, it says how to let armproof read it", async () => {
      const r = await judge({ ...healthy, ...known({ startTimeSeconds: null }), pages: started([0, 2], START) })
      expect(r.judgement.verdict).toBe('inconclusive')
      expect(r.judgement.observed).toContain(`the start time of pid ${PID} could not be read`)
      expect(r.judgement.next).toContain(`/proc/${PID}/stat`)
    })
    test("the listener tied but the page started at another time: another process still (a proxy on the engine's port)", async () => {
      const r = await judge({ ...healthy, ...known({ foundBy: 'listener', listenerTied: true }), pages: started([0, 2], START + 5) })
      expect(r.judgement.verdict).toBe('inconclusive')
    })
  })

  test('/health never answered 200: inconclusive at once, saying why; /metrics is not watched and no process re-checked', async () => {
    const r = await judge({ ...healthy, healthy: false, baseline: false, pages: rising([0, 3]) })
    expect(r.judgement.verdict).toBe('inconclusive')
    expect(r.judgement.observed).toContain('not watched: /health never answered 200 (see step health)')
    expect(r.judgement.next).toContain('get /health to answer 200 first')
    expect(r.scrapes).toBe(0)
    expect(r.pidofCalls).toBe(0)
    const up = await judge({ ...healthy, healthy: true, pages: rising([0, 3]) })
    expect(up.judgement.verdict).toBe('passed')
  })

  test('a rollback: flat at zero while traffic flows is green; above zero is red', async () => {
    const flat = await judge({ ...healthy, value: null, pages: rising([0, 0, 0]) })
    expect(flat.judgement.verdict).toBe('passed')
    expect(flat.judgement.evidence.meter).toMatchObject({ proof: 'stayed-at-zero' })
    const above = await judge({ ...healthy, value: null, pages: rising([5, 5]) })
    expect(above.judgement.verdict).toBe('failed')
    expect(above.judgement.observed).toContain('read 5 → 5, not 0, although PREFILL_INTERLEAVE is at its default 0')
    const restarted = await judge({ ...healthy, value: null, pidofNow: ['77'], pages: rising([0, 0, 0]) })
    expect(restarted.judgement.verdict).toBe('failed')
  })
})

function scenario(random: () => number): Scenario {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!
  const chance = (p: number): boolean => random() < p
  const n = 1 + Math.floor(random() * 6)
  const engines = chance(0.25) ? ['0', '1'] : ['0']
  // Each engine's series: a shape of values over the scrapes.
  const series = engines.map(() => {
    const shape = pick(['flat0', 'flatPos', 'rise', 'reset', 'odd', 'vanish', 'late'] as const)
    const start = shape === 'flat0' ? 0 : Math.floor(random() * 20)
    let v = start
    return Array.from({ length: n }, (_, i): Value => {
      if (shape === 'rise' && i > 0 && chance(0.6)) v += 1 + Math.floor(random() * 5)
      if (shape === 'reset' && i > 0 && chance(0.5)) v = Math.max(0, v - 1 - Math.floor(random() * 10))
      if (shape === 'reset' && i > 0 && chance(0.4)) v += 2
      if (shape === 'odd' && chance(0.4)) return pick(['NaN', '+Inf', '-Inf', -1] as const)
      if (shape === 'vanish' && i > 0 && chance(0.4)) return 'absent'
      if (shape === 'late' && i === 0) return 'absent'
      if (shape === 'late' && chance(0.5)) v += 1
      return v
    })
  })
  const foreign = chance(0.4)
  const noModelLabel = chance(0.15)
  const type = chance(0.8) ? 'counter' : pick(['gauge', 'untyped', 'none'] as const)
  const startChange = chance(0.15) ? Math.floor(random() * n) : -1
  const pages: Page[] = []
  let requests = 0
  let foreignValue = Math.floor(random() * 5)
  for (let i = 0; i < n; i++) {
    if (chance(0.7)) requests += 1
    foreignValue += Math.floor(random() * 4)
    const served = Object.fromEntries(engines.map((e, k) => [e, series[k]![i]!]))
    pages.push({
      served,
      ...(foreign ? { foreign: foreignValue } : {}),
      ...(noModelLabel ? { noModelLabel } : {}),
      type,
      ...(chance(0.05) ? { duplicate: pick(engines) } : {}),
      ...(chance(0.05) ? { malformed: true } : {}),
      requests,
      ...(startChange >= 0 ? { processStart: i >= startChange && startChange > 0 ? 1.7e9 + 30 : 1.7e9 } : {}),
    })
  }
  const argv = chance(0.85) ? { pid: PID, argvHeld: chance(0.85) } : undefined
  return {
    pages,
    value: chance(0.8) ? '1' : null,
    ...(argv ? { argv } : {}),
    pidofNow: pick([[PID], [PID], [PID], ['5151'], [], [PID, '5151'], 'unreachable'] as const) as string[] | 'unreachable',
    model: chance(0.85) ? SERVED : null,
    baseline: chance(0.8),
  }
}

/**
 * Rule 3 (and the rollback's rule), decided from the scenario alone over the pages the judge
 * read: every page parseable, the meter a counter, no series twice, the served series (by
 * model_name, never another model's) present and finite and never going down, no restart; then
 * a rise, or above zero at the first scrape in the very process argv read. A family declared
 * with no sample yet is zero so far (issue 20 rule 5), not absent.
 */
function mayBeGreen(s: Scenario, read: number): { ok: boolean; why: string } {
  // The fake serves the last page again once the list runs out.
  const pages = Array.from({ length: read }, (_, i) => s.pages[Math.min(i, s.pages.length - 1)]!)
  const no = (why: string) => ({ ok: false, why })
  if (pages.length === 0) return no('no page read')
  if (pages.some((p) => p.malformed)) return no('a page Prometheus refuses')
  if (pages.some((p) => p.type === 'gauge')) return no('not a counter')
  if (pages.some((p) => p.duplicate !== undefined && p.served[p.duplicate] !== 'absent')) return no('a series twice')
  const starts = pages.map((p) => p.processStart).filter((x) => x !== undefined)
  if (new Set(starts).size > 1) return no('process_start_time_seconds changed')
  const foreignOnPage = pages.some((p) => p.foreign !== undefined)
  const noLabels = pages[0]!.noModelLabel === true
  if (s.model === null && foreignOnPage && !noLabels) return no('served model unknown among two')
  // The judged series: the served model's; on a page without model_name, every series, the foreign one too.
  const judged: Array<Array<Value>> = Object.keys(pages[0]!.served).map((e) => pages.map((p) => p.served[e]!))
  if (noLabels && foreignOnPage) judged.push(pages.map((p) => p.foreign ?? 'absent'))
  const pidChanged = s.argv !== undefined && !(s.pidofNow !== 'unreachable' && s.pidofNow.length === 1 && s.pidofNow[0] === s.argv.pid)
  const pidKnownChanged = s.argv !== undefined && s.pidofNow !== 'unreachable'
  const traffic = pages.length >= 2 && pages.at(-1)!.requests !== pages[0]!.requests
  // Rule 5 (issue 20): a page that declares the family (# TYPE) and prints no sample of it is zero
  // so far: the leading such pages read 0 for the series that first appears after them.
  const declaredEmpty = (p: Page) => p.type !== 'none' && p.foreign === undefined && Object.values(p.served).every((v) => v === 'absent')
  let lead = 0
  while (lead < pages.length && declaredEmpty(pages[lead]!)) lead++
  if (lead === pages.length) {
    if (pidChanged && pidKnownChanged) return no('another process runs now')
    return s.value === null && traffic
      ? { ok: true, why: 'flat at zero while traffic flowed' }
      : no('declared, no sample, and no rollback with traffic')
  }
  if (lead > 0) for (const vals of judged) if (vals.findIndex((v) => v !== 'absent') === lead) vals.fill(0, 0, lead)
  const present = judged.filter((vals) => vals.some((v) => v !== 'absent'))
  if (present.length === 0) return no('the served series is absent')
  for (const vals of present) {
    const first = vals.findIndex((v) => v !== 'absent')
    const seen = vals.slice(first)
    if (seen.some((v) => v === 'absent')) return no('a series vanished')
    if (seen.some((v) => typeof v !== 'number' || !Number.isFinite(v) || v < 0)) return no('not finite or below zero')
    for (let i = 1; i < seen.length; i++) if ((seen[i] as number) < (seen[i - 1] as number)) return no('a reset')
  }
  // A page without any of the served series has no meter (a series never on any page is no series at all).
  if (pages.some((p, i) => i >= lead && Object.values(p.served).every((v) => v === 'absent') && !(noLabels && p.foreign !== undefined)))
    return no('absent at a scrape')
  if (pidChanged && pidKnownChanged) return no('another process runs now')
  const nums = present.map((vals) => vals.filter((v): v is number => typeof v === 'number'))
  if (s.value === null) {
    if (nums.some((vs) => vs.some((v) => v > 0))) return no('above zero at the default')
    if (!traffic) return no('no traffic')
    return { ok: true, why: 'flat at zero while traffic flowed' }
  }
  if (nums.some((vs) => vs.some((v) => v > vs[0]!))) return { ok: true, why: 'rose during the run' }
  const sameProcess = s.argv?.argvHeld && !pidChanged
  if (sameProcess && pages.length >= 2 && present.some((vals) => typeof vals[0] === 'number' && vals[0] > 0))
    return { ok: true, why: 'above zero at the first scrape of the process argv read' }
  return no('neither a rise nor a proven process above zero')
}

describe('the meter judge, property: never green unless rule 3 holds', () => {
  const CASES = 600
  test(`${CASES} random scrape sequences (seeded)`, async () => {
    const tally = { passed: 0, failed: 0, inconclusive: 0, skipped: 0 }
    const proofs: Record<string, number> = {}
    for (let seed = 1; seed <= CASES; seed++) {
      const s = scenario(prng(seed))
      const run = await judge(s)
      const j = run.judgement
      tally[j.verdict]++
      const read = (j.evidence.scrapes as number | undefined) ?? run.scrapes
      const rule = mayBeGreen(s, read)
      const context = `seed ${seed}: ${JSON.stringify(s)}\n→ ${j.verdict}: ${j.observed}\nrule 3 over ${read} page(s): ${rule.why}`
      if (j.verdict === 'passed') {
        expect(rule.ok, context).toBe(true)
        const proof = (j.evidence.meter as { proof: string }).proof
        proofs[proof] = (proofs[proof] ?? 0) + 1
        // Green says which rule held.
        expect(proof, context).toBe(
          rule.why === 'rose during the run' ? 'rose' : rule.why === 'flat at zero while traffic flowed' ? 'stayed-at-zero' : 'before-run',
        )
      } else {
        // Anything not green carries what was seen and what to do.
        expect(j.observed, context).not.toBe('')
        expect(j.next, context).toBeTruthy()
      }
    }
    // The generator reaches every outcome, each green proof among them: the property is not vacuous.
    expect(tally.passed).toBeGreaterThan(CASES / 10)
    expect(tally.failed).toBeGreaterThan(CASES / 4)
    expect(tally.inconclusive).toBeGreaterThan(0)
    expect(Object.keys(proofs).sort()).toEqual(['before-run', 'rose', 'stayed-at-zero'])
  })
})
