// The meter's one ladder (helpers/steps/meter/ladder.ts) alone: readings in, judgement out, no
// seam at all. First a table of cases, each one rule, for both sources' words; then a property
// over random reading sequences (seeded): never green when any page is refused, a counter goes
// down, a series vanishes, a page is another process's (its start time is not the pid's), nothing
// ties a page to the pid, several targets are mixed, the process argv read is gone, or (with
// warnings) anything but a rise is claimed; and every judgement that is not green says what to do.
import { describe, expect, test } from 'vitest'
import type { EngineProcess } from '../../../helpers/steps/context.ts'
import type { ProcessCheck } from '../../../helpers/steps/_engine.ts'
import { decide, type Decision, type LadderView } from '../../../helpers/steps/meter/ladder.ts'
import type { SeriesValue } from '../../../helpers/steps/meter/reading.ts'
import type { MeterReadings, MeterScrape } from '../../../helpers/steps/meter/scrape.ts'
import { pageWords, promWords } from '../../../helpers/steps/meter/words.ts'
import { pick, prng } from '../../support/prng.ts'

const METER = 'radiance:engine_steps_held_total'
const MODEL = 'radiance-ref-8b'
const T0 = Date.UTC(2026, 10, 30, 2, 0, 0)
const START = 1_796_000_000.25
const URL_ = 'http://gpu-7:8000/metrics'

const ENGINE: EngineProcess = {
  pid: '4242',
  argvHeld: true,
  startTimeSeconds: START,
  startTimeResolution: 0.01,
  foundBy: 'pidof',
  listenerTied: false,
}
const SAME: ProcessCheck = {
  state: 'same',
  argvPid: '4242',
  pids: ['4242'],
  argvHeld: true,
  detail: 'pid 4242 (read by step argv) still runs, alone',
}
const GONE: ProcessCheck = {
  state: 'changed',
  argvPid: '4242',
  pids: ['5151'],
  argvHeld: true,
  detail: 'step argv read pid 4242; pidof radiance now finds 5151',
}

function view(over: Partial<LadderView> = {}): LadderView {
  return {
    meterName: METER,
    shown: METER,
    model: MODEL,
    value: '1',
    still: false,
    stillWhy: 'at its default 0',
    onByDefault: false,
    flag: '--prefill-interleave',
    env: 'PREFILL_INTERLEAVE',
    svc: 'llm-7',
    rollbackTo: '0',
    windowMs: 10_000,
    sinceMs: T0,
    baseline: true,
    where: `GET ${URL_}`,
    words: pageWords(URL_, METER),
    engine: ENGINE,
    listenerBinds: true,
    ...over,
  }
}

type Value = number | 'absent'
/** One scrape: the served series' value, the requests so far, and what else the page says. */
function scrape(i: number, v: Value, requests: number, extra: Partial<MeterScrape> = {}): MeterScrape {
  const meter: SeriesValue[] = v === 'absent' ? [] : [{ labels: { engine: '0', model_name: MODEL }, value: v, raw: String(v), line: 7 }]
  return {
    at: T0 + i * 1000,
    where: `GET ${URL_}`,
    meter,
    meterType: 'counter',
    duplicates: [],
    processStart: START,
    processStartRaw: String(START),
    traffic: { requests },
    lookalikes: [],
    prefixes: ['radiance', 'vllm'],
    sampleCount: 40,
    ...extra,
  }
}
const readings = (scrapes: MeterScrape[], extra: Partial<MeterReadings> = {}): MeterReadings => ({
  scrapes,
  reads: scrapes.length,
  failures: 0,
  absentAfter: 1,
  counted: true,
  ...extra,
})

/** What the watch would conclude: the ladder asked before and at the end of the window, the process re-checked when it asks. */
function judge(
  v: LadderView,
  r: MeterReadings,
  process: ProcessCheck = SAME,
): Extract<Decision, { kind: 'judged' }> & { rechecked: boolean } {
  let rechecked = false
  const ask = (final: boolean): Decision => {
    const d = decide(v, r, { final })
    if (d.kind !== 'recheck') return d
    rechecked = true
    return decide(v, r, { final, process })
  }
  const early = ask(false)
  const d = early.kind === 'watch' ? ask(true) : early
  if (d.kind !== 'judged') throw new Error(`the ladder answered ${d.kind} at the end of the window`)
  return { ...d, rechecked }
}

