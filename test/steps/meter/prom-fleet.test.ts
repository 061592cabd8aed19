// The meter through Prometheus for a live fleet (helpers/steps/meter/prom-fleet.ts), against a
// made-up Prometheus that evaluates the selectors it is sent: each target's part of the fleet's
// shared poll is the reading its own poll would have got (seeded property over random fleets:
// default and custom selectors, several jobs, other targets' series, other models), in fewer
// queries; a poll is never joined once sent, and the next waits MIN_GAP_MS; a failure reaches
// every target of the poll.
import { afterEach, describe, expect, test } from 'vitest'
import { closePromFleet, MIN_GAP_MS, openPromFleet, promFleetQueries, sharedPromSource } from '../../../helpers/steps/meter/prom-fleet.ts'
import type { LabelMatcher } from '../../../helpers/prom/query.ts'
import { checkPromOptions, type PromFetch, type PromSourceOptions } from '../../../helpers/steps/meter/prom-options.ts'
import { createPromSource } from '../../../helpers/steps/meter/prometheus-source.ts'
import { pick, prng } from '../../support/prng.ts'

const METER = 'radiance:engine_steps_held_total'
const TRAFFIC = ['vllm:request_success_total', 'vllm:generation_tokens_total']
const T0 = 2_100_000_000_000

interface Series {
  labels: Record<string, string>
  samples: Array<[number, string]>
}

/** What the fake holds: series, and the families each scrape target declares. */
interface Db {
  series: Series[]
  meta: Array<{ target: Record<string, string>; metric: string; type: string }>
}

function matches(labels: Record<string, string>, ms: readonly LabelMatcher[]): boolean {
  return ms.every((m) => {
    const v = labels[m.name] ?? ''
    if (m.op === '=') return v === m.value
    if (m.op === '!=') return v !== m.value
    const re = new RegExp(`^(?:${m.value})$`)
    return m.op === '=~' ? re.test(v) : !re.test(v)
  })
}

/** A selector's matchers as Prometheus reads them (any matchers: armproof's own rules for --prometheus-match are not the server's). */
function selectorOf(text: string): LabelMatcher[] {
  return [...text.matchAll(/([a-zA-Z_]\w*)(=~|!~|!=|=)("(?:[^"\\]|\\.)*")/g)].map((m) => ({
    name: m[1]!,
    op: m[2] as LabelMatcher['op'],
    value: JSON.parse(m[3]!) as string,
  }))
}

/** A Prometheus answering the two requests of a poll from `db`, as its selectors take it (range both ends included). */
function fakeProm(db: Db, asked: string[]): PromFetch {
  return async (url) => {
    asked.push(url)
    const u = new URL(url)
    const ok = (data: unknown) => ({ status: 200, body: JSON.stringify({ status: 'success', data }) })
    if (u.pathname === '/api/v1/targets/metadata') {
      const sel = selectorOf(u.searchParams.get('match_target')!)
      return ok(db.meta.filter((e) => matches(e.target, sel)).map((e) => ({ ...e, help: '', unit: '' })))
    }
    const query = u.searchParams.get('query')!
    const m = /^\{__name__=~?("(?:[^"\\]|\\.)*"),(.*)\}\[(\d+)s\]$/.exec(query)!
    const names = JSON.parse(m[1]!) as string
    const sel = selectorOf(m[2]!)
    const at = Number(u.searchParams.get('time')) * 1000
    const from = at - Number(m[3]) * 1000
    const result = db.series
      .filter((s) => new RegExp(`^(?:${names})$`).test(s.labels.__name__!) && matches(s.labels, sel))
      .map((s) => ({ metric: s.labels, values: s.samples.filter(([t]) => t * 1000 >= from && t * 1000 <= at) }))
      .filter((s) => s.values.length > 0)
    return ok({ resultType: 'matrix', result })
  }
}

/** A random fleet: targets on instances of a few jobs, each with its own series; some with a selector of their own. */
function randomFleet(seed: number) {
  const random = prng(seed)
  const n = 2 + Math.floor(random() * 7)
  const db: Db = { series: [], meta: [] }
  const targets: Array<{ baseUrl: string; match?: string; model: string; sinceMs: number }> = []
  for (let i = 0; i < n + 2; i++) {
    const instance = `10.0.0.${i}:8000`
    const job = pick(random, ['radiance', 'radiance', 'other'])
    const model = pick(random, ['m-a', 'm-b'])
    const base = { instance, job, pod: `p${i}` }
    const times = Array.from({ length: 12 }, (_, k) => (T0 - 11_000 + k * 1000 + Math.floor(random() * 300)) / 1000)
    const count = (v: number) => times.map((t, k) => [t, String(v * k)] as [number, string])
    db.series.push({ labels: { __name__: 'up', ...base }, samples: times.map((t) => [t, pick(random, ['1', '1', '1', '0'])]) })
    db.series.push({ labels: { __name__: METER, ...base, model_name: model }, samples: count(Math.floor(random() * 3)) })
    if (random() < 0.5) db.series.push({ labels: { __name__: METER, ...base, model_name: 'another' }, samples: count(1) })
    if (random() < 0.3) db.series.push({ labels: { __name__: 'vllm:engine_steps_held_total', ...base }, samples: count(1) })
    db.series.push({ labels: { __name__: TRAFFIC[0]!, ...base, model_name: model, finished_reason: 'stop' }, samples: count(2) })
    db.series.push({ labels: { __name__: 'process_start_time_seconds', ...base }, samples: times.map((t) => [t, '1799999000.5']) })
    db.meta.push({ target: base, metric: METER.replace(/_total$/, ''), type: 'counter' })
    if (i >= n) continue // series of targets nobody asks for
    const since = T0 - Math.floor(random() * 9000)
    const match =
      random() < 0.3
        ? `{job="${job}",instance="${instance}"}`
        : random() < 0.3
          ? `{job="${job}",pod="p${i}"}`
          : random() < 0.2
            ? `{pod="p${i}",instance=~"10\\\\..*"}`
            : undefined
    targets.push({ baseUrl: `http://${instance}`, ...(match ? { match } : {}), model, sinceMs: since })
  }
  return { db, targets }
}

