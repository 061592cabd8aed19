// The series tie (helpers/steps/meter/prom-tie.ts): a target's series in Prometheus tied to the pid
// by its birth, for exporters without process_start_time_seconds. Hand-built histories for each
// rule, then seeded property tests over random scrape times: a tie is granted only when the
// series' current life began after the pid's start and the previous one ended before it, and
// never for a series that ran across the start, a hole, two candidates or an untied pid.
import { describe, expect, test } from 'vitest'
import type { PromSample } from '../../../helpers/prom/answer.ts'
import {
  BTIME_CUT_S,
  HOLE_INTERVALS,
  SKEW_BOUND_S,
  seriesTie,
  type TieInput,
  type TieSeries,
} from '../../../helpers/steps/meter/prom-tie.ts'
import { pick, prng } from '../../support/prng.ts'

const LABELS = { instance: '127.0.0.1:8080', job: 'llama' }
const I = 1000
/** The pid's start, s. */
const S = 1_700_000_000

/** A scrape at `t` ms: success (with counter value) or failure. */
type Scrape = { t: number; ok: boolean; counter?: number }

function input(scrapes: readonly Scrape[], over: Partial<TieInput> = {}): TieInput {
  const s = (t: number, value: number): PromSample => ({ t, value, raw: String(value) })
  const up: TieSeries = { name: 'up', labels: LABELS, samples: scrapes.map((x) => s(x.t, x.ok ? 1 : 0)) }
  const counter: TieSeries = {
    name: 'llamacpp:prompt_tokens_total',
    labels: LABELS,
    samples: scrapes.filter((x) => x.ok).map((x) => s(x.t, x.counter ?? 0)),
  }
  return {
    pid: '4242',
    startS: S,
    resolutionS: 0.01,
    listenerTied: true,
    foundHow: 'by its listening socket',
    endpoint: '127.0.0.1:8080',
    ups: [up],
    counters: [counter],
    targets: [{ labels: LABELS, scrapeUrl: 'http://127.0.0.1:8080/metrics', scrapeIntervalMs: I }],
    fromMs: (S - 300) * 1000,
    ...over,
  }
}

/** Scrapes every interval over [fromS, toS) (seconds relative to S, offset `phase` ms), success where `ok(t)`. */
function every(
  fromS: number,
  toS: number,
  ok: (tMs: number) => boolean,
  phase = 300,
  counter?: (tMs: number) => number,
  interval = I,
): Scrape[] {
  const out: Scrape[] = []
  for (let t = (S + fromS) * 1000 + phase; t < (S + toS) * 1000; t += interval)
    out.push({ t, ok: ok(t), ...(counter ? { counter: counter(t) } : {}) })
  return out
}

const ms = (rel: number) => (S + rel) * 1000