const rising = (values: Value[], extra: (i: number) => Partial<MeterScrape> = () => ({})) => values.map((v, i) => scrape(i, v, i, extra(i)))

describe('the ladder, rule by rule', () => {
  test.each([
    ['a rise during the traffic', rising([0, 0, 3]), {}, 'passed', "0 → 3: rose during this run's traffic"],
    ['flat at zero while requests flowed', rising([0, 0, 0]), {}, 'failed', 'stayed at 0 for 10s while 2 request(s) reached the engine'],
    ['flat at zero without traffic', [0, 1, 2].map((i) => scrape(i, 0, 5)), {}, 'inconclusive', 'no traffic reached the engine'],
    [
      'a page Prometheus would refuse, even while the meter rises',
      rising([0, 3], (i) => (i === 1 ? { refused: { line: 9, message: 'expected value', text: 'x{', count: 1 } } : {})),
      {},
      'failed',
      'would refuse this /metrics page whole: line 9',
    ],
    ['a counter that goes down', rising([5, 2, 9]), {}, 'failed', 'counter reset'],
    ['a series that vanishes', rising([1, 'absent']), {}, 'failed', 'vanished from the page at scrape 2'],
    ['a meter never exported', rising(['absent', 'absent']), {}, 'failed', 'is absent from 40 samples'],
    [
      'a family declared with no sample, then a child: a rise from zero',
      rising(['absent', 4], (i) => (i === 0 ? { declared: 'counter' } : {})),
      {},
      'passed',
      '0 → 4',
    ],
    [
      'a rollback declared and childless while traffic flows',
      rising(['absent', 'absent', 'absent'], () => ({ declared: 'counter' })),
      { still: true, value: '0' },
      'passed',
      'zero so far',
    ],
    [
      'a rollback above zero',
      rising([2, 2]),
      { still: true, value: '0' },
      'failed',
      'not 0, although PREFILL_INTERLEAVE is at its default 0',
    ],
    [
      'another process started the page',
      rising([0, 3], () => ({ processStart: START - 60, processStartRaw: String(START - 60) })),
      {},
      'inconclusive',
      'this run is about two engines',
    ],
    [
      'no start time and no listener tie',
      rising([0, 3], () => ({ processStart: undefined })),
      {},
      'inconclusive',
      'carries no process_start_time_seconds',
    ],
    [
      'no start time, the listener tied',
      rising([0, 3], () => ({ processStart: undefined })),
      { engine: { ...ENGINE, foundBy: 'listener', listenerTied: true } },
      'passed',
      'rose',
    ],
    [
      'no start time through Prometheus, even with a tied listener',
      rising([0, 3], () => ({ processStart: undefined })),
      {
        listenerBinds: false,
        words: promWords('http://prom:9090', '{instance="gpu-7:8000"}', METER),
        engine: { ...ENGINE, listenerTied: true },
      },
      'inconclusive',
      "only the series' process_start_time_seconds binds it",
    ],
    ['above zero before the run, in the process argv read', rising([7, 7, 7]), {}, 'passed', 'it moved before this run'],
    [
      "flat at its off value while the knob's own traffic failed: not the feature off",
      rising([0, 0, 0]),
      { still: true, value: 'false', traffic: '1 of 2 chat completions', trafficShort: 'request 2: HTTP 429 slow down' },
      'inconclusive',
      "the knob's own requests failed (request 2: HTTP 429 slow down)",
    ],
    [
      "flat at a default that turns the feature on while the knob's own traffic failed: not the engine's fault",
      rising([0, 0, 0]),
      { onByDefault: true, traffic: '0 of 2 chat completions', trafficShort: 'request 1: timeout; request 2: timeout' },
      'inconclusive',
      'not all of the traffic it moves only under was answered',
    ],
    [
      "a rise although part of the knob's own traffic failed",
      rising([0, 0, 3]),
      { trafficShort: 'request 2: HTTP 429 slow down' },
      'passed',
      '0 → 3',
    ],
  ] as const)('%s', (_name, scrapes, over, verdict, text) => {
    const d = judge(view(over as Partial<LadderView>), readings([...scrapes]))
    expect(d.verdict, d.observed).toBe(verdict)
    expect(`${d.observed}\n${d.next ?? ''}`).toContain(text)
    if (d.verdict !== 'passed') expect(d.next).toBeTruthy()
  })

  test('above zero before the run where argv did not hold for that pid: no proof, inconclusive', () => {
    const d = judge(view(), readings(rising([7, 7])), { ...SAME, argvHeld: false })
    expect(d.verdict).toBe('inconclusive')
    expect(d.observed).toContain('step argv did not hold for pid 4242')
  })

  test('a page of another start time while the pid argv read is gone is a restart: red', () => {
    const d = judge(view(), readings(rising([0, 3], () => ({ processStart: START + 30, processStartRaw: String(START + 30) }))), GONE)
    expect(d.verdict).toBe('failed')
    expect(d.observed).toMatch(/^the engine restarted during the proof: the endpoint is served by a process started at/)
  })

  test('a rise while the pid argv read is gone: red', () => {
    const d = judge(view(), readings(rising([0, 3])), GONE)
    expect(d.verdict).toBe('failed')
    expect(d.observed).toContain('but the engine restarted during the proof')
  })

  test('several targets behind the selector: inconclusive before anything else', () => {
    const d = judge(
      view({ words: promWords('http://prom:9090', '{job="radiance"}', METER), listenerBinds: false }),
      readings(rising([0, 3]), { targets: ['{instance="a"}', '{instance="a"}'] }),
    )
    expect(d.verdict).toBe('inconclusive')
    expect(d.observed).toContain('takes the series of 2 targets')
  })

  test('an answer with warnings: a rise is judged, an absence is not', () => {
    const prom = view({ words: promWords('http://prom:9090', '{instance="gpu-7:8000"}', METER), listenerBinds: false })
    expect(judge(prom, readings(rising([0, 3]), { warnings: ['partial response'] })).verdict).toBe('passed')
    for (const scrapes of [rising(['absent', 'absent', 'absent']), rising([0, 0, 0]), rising([1, 'absent'])]) {
      const d = judge(prom, readings(scrapes, { warnings: ['partial response'], absentAfter: 2 }))
      expect(d.verdict, d.observed).toBe('inconclusive')
      expect(d.observed).toContain('proves no absence')
    }
  })

  test('a read the engine answered unusably is red at once; one the operator asked wrongly is inconclusive; an unanswered one is waited out', () => {
    const failure = { what: 'HTTP 500', where: `GET ${URL_}`, next: 'check the exporter' }
    expect(judge(view(), readings([], { halted: { blame: 'engine', ...failure } })).verdict).toBe('failed')
    expect(judge(view(), readings([], { halted: { blame: 'operator', ...failure } })).verdict).toBe('inconclusive')
    const none = judge(
      view(),
      readings([], {
        reads: 0,
        failures: 3,
        lastFailure: { blame: 'none', what: 'connection refused', where: `GET ${URL_}`, next: 'check it is reachable' },
      }),
    )
    expect(none.verdict).toBe('inconclusive')
    expect(none.observed).toMatch(/^no \/metrics page could be read in 10s \(3 tries\): connection refused$/)
  })

  test('scrapes Prometheus lost (up == 0) are said, never read as an absence', () => {
    const prom = view({ words: promWords('http://prom:9090', '{instance="gpu-7:8000"}', METER), listenerBinds: false })
    const d = judge(prom, readings([scrape(0, 0, 0)], { unobserved: 6, absentAfter: 2 }))
    expect(d.verdict).toBe('inconclusive')
    expect(d.observed).toContain('6 scrape(s) of the target in the window failed (up == 0): not observed')
  })

  test('the same readings give the same judgement (pure)', () => {
    const r = readings(rising([0, 0, 2]))
    expect(decide(view(), r, { final: false, process: SAME })).toEqual(decide(view(), r, { final: false, process: SAME }))
  })
})