afterEach(() => closePromFleet())

describe("a fleet's shared Prometheus polls", () => {
  test("each target's part is the reading its own poll gets, in fewer queries (seeded)", async () => {
    const totals = { own: 0, shared: 0 }
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const { db, targets } = randomFleet(seed)
      const nowMs = T0 + 500
      const own: string[] = []
      const mine = await Promise.all(
        targets.map((t) => {
          const opts: PromSourceOptions = {
            prometheusUrl: 'http://prom.test:9090',
            baseUrl: t.baseUrl,
            ...(t.match ? { match: t.match } : {}),
            meterName: METER,
            trafficNames: TRAFFIC,
            model: t.model,
            fetch: fakeProm(db, own),
          }
          return createPromSource(opts).poll(t.sinceMs, nowMs)
        }),
      )
      const asked: string[] = []
      openPromFleet(T0, () => fakeProm(db, asked))
      const sources = targets.map((t) => {
        const opts = {
          prometheusUrl: 'http://prom.test:9090',
          baseUrl: t.baseUrl,
          ...(t.match ? { match: t.match } : {}),
          meterName: METER,
          trafficNames: TRAFFIC,
          model: t.model,
        }
        const { base, matchers } = checkPromOptions(opts)
        return sharedPromSource(opts, null, base, matchers)!
      })
      const parts = await Promise.all(sources.map((src, i) => src.poll(targets[i]!.sinceMs, nowMs)))
      closePromFleet()
      for (const [i, part] of parts.entries()) expect(part, `seed ${seed}, target ${i} ${JSON.stringify(targets[i])}`).toEqual(mine[i])
      // Besides the polls, each group's targets' `up` is read once, for their scrape intervals (about 1 s here).
      const isUp = (u: string) => new URL(u).searchParams.get('query')?.startsWith('{__name__="up"') === true
      const shared = asked.filter((u) => !isUp(u))
      for (const [i, src] of sources.entries()) expect(src.scrapeIntervalMs(), `seed ${seed}, target ${i}`).toBeGreaterThanOrEqual(700)
      for (const src of sources) expect(src.scrapeIntervalMs()).toBeLessThanOrEqual(1300)
      expect(asked.filter(isUp).length).toBeLessThanOrEqual(shared.length / 2)
      expect(shared.length, `seed ${seed}`).toBeLessThanOrEqual(own.length)
      totals.own += own.length
      totals.shared += shared.length
    }
    expect(totals.shared).toBeLessThan(totals.own)
  })

  test('default selectors of many targets are one query set: instance=~ of each quoted value', async () => {
    const asked: string[] = []
    openPromFleet(T0, () => fakeProm({ series: [], meta: [] }, asked))
    const polls = Array.from({ length: 30 }, (_, i) => {
      const opts = {
        prometheusUrl: 'http://prom.test:9090',
        baseUrl: `http://gpu-${i}.example:8000`,
        meterName: METER,
        trafficNames: TRAFFIC,
      }
      const { base, matchers } = checkPromOptions(opts)
      return sharedPromSource(opts, null, base, matchers)!.poll(T0, T0 + 1000)
    })
    await Promise.all(polls)
    // The poll's two, and its targets' `up` once (their scrape intervals).
    expect(asked).toHaveLength(3)
    expect(promFleetQueries()).toBe(3)
    expect(new URL(asked[0]!).searchParams.get('query')).toContain('instance=~"gpu-0\\\\.example:8000|gpu-1\\\\.example:8000|')
  })

  test('a poll under way is never joined; the next waits the least gap; a failure reaches each of its targets', async () => {
    const asked: string[] = []
    let fail = false
    const fetch: PromFetch = async (url) => {
      asked.push(url)
      const failing = fail
      await new Promise((r) => setTimeout(r, 30))
      if (failing) throw new Error('connect ECONNREFUSED')
      return fakeProm({ series: [], meta: [] }, [])(url)
    }
    openPromFleet(T0, () => fetch)
    const source = (i: number) => {
      const opts = { prometheusUrl: 'http://prom.test:9090', baseUrl: `http://h${i}:1`, meterName: METER, trafficNames: TRAFFIC }
      const { base, matchers } = checkPromOptions(opts)
      return sharedPromSource(opts, null, base, matchers)!
    }
    const first = source(0).poll(T0, T0 + 1000)
    await new Promise((r) => setTimeout(r, 10))
    fail = true
    const started = performance.now()
    const later = await Promise.all([source(1).poll(T0, T0 + 1000), source(2).poll(T0, T0 + 1000)])
    expect((await first).ok).toBe(true)
    expect(performance.now() - started).toBeGreaterThanOrEqual(MIN_GAP_MS - 20)
    // Each poll's two, and the new targets' `up` once per poll that first asked for them.
    expect(asked).toHaveLength(6)
    for (const r of later) expect(r.ok === false && r.failure.kind).toBe('unreachable')
  })
})