describe('seriesTie: the rule', () => {
  test('tied: the old process answered until 10 s before the start, failed scrapes across it, the series born 30 s after (an engine loading)', () => {
    const t = seriesTie(
      input(
        every(
          -60,
          60,
          (x) => x < ms(-10) || x > ms(30),
          300,
          (x) => (x < ms(-10) ? 500 : 3),
        ),
      ),
    )
    expect(t.tied).toBe(true)
    if (!t.tied) return
    expect(t.evidence).toMatchObject({ rule: 'series-birth', intervalMs: I, broke: 'failed-scrapes', skewBoundS: SKEW_BOUND_S })
    expect(t.evidence.firstSample).toBe(new Date(ms(30) + 300).toISOString())
    expect(t.evidence.bornAfter).toBe(new Date(ms(30) + 300 - I).toISOString())
    expect(t.said).toContain('resolution one scrape interval, 1000 ms')
  })

  test('tied: the first life of the series, every scrape since 5 min before the start failed (the port was closed)', () => {
    const t = seriesTie(input(every(-300, 60, (x) => x > ms(20))))
    expect(t).toMatchObject({ tied: true, evidence: { lastBefore: null } })
  })

  test('tied: a restart within one interval of 5 s, shown by the counters going down; never at 1 s, within the skew bound of 1 s', () => {
    const t = seriesTie(
      input(
        every(
          -60,
          30,
          () => true,
          2600,
          (x) => (x < ms(0) ? 900 : 1),
          5000,
        ),
      ),
    )
    expect(t).toMatchObject({ tied: true, evidence: { broke: 'counter-reset', intervalMs: 5000 } })
    // At 1 s the scrapes around the start are within 1 s of it: too close to tell which process each read.
    expect(
      seriesTie(
        input(
          every(
            -60,
            30,
            () => true,
            600,
            (x) => (x < ms(0) ? 900 : 1),
          ),
        ),
      ).tied,
    ).toBe(false)
  })

  test('not tied: the series ran across the pid start without a break (no failed scrape, no reset)', () => {
    const t = seriesTie(input(every(-60, 60, () => true)))
    expect(t.tied).toBe(false)
    if (t.tied) return
    expect(t.observed).toMatch(/ran across the pid's start without a break/)
  })

  test('not tied: the break began after the pid started (the previous life lasted past it)', () => {
    const t = seriesTie(input(every(-60, 60, (x) => x < ms(5) || x > ms(20))))
    expect(t).toMatchObject({ tied: false, observed: expect.stringMatching(/previous life lasted until .* after pid 4242 started/) })
  })

  test("not tied: the series was born within the skew bound of the pid start, or within the second /proc's btime is cut to", () => {
    expect(seriesTie(input(every(-60, 60, (x) => x < ms(-10) || x > ms(0)))).tied).toBe(false)
    // First sample 1.3 s after the /proc start: the wall-clock start may be 0.99 s after it, and the clocks 1 s apart.
    expect(seriesTie(input(every(-60, 60, (x) => x < ms(-10) || x > ms(1)))).tied).toBe(false)
    expect(seriesTie(input(every(-60, 60, (x) => x < ms(-10) || x > ms(2)))).tied).toBe(true)
  })

  test('not tied: Prometheus did not scrape the target around the start (a hole), though it failed before and answers after', () => {
    const scrapes = [...every(-60, -20, (x) => x < ms(-30)), ...every(10, 60, () => true)]
    const t = seriesTie(input(scrapes))
    expect(t).toMatchObject({ tied: false, observed: expect.stringMatching(/holds no scrape of the target between/) })
  })

  test('not tied: born after the start, then Prometheus missed the target for 15 s (a hole in the life: another process could have taken over)', () => {
    const scrapes = every(-60, 60, (x) => x > ms(5)).filter((x) => x.t < ms(10) || x.t > ms(25))
    const t = seriesTie(input(scrapes))
    expect(t).toMatchObject({
      tied: false,
      observed: expect.stringMatching(/holds no scrape of the target between .*more than 2 intervals/),
    })
  })

  test('not tied: Prometheus began scraping after the pid started (the series appears, nothing seen before)', () => {
    const t = seriesTie(input(every(10, 60, () => true)))
    expect(t).toMatchObject({ tied: false })
    const u = seriesTie(input(every(10, 60, (x) => x > ms(20))))
    expect(u).toMatchObject({
      tied: false,
      observed: expect.stringMatching(/first scrape of the target since .* not before pid 4242 started/),
    })
  })

  test('not tied: the pid was not found by the base URL listening socket (a second process started in the same window would fit)', () => {
    const t = seriesTie(
      input(
        every(-60, 60, (x) => x > ms(20)),
        { listenerTied: false, foundHow: 'by pidof --process' },
      ),
    )
    expect(t).toMatchObject({ tied: false, observed: expect.stringContaining('found by pidof --process') })
  })

  test('not tied: two `up` series, or two active targets with one label set (replicas behind one instance)', () => {
    const base = input(every(-60, 60, (x) => x > ms(20)))
    expect(seriesTie({ ...base, ups: [...base.ups, { ...base.ups[0]!, labels: { ...LABELS, job: 'other' } }] }).tied).toBe(false)
    const two = seriesTie({
      ...base,
      targets: [...(base.targets as never[]), { labels: LABELS, scrapeUrl: 'http://127.0.0.1:8081/metrics' }],
    })
    expect(two).toMatchObject({ tied: false, observed: expect.stringContaining('2 active targets carry') })
  })

  test("not tied: the target scrapes another host:port than the base URL's (the instance relabelled)", () => {
    const base = input(every(-60, 60, (x) => x > ms(20)))
    const t = seriesTie({ ...base, targets: [{ labels: LABELS, scrapeUrl: 'http://127.0.0.1:9999/metrics' }] })
    expect(t).toMatchObject({ tied: false, observed: expect.stringContaining('not the base URL') })
  })

  test('not tied: a counter sample where the target had no successful scrape (another scrape writes the series: honor_labels)', () => {
    const base = input(every(-60, 60, (x) => x > ms(20)))
    const stray = { name: 'llamacpp:prompt_tokens_total', labels: LABELS, samples: [{ t: ms(-30) + 700, value: 5, raw: '5' }] }
    expect(seriesTie({ ...base, counters: [...base.counters, stray] })).toMatchObject({
      tied: false,
      observed: expect.stringContaining('another scrape writes'),
    })
  })

  test('not tied: the API lists no active targets', () => {
    expect(
      seriesTie(
        input(
          every(-60, 60, (x) => x > ms(20)),
          { targets: 'unsupported' },
        ),
      ).tied,
    ).toBe(false)
  })
})

/**
 * The truth of a random history: the pid is tied exactly when the current life began after S + slack
 * and the last success before it (or the lookback's first scrape, a failure) was before S - slack,
 * with no hole between; a gauge-free counter history. Computed here independently, from the scrapes.
 */
function truth(scrapes: readonly Scrape[], startS: number): boolean {
  const slack = (SKEW_BOUND_S + 0.005) * 1000
  const lo = startS * 1000 - slack
  const hi = startS * 1000 + BTIME_CUT_S * 1000 + slack
  const oks = scrapes.map((x, i) => ({ ...x, i })).filter((x) => x.ok)
  if (oks.length === 0) return false
  let k = oks.length - 1
  while (k > 0) {
    const [a, b] = [oks[k - 1]!, oks[k]!]
    if (b.i - a.i > 1 || b.t - a.t > HOLE_INTERVALS * I || (b.counter ?? 0) < (a.counter ?? 0)) break
    k--
  }
  const first = oks[k]!
  if (first.t <= hi) return false
  const before = k > 0 ? oks[k - 1]! : undefined
  if (before && first.t - before.t > HOLE_INTERVALS * I && first.i - before.i === 1) return false
  if (before && before.t >= lo) return false
  const span = scrapes.slice(before ? before.i : 0, first.i + 1)
  if (!before && (span[0]!.t > lo || span[0]!.ok)) return false
  return span.every((x, j) => j === 0 || x.t - span[j - 1]!.t <= HOLE_INTERVALS * I)
}

/** A random history: lives and deaths of processes, scrapes at the interval with random misses (holes), counters that restart. */
function randomHistory(random: () => number): { scrapes: Scrape[]; startS: number } {
  const scrapes: Scrape[] = []
  let up = random() < 0.5
  let counter = Math.floor(random() * 100)
  const phase = Math.floor(random() * I)
  for (let t = ms(-120) + phase; t < ms(120); t += I) {
    if (random() < 0.08) up = !up
    if (random() < 0.03) counter = 0 // a restart within one interval
    if (random() < 0.05) continue // Prometheus missed this scrape (down, reloading)
    if (up && random() < 0.3) counter += Math.floor(random() * 5)
    scrapes.push(up ? { t, ok: true, counter } : { t, ok: false })
  }
  // The pid's start: anywhere, often near a change of state.
  const changes = scrapes.filter((x, i) => i > 0 && x.ok !== scrapes[i - 1]!.ok).map((x) => x.t / 1000)
  const startS = changes.length && random() < 0.7 ? pick(random, changes) - random() * 20 : S - 100 + random() * 200
  return { scrapes, startS }
}

describe('seriesTie: property tests over random scrape times (seeded)', () => {
  const CASES = 600
  test(`${CASES} random histories: tied exactly when the independent truth says so, and both outcomes occur`, () => {
    let tied = 0
    for (let seed = 0; seed < CASES; seed++) {
      const random = prng(36_400 + seed)
      const { scrapes, startS } = randomHistory(random)
      if (scrapes.length < 2) continue
      const t = seriesTie(input(scrapes, { startS, fromMs: ms(-120) }))
      expect(t.tied, `seed ${36_400 + seed}: ${t.tied ? t.said : t.observed}`).toBe(truth(scrapes, startS))
      if (t.tied) tied++
    }
    expect(tied).toBeGreaterThan(CASES / 50)
    expect(tied).toBeLessThan(CASES / 2)
  })

  test('never tied when the series has a successful scrape within the skew bound of the pid wall-clock start, whatever else', () => {
    for (let seed = 0; seed < 300; seed++) {
      const random = prng(37_000 + seed)
      const { scrapes } = randomHistory(random)
      const hit = scrapes.filter((x) => x.ok)
      if (hit.length === 0) continue
      // The pid started right at a successful scrape: that scrape read another process, or this one just started: no tie either way.
      const at = pick(random, hit).t / 1000 - BTIME_CUT_S * random() + (random() - 0.5) * 2 * SKEW_BOUND_S
      const t = seriesTie(input(scrapes, { startS: at, fromMs: ms(-120) }))
      expect(t.tied, `seed ${37_000 + seed}`).toBe(false)
    }
  })

  test('never tied without the listener tie, or with a second target, whatever the history', () => {
    for (let seed = 0; seed < 200; seed++) {
      const random = prng(38_000 + seed)
      const { scrapes, startS } = randomHistory(random)
      if (scrapes.length < 2) continue
      const base = input(scrapes, { startS, fromMs: ms(-120) })
      expect(seriesTie({ ...base, listenerTied: false }).tied).toBe(false)
      expect(seriesTie({ ...base, targets: [...(base.targets as never[]), ...(base.targets as never[])] }).tied).toBe(false)
    }
  })
})