/** Random readings: each scrape may be refused, duplicated, another process's, without start time, declared, absent, lower than before. */
function randomCase(random: () => number) {
  const chance = (p: number) => random() < p
  const n = 1 + Math.floor(random() * 7)
  const prometheus = chance(0.3)
  const tied = chance(0.4)
  const known = chance(0.85)
  const engine: EngineProcess = {
    ...ENGINE,
    startTimeSeconds: known ? START : null,
    listenerTied: tied,
    foundBy: tied ? 'listener' : 'pidof',
    argvHeld: chance(0.85),
  }
  let v = chance(0.5) ? 0 : Math.floor(random() * 9)
  let requests = 0
  const scrapes: MeterScrape[] = []
  for (let i = 0; i < n; i++) {
    if (chance(0.6)) requests++
    if (chance(0.4)) v += 1 + Math.floor(random() * 4)
    if (chance(0.1)) v = Math.max(0, v - 1 - Math.floor(random() * 5))
    const value: Value = chance(0.1) ? 'absent' : v
    const extra: Partial<MeterScrape> = {}
    if (chance(0.06)) extra.refused = { line: 3, message: 'bad', text: 'x', count: 1 }
    if (chance(0.05) && value !== 'absent') extra.duplicates = [`${METER}{engine="0"} (lines 7 and 8)`]
    if (chance(0.1)) Object.assign(extra, { processStart: START + pick(random, [-3600, 0.01, 60]), processStartRaw: undefined })
    if (chance(0.08)) extra.processStart = undefined
    if (chance(0.1)) extra.declared = 'counter'
    scrapes.push(scrape(i, value, requests, extra))
  }
  const extra: Partial<MeterReadings> = {}
  if (prometheus && chance(0.2)) extra.warnings = ['partial response']
  if (prometheus && chance(0.15)) extra.targets = ['{instance="a"}', '{instance="a"}']
  if (prometheus) extra.absentAfter = 2
  const process = pick(random, [
    SAME,
    SAME,
    { ...SAME, argvHeld: engine.argvHeld },
    GONE,
    { ...SAME, state: 'unknown' as const, detail: 'the lookup could not run' },
  ])
  const v0 = view({
    engine,
    still: chance(0.2),
    ...(prometheus ? { listenerBinds: false, words: promWords('http://prom:9090', '{instance="gpu-7:8000"}', METER) } : {}),
  })
  return { view: v0, readings: readings(scrapes, extra), process }
}

/** A reason the readings can never be green, or undefined. */
function neverGreen(c: ReturnType<typeof randomCase>): string | undefined {
  const { view: v, readings: r, process } = c
  const e = v.engine!
  if (r.targets && r.targets.length > 1) return 'several targets'
  if (process.state === 'changed') return 'the process argv read is gone'
  for (const [i, s] of r.scrapes.entries()) {
    if (s.refused) return `scrape ${i + 1} refused`
    if (s.processStart !== undefined && e.startTimeSeconds !== null && Math.abs(s.processStart - e.startTimeSeconds) > 0.006)
      return `scrape ${i + 1} is another process's`
    if ((s.processStart === undefined || e.startTimeSeconds === null) && !(v.listenerBinds && e.listenerTied))
      return `nothing ties scrape ${i + 1}`
    if (s.duplicates.length > 0 && s.meter.length > 0) return `scrape ${i + 1} carries a series twice`
    const prev = r.scrapes
      .slice(0, i)
      .map((p) => p.meter[0]?.value)
      .filter((x) => x !== undefined)
    const now = s.meter[0]?.value
    if (now !== undefined && prev.length > 0 && now < prev.at(-1)!) return `a reset at scrape ${i + 1}`
    // A partial answer proves no vanish: only a full one does.
    if (now === undefined && prev.length > 0 && !r.warnings?.length) return `a vanish at scrape ${i + 1}`
  }
  return undefined
}

describe('the ladder, property (seeded): never green against any of its rules', () => {
  const CASES = 3000
  test(`${CASES} random reading sequences`, () => {
    const tally = { passed: 0, failed: 0, inconclusive: 0 }
    for (let seed = 1; seed <= CASES; seed++) {
      const c = randomCase(prng(seed))
      const d = judge(c.view, c.readings, c.process)
      tally[d.verdict]++
      const why = neverGreen(c)
      const context = `seed ${seed}: ${JSON.stringify({ engine: c.view.engine, still: c.view.still, process: c.process.state, readings: c.readings })}\n→ ${d.verdict}: ${d.observed}`
      if (d.verdict === 'passed') {
        expect(why, context).toBeUndefined()
        const proof = d.found?.proof
        expect(proof, context).toBeDefined()
        // A partial answer proves only a rise.
        if (c.readings.warnings?.length) expect(proof, context).toBe('rose')
        if (proof === 'before-run') expect(c.process.state === 'same' && c.process.argvHeld, context).toBe(true)
      } else {
        expect(d.observed, context).not.toBe('')
        expect(d.next, context).toBeTruthy()
      }
    }
    // Every outcome is reached: the property is not vacuous.
    expect(tally.passed).toBeGreaterThan(CASES / 20)
    expect(tally.failed).toBeGreaterThan(CASES / 10)
    expect(tally.inconclusive).toBeGreaterThan(CASES / 10)
  })
})
