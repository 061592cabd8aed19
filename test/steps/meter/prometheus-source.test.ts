// The PromQL meter source (helpers/steps/meter/prometheus-source.ts) in-process, against canned answers of
// Prometheus' HTTP API: the two queries of a poll, what it makes of them (present, stale,
// absent only after two scrapes, resets, the prefix trap, the served model's series), and every
// answer it must refuse rather than read (an error body, HTML, a wrong resultType, numbers where
// Prometheus sends strings, a series twice). Then the selector: label values are escaped so a
// hostile value cannot change the query (a seeded round-trip property), and bad --prometheus-match
// text is the operator's to fix.
import { describe, expect, test } from 'vitest'
import { parseApiAnswer, parseTargetsMetadata } from '../../../helpers/prom/answer.ts'
import { buildQueries, defaultMatch, parseMatch, promString, renderMatchers, type LabelMatcher } from '../../../helpers/prom/query.ts'
import { createPromSource } from '../../../helpers/steps/meter/prometheus-source.ts'
import { PromSourceError, type PromFetch } from '../../../helpers/steps/meter/prom-options.ts'
import {
  counterWalk,
  latest,
  meterResets,
  parsePromDuration,
  presence,
  scrapeIntervalFromConfig,
  walk,
} from '../../support/prom-reading.ts'

const METER = 'radiance:engine_steps_held_total'
const TRAFFIC = ['vllm:request_success_total', 'vllm:generation_tokens_total']
const MODEL = 'radiance-ref-8b'
const INSTANCE = 'gpu-7:8000'
const T0 = 1_800_000_000_000

const ok = (resultType: string, result: unknown[]) => ({
  status: 200,
  body: JSON.stringify({ status: 'success', data: { resultType, result } }),
})
const labels = (name: string, extra: Record<string, string> = {}) => ({ __name__: name, instance: INSTANCE, job: 'radiance', ...extra })
const served = (name: string, extra: Record<string, string> = {}) => labels(name, { engine: '0', model_name: MODEL, ...extra })
const at = (s: number) => (T0 + s * 1000) / 1000

/** A fake Prometheus: answers the range query with `matrix`, the targets' metadata with `metadata`. */
function fakeProm(matrix: unknown[], seen: string[] = [], metadata: unknown[] = []): PromFetch {
  return async (url) => {
    seen.push(url)
    return new URL(url).pathname === '/api/v1/targets/metadata'
      ? { status: 200, body: JSON.stringify({ status: 'success', data: metadata }) }
      : ok('matrix', matrix)
  }
}

function source(fetch: PromFetch, extra: Partial<Parameters<typeof createPromSource>[0]> = {}) {
  return createPromSource({
    prometheusUrl: 'http://prom.test:9090',
    baseUrl: `http://${INSTANCE}`,
    meterName: METER,
    trafficNames: TRAFFIC,
    model: MODEL,
    fetch,
    ...extra,
  })
}

const upSamples = (n: number) => ({ metric: labels('up'), values: Array.from({ length: n }, (_, i) => [at(i + 1), '1']) })
const metaOf = (target: Record<string, string>, metric: string, type = 'counter') => ({ target, metric, type, help: '', unit: '' })

describe('one poll', () => {
  test("sends exactly two requests: the raw samples through the selector at one evaluation time, and the targets' metadata of its matchers; no instant query", async () => {
    const seen: string[] = []
    const src = source(fakeProm([], seen))
    await src.poll(T0, T0 + 10_000)
    await src.poll(T0, T0 + 11_000)
    expect(seen).toHaveLength(4)
    expect(src.queries()).toBe(4)
    const [a, b, c] = seen.map((u) => new URL(u))
    expect(a!.pathname).toBe('/api/v1/query')
    expect(a!.searchParams.get('time')).toBe(String((T0 + 10_000) / 1000) + '.000')
    expect(c!.searchParams.get('time')).toBe(String((T0 + 11_000) / 1000) + '.000')
    expect(a!.searchParams.get('query')).toBe(
      `{__name__=~"(?:[a-zA-Z_][a-zA-Z0-9_]*:)?engine_steps_held_total|vllm:request_success_total|vllm:generation_tokens_total|up|process_start_time_seconds",instance="${INSTANCE}"}[10s]`,
    )
    expect(b!.pathname).toBe('/api/v1/targets/metadata')
    expect(b!.searchParams.get('match_target')).toBe(`{instance="${INSTANCE}"}`)
    expect(seen.some((u) => /\}$/.test(new URL(u).searchParams.get('query') ?? ''))).toBe(false)
  })

  test('a meter that rose: present at the latest scrape, its increase and no reset; traffic and prefixes from the same answer', async () => {
    const src = source(
      fakeProm([
        {
          metric: served(METER),
          values: [
            [at(1), '0'],
            [at(2), '0'],
            [at(3), '1'],
            [at(4), '2.0'],
          ],
        },
        {
          metric: served(TRAFFIC[0]!, { finished_reason: 'stop' }),
          values: [
            [at(1), '0'],
            [at(4), '2'],
          ],
        },
        upSamples(4),
      ]),
    )
    const r = await src.poll(T0, T0 + 4500)
    expect(r.ok).toBe(true)
    if (!r.ok) return
    expect(presence(r.reading)).toBe('present')
    expect(meterResets(r.reading)).toBe(0)
    expect(r.reading.prefixes).toEqual(['', 'radiance', 'vllm'])
    expect(r.reading.scrapes).toEqual({ seen: 4, up: 4, lastAt: T0 + 4000 })
    const m = r.reading.series.find((s) => s.role === 'meter')!
    expect(m).toMatchObject({ name: METER, servedModel: true })
    expect(latest(m)).toEqual({ value: 2, raw: '2.0', t: T0 + 4000 })
    expect(walk(m)).toEqual({ increase: 2, resets: 0 })
    expect(m.labels).not.toHaveProperty('__name__')
    expect(walk(r.reading.series.find((s) => s.role === 'traffic')!).increase).toBe(2)
    expect(r.reading.warnings).toEqual([])
  })

  test('a counter that went down is a reset, counted from zero', async () => {
    const src = source(
      fakeProm([
        {
          metric: served(METER),
          values: [
            [at(1), '1000'],
            [at(2), '1'],
            [at(3), '3'],
          ],
        },
        upSamples(3),
      ]),
    )
    const r = await src.poll(T0, T0 + 3000)
    expect(r.ok && meterResets(r.reading)).toBe(1)
    expect(r.ok && walk(r.reading.series.find((s) => s.role === 'meter')!).increase).toBe(3)
  })

  test('samples in the window and none in the latest successful scrape: stale, not zero', async () => {
    const src = source(fakeProm([{ metric: served(METER), values: [[at(1), '0']] }, upSamples(2)]))
    const r = await src.poll(T0, T0 + 5000)
    expect(r.ok && presence(r.reading)).toBe('stale')
    expect(r.ok && latest(r.reading.series.find((s) => s.role === 'meter')!)?.t).toBe(T0 + 1000)
  })

  test('the latest scrape failed (up == 0): not observed, neither present nor stale', async () => {
    const up = {
      metric: labels('up'),
      values: [
        [at(1), '1'],
        [at(2), '0'],
      ],
    }
    const r = await source(fakeProm([{ metric: served(METER), values: [[at(1), '4']] }, up])).poll(T0, T0 + 2000)
    expect(r.ok && presence(r.reading)).toBe('unobserved')
  })

  test.each([
    ['no scrape yet', 0, 'pending'],
    ['one scrape', 1, 'pending'],
    ['two scrapes', 2, 'absent'],
  ] as const)('no meter series after %s: %s', async (_name, scrapes, want) => {
    const src = source(fakeProm(scrapes ? [upSamples(scrapes)] : []))
    const r = await src.poll(T0, T0 + 60_000)
    expect(r.ok && presence(r.reading)).toBe(want)
  })

  test('failed scrapes (up == 0) do not count toward absent', async () => {
    const down = {
      metric: labels('up'),
      values: [
        [at(1), '0'],
        [at(2), '0'],
        [at(3), '0'],
      ],
    }
    const r = await source(fakeProm([down])).poll(T0, T0 + 3000)
    expect(r.ok && presence(r.reading)).toBe('pending')
    expect(r.ok && r.reading.scrapes).toEqual({ seen: 3, up: 0, lastAt: T0 + 3000 })
  })

  test('without `up` in the selector, absent waits two scrape intervals of the input', async () => {
    const traffic = {
      metric: served(TRAFFIC[0]!, { finished_reason: 'stop' }),
      values: [
        [at(15), '0'],
        [at(30), '0'],
      ],
    }
    const src = source(fakeProm([traffic]))
    const early = await src.poll(T0, T0 + 29_000)
    const late = await src.poll(T0, T0 + 30_000)
    expect(early.ok && presence(early.reading, { sinceMs: T0, nowMs: T0 + 29_000, scrapeIntervalMs: 15_000 })).toBe('pending')
    expect(late.ok && presence(late.reading, { sinceMs: T0, nowMs: T0 + 30_000, scrapeIntervalMs: 15_000 })).toBe('absent')
  })

  test('a selector that matches nothing never makes the meter absent', async () => {
    const r = await source(fakeProm([])).poll(T0, T0 + 3_600_000)
    expect(r.ok && presence(r.reading, { sinceMs: T0, nowMs: T0 + 3_600_000, scrapeIntervalMs: 1000 })).toBe('pending')
    expect(r.ok && r.reading).toMatchObject({ series: [], scrapes: null, targets: [] })
  })

  test('the prefix trap: the meter only under vllm: is absent, and the other prefix is shown', async () => {
    const other = served('vllm:engine_steps_held_total')
    const src = source(
      fakeProm([
        {
          metric: other,
          values: [
            [at(1), '0'],
            [at(3), '2'],
          ],
        },
        upSamples(3),
      ]),
    )
    const r = await src.poll(T0, T0 + 3000)
    expect(r.ok && presence(r.reading)).toBe('absent')
    expect(r.ok && r.reading.series.map((s) => [s.name, s.role])).toContainEqual(['vllm:engine_steps_held_total', 'meter-other-prefix'])
    expect(r.ok && r.reading.prefixes).toEqual(['', 'vllm'])
  })

  test("another model's series is kept and marked, and does not make the served meter present", async () => {
    const foreign = labels(METER, { engine: '1', model_name: 'radiance-other-70b' })
    const src = source(fakeProm([{ metric: foreign, values: [[at(3), '9']] }, upSamples(3)]))
    const r = await src.poll(T0, T0 + 3000)
    expect(r.ok && presence(r.reading)).toBe('absent')
    expect(r.ok && r.reading.series.find((s) => s.role === 'meter')!.servedModel).toBe(false)
  })

  test('a selector that takes several targets shows each instance, and each target counted from up', async () => {
    const other = { ...served(METER), instance: 'gpu-8:8000' }
    const up8 = { metric: labels('up', { instance: 'gpu-8:8000' }), values: [[at(1), '1']] }
    const r = await source(
      fakeProm([{ metric: served(METER), values: [[at(1), '1']] }, { metric: other, values: [[at(1), '1']] }, upSamples(1), up8]),
    ).poll(T0, T0 + 1000)
    expect(r.ok && r.reading.instances).toEqual(['gpu-7:8000', 'gpu-8:8000'])
    expect(r.ok && r.reading.targets).toEqual([`{instance="gpu-7:8000",job="radiance"}`, `{instance="gpu-8:8000",job="radiance"}`])
  })

  test("two targets relabelled to one label set are two targets: one up series, the targets' metadata lists each", async () => {
    const target = { instance: '127.0.0.1', job: 'radiance' }
    const up = {
      metric: { __name__: 'up', ...target },
      values: [
        [at(1), '1'],
        [at(1.5), '1'],
      ],
    }
    const metadata = [
      metaOf(target, METER),
      metaOf(target, METER),
      metaOf(target, 'process_start_time_seconds', 'gauge'),
      metaOf(target, 'process_start_time_seconds', 'gauge'),
    ]
    const r = await source(fakeProm([up], [], metadata), { match: '{instance="127.0.0.1"}' }).poll(T0, T0 + 2000)
    expect(r.ok && r.reading.instances).toEqual(['127.0.0.1'])
    expect(r.ok && r.reading.targets).toEqual(['{instance="127.0.0.1",job="radiance"}', '{instance="127.0.0.1",job="radiance"}'])
    expect(r.ok && r.reading.meterFamily).toBe('counter')
  })

  test("the targets' metadata types the meter's family, also a family declared without a sample yet", async () => {
    const r = await source(fakeProm([upSamples(2)], [], [metaOf({ instance: INSTANCE, job: 'radiance' }, METER, 'counter')])).poll(
      T0,
      T0 + 2000,
    )
    expect(r.ok && r.reading).toMatchObject({
      meterFamily: 'counter',
      metadata: 'read',
      targets: [`{instance="${INSTANCE}",job="radiance"}`],
    })
  })

  test('an API without /api/v1/targets/metadata (404): the targets are counted from up alone, said in the reading', async () => {
    const fetch: PromFetch = async (url) =>
      new URL(url).pathname === '/api/v1/targets/metadata' ? { status: 404, body: '404 page not found' } : ok('matrix', [upSamples(2)])
    const r = await source(fetch).poll(T0, T0 + 2000)
    expect(r.ok && r.reading).toMatchObject({ metadata: 'unsupported', targets: [`{instance="${INSTANCE}",job="radiance"}`] })
  })

  test('warnings of the answer (a partial response) are kept', async () => {
    const fetch: PromFetch = async (url) =>
      new URL(url).pathname === '/api/v1/targets/metadata'
        ? { status: 200, body: JSON.stringify({ status: 'success', data: [] }) }
        : {
            status: 200,
            body: JSON.stringify({
              status: 'success',
              data: { resultType: 'matrix', result: [] },
              warnings: ['remote_read: error sending request'],
            }),
          }
    const r = await source(fetch).poll(T0, T0 + 2000)
    expect(r.ok && r.reading.warnings).toEqual(['remote_read: error sending request'])
  })

  test("one target's scrapes never stand in for another's", async () => {
    const a = upSamples(3)
    const b = { metric: labels('up', { instance: 'gpu-8:8000' }), values: [[at(3), '1']] }
    const r = await source(fakeProm([a, b])).poll(T0, T0 + 3000)
    expect(r.ok && presence(r.reading)).toBe('pending')
    expect(r.ok && r.reading).toMatchObject({ scrapes: { seen: 1, up: 1, lastAt: T0 + 3000 } })
  })

  test('a hostile model id never reaches the query; it only fails to match the series', async () => {
    const matrix = [{ metric: served(METER), values: [[at(1), '5']] }]
    const urls: string[][] = [[], []]
    const plain = await source(fakeProm(matrix, urls[0]), { model: MODEL }).poll(T0, T0 + 1000)
    const hostile = await source(fakeProm(matrix, urls[1]), { model: `${MODEL}",model_name=~".*` }).poll(T0, T0 + 1000)
    expect(urls[1]).toEqual(urls[0])
    expect(plain.ok && presence(plain.reading)).toBe('present')
    expect(hostile.ok && hostile.reading.series[0]!.servedModel).toBe(false)
    expect(hostile.ok && presence(hostile.reading)).toBe('pending')
  })

  test('NaN and +Inf strings are read as such; a non-finite sample makes the increase NaN', async () => {
    const src = source(
      fakeProm([
        {
          metric: served(METER),
          values: [
            [at(1), 'NaN'],
            [at(2), '+Inf'],
          ],
        },
        upSamples(2),
      ]),
    )
    const r = await src.poll(T0, T0 + 2000)
    const m = r.ok ? r.reading.series.find((s) => s.role === 'meter')! : undefined
    expect(m && latest(m)?.value).toBe(Infinity)
    expect(m?.samples[0]?.value).toBeNaN()
    expect(m && walk(m).increase).toBeNaN()
  })
})

describe('answers the source refuses to read', () => {
  const where = 'GET http://prom.test:9090/api/v1/query?query=x'
  const matrixOf = (values: unknown) => ok('matrix', [{ metric: served(METER), values }])
  test.each([
    [
      'an error body',
      { status: 400, body: JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'parse error: unexpected "}"' }) },
      'error-response',
      /bad_data.*parse error/,
    ],
    [
      'a query timeout',
      { status: 503, body: JSON.stringify({ status: 'error', errorType: 'timeout', error: 'query timed out' }) },
      'error-response',
      /timeout/,
    ],
    ['HTML from a proxy', { status: 502, body: '<html>Bad Gateway</html>' }, 'http-status', /HTTP 502/],
    ['a login page with 200', { status: 200, body: '<!doctype html><form>' }, 'not-json', /not JSON/],
    [
      'a 500 with a success body',
      { status: 500, body: JSON.stringify({ status: 'success', data: { resultType: 'matrix', result: [] } }) },
      'http-status',
      /HTTP 500/,
    ],
    ['no status', { status: 200, body: JSON.stringify({ data: { resultType: 'matrix', result: [] } }) }, 'bad-shape', /status/],
    ['a vector where a matrix was asked', ok('vector', []), 'bad-shape', /resultType is "vector"/],
    [
      'a scalar where a matrix was asked',
      { status: 200, body: JSON.stringify({ status: 'success', data: { resultType: 'scalar', result: [1, '1'] } }) },
      'bad-shape',
      /resultType is "scalar"/,
    ],
    ['a number value', matrixOf([[at(1), 2]]), 'bad-shape', /not a Prometheus float string/],
    ['a word value', matrixOf([[at(1), 'two']]), 'bad-shape', /not a Prometheus float string/],
    ['a string time', matrixOf([['1', '2']]), 'bad-shape', /time/],
    ['a series with no name', ok('matrix', [{ metric: { instance: INSTANCE }, values: [[at(1), '2']] }]), 'bad-shape', /__name__/],
    [
      'a numeric label value',
      ok('matrix', [{ metric: { __name__: METER, engine: 0 }, values: [[at(1), '2']] }]),
      'bad-shape',
      /label "engine"/,
    ],
    [
      'the same series twice',
      ok('matrix', [
        { metric: served(METER), values: [[at(1), '2']] },
        { metric: served(METER), values: [[at(1), '3']] },
      ]),
      'bad-shape',
      /twice/,
    ],
    [
      'times going back',
      matrixOf([
        [at(2), '1'],
        [at(1), '2'],
      ]),
      'bad-shape',
      /do not rise/,
    ],
    ['values missing', ok('matrix', [{ metric: served(METER) }]), 'bad-shape', /values/],
    [
      'warnings that are not strings',
      { status: 200, body: JSON.stringify({ status: 'success', data: { resultType: 'matrix', result: [] }, warnings: [7] }) },
      'bad-shape',
      /warnings/,
    ],
    ['JSON null', { status: 200, body: 'null' }, 'bad-shape', /status/],
  ] as const)('%s', (_name, res, kind, message) => {
    const r = parseApiAnswer(res, where)
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.failure.kind).toBe(kind)
    expect(r.failure.what).toMatch(message)
    expect(r.failure.where).toBe(where)
    expect(r.failure.next.length).toBeGreaterThan(10)
    expect(r.failure.code).toMatch(/^ARMPROOF_PROM_[A-Z_]+$/)
  })

  test.each([
    ['a list of targets that is not a list', { status: 'success', data: { targets: [] } }, /not a list/],
    [
      'a target that is not labels',
      { status: 'success', data: [{ target: 'gpu-7', metric: METER, type: 'counter' }] },
      /target is not label name/,
    ],
    [
      'an entry without a type',
      { status: 'success', data: [{ target: { instance: INSTANCE }, metric: METER }] },
      /no metric name and type/,
    ],
  ])("targets' metadata: %s is refused", (_name, body, message) => {
    const r = parseTargetsMetadata({ status: 200, body: JSON.stringify(body) }, where)
    expect(r.ok).toBe(false)
    expect(r.ok || r.failure).toMatchObject({ kind: 'bad-shape', what: expect.stringMatching(message) })
  })

  test('a poll with one refused request is a failure, never a reading', async () => {
    const src = source(async (url) =>
      new URL(url).pathname === '/api/v1/query'
        ? { status: 200, body: 'oops' }
        : { status: 200, body: JSON.stringify({ status: 'success', data: [] }) },
    )
    const r = await src.poll(T0, T0 + 1000)
    expect(r).toMatchObject({ ok: false, failure: { kind: 'not-json' } })
    expect(r.ok || r.failure.where).toMatch(/^GET http:\/\/prom\.test:9090\/api\/v1\/query\?query=/)
  })

  test('Prometheus not answering is unreachable, not failed', async () => {
    const r = await source(async () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.9:9090'))).poll(T0, T0 + 1000)
    expect(r).toMatchObject({ ok: false, failure: { kind: 'unreachable', what: expect.stringMatching(/ECONNREFUSED/) } })
  })
})

describe('a hostile Prometheus (seeded fuzz)', () => {
  test('every mutated answer is either refused with a typed failure or read with only well-formed samples', async () => {
    let seed = 0x9e3779b9
    const rand = (n: number): number => {
      seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0
      return seed % n
    }
    const pick = <T>(xs: readonly T[]): T => xs[rand(xs.length)]!
    const values: unknown[] = [
      '1',
      '0',
      '2.5',
      'NaN',
      '+Inf',
      '-Inf',
      'nan',
      'Infinity',
      'inf',
      '1e',
      '',
      ' 1',
      '0x10',
      '1_0',
      '-0',
      '1e308',
      '1e309',
      3,
      null,
      {},
      [],
      true,
    ]
    const times: unknown[] = [at(1), at(2), '1800000001', null, -1, 1e300, Number.MAX_SAFE_INTEGER, {}, []]
    const mutate = (answer: { status: number; body: string }): { status: number; body: string } => {
      const json = JSON.parse(answer.body) as any
      const result = json.data.result as any[]
      switch (rand(11)) {
        case 0:
          json.status = pick(['error', 'ok', null, 'success'])
          break
        case 1:
          json.data.resultType = pick(['vector', 'matrix', 'scalar', 'string', null])
          break
        case 2:
          if (result[0]) result[0].values.push([pick(times), pick(values)])
          break
        case 3:
          if (result[0])
            result[0].metric = pick([
              {},
              { __name__: 'bad name' },
              { __name__: METER, 'bad-label': 'x' },
              { __name__: METER, model_name: 7 },
              null,
              [],
            ])
          break
        case 4:
          if (result[0]) result.push(structuredClone(result[0]))
          break
        case 5:
          json.data.result = pick([null, {}, 'x', [null], [[]]])
          break
        case 6:
          return { status: answer.status, body: answer.body.slice(0, rand(answer.body.length)) }
        case 7:
          return { status: pick([200, 204, 400, 422, 500, 503]), body: answer.body }
        case 8:
          if (result[0]) result[0].values.reverse()
          break
        case 9:
          json.warnings = pick([['partial response'], 'partial', [null], []])
          break
        default:
          break // unchanged: must read
      }
      return { status: answer.status, body: JSON.stringify(json) }
    }
    const matrix = [
      {
        metric: served(METER),
        values: [
          [at(1), '0'],
          [at(2), '2'],
        ],
      },
      upSamples(2),
    ]
    const metadata = {
      status: 200,
      body: JSON.stringify({ status: 'success', data: [metaOf({ instance: INSTANCE, job: 'radiance' }, METER)] }),
    }
    let read = 0
    let refused = 0
    for (let c = 0; c < 400; c++) {
      const fetch: PromFetch = async (url) => {
        if (new URL(url).pathname === '/api/v1/targets/metadata')
          return rand(8)
            ? metadata
            : { status: 200, body: JSON.stringify({ status: 'success', data: pick([[{}], [{ target: { instance: 7 } }], 'x', null]) }) }
        const base = ok('matrix', structuredClone(matrix))
        return rand(2) ? mutate(base) : base
      }
      const r = await source(fetch).poll(T0, T0 + 2000)
      if (!r.ok) {
        refused++
        expect(r.failure.kind, `case ${c}`).toMatch(/^(http-status|not-json|error-response|bad-shape)$/)
        continue
      }
      read++
      expect(
        r.reading.warnings.every((w) => typeof w === 'string'),
        `case ${c}`,
      ).toBe(true)
      for (const sr of r.reading.series) {
        expect(sr.name, `case ${c}`).toMatch(/^[a-zA-Z_:][a-zA-Z0-9_:]*$/)
        for (const p of sr.samples) {
          expect(p.raw, `case ${c}`).toMatch(/^(NaN|[+-]Inf|-?\d+(\.\d+)?(e[+-]?\d+)?)$/)
          expect(Number.isFinite(p.t), `case ${c}`).toBe(true)
        }
        for (let k = 1; k < sr.samples.length; k++) expect(sr.samples[k]!.t, `case ${c}`).toBeGreaterThan(sr.samples[k - 1]!.t)
      }
    }
    expect(read).toBeGreaterThan(50)
    expect(refused).toBeGreaterThan(50)
  })
})

describe('the selector', () => {
  test.each([
    ['quote', 'a"b'],
    ['backslash', 'a\\b'],
    ['newline', 'a\nb'],
    ['a selector break-out', 'x",model_name=~".*'],
    ['a trailing backslash', 'x\\'],
    ['control bytes', '\u0000\u0007\r\t\u007f'],
  ])('a label value with a %s stays one string literal', (_name, value) => {
    const text = promString(value)
    expect(text.startsWith('"') && text.endsWith('"')).toBe(true)
    expect(text.slice(1, -1)).not.toMatch(/(^|[^\\])(\\\\)*"/) // no unescaped quote inside
    expect(text).not.toMatch(/[\n\r]/)
    expect(parseMatch(`{instance=${text}}`)).toEqual({ matchers: [{ name: 'instance', op: '=', value }] })
  })

  test('round trip: any matcher values render to a selector that parses back to the same matchers (seeded)', () => {
    let seed = 0x5eed15
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) >>> 0
      return seed % n
    }
    const alphabet = [
      'a',
      'Z',
      '0',
      '"',
      '\\',
      '\n',
      '\r',
      '\t',
      '{',
      '}',
      ',',
      '=',
      '~',
      '!',
      '`',
      "'",
      ' ',
      'é',
      '🙂',
      '\u0000',
      '\u001b',
    ]
    for (let c = 0; c < 500; c++) {
      const matchers: LabelMatcher[] = Array.from({ length: 1 + rand(3) }, (_, i) => ({
        name: i === 0 ? 'instance' : `l${i}_${rand(9)}`,
        op: i === 0 ? '=' : (['=', '!=', '=~', '!~'] as const)[rand(4)]!,
        value: (i === 0 ? 'h' : '') + Array.from({ length: rand(12) }, () => alphabet[rand(alphabet.length)]).join(''),
      }))
      expect(parseMatch(renderMatchers(matchers)), `case ${c}: ${JSON.stringify(matchers)}`).toEqual({ matchers })
    }
  })

  test('the default match is the host:port of --base-url, the scheme default port spelled out', () => {
    expect(defaultMatch('http://gpu-7:8000/v1')).toEqual([{ name: 'instance', op: '=', value: 'gpu-7:8000' }])
    expect(defaultMatch('https://edge.example')).toEqual([{ name: 'instance', op: '=', value: 'edge.example:443' }])
    expect(defaultMatch('http://[::1]:8000')).toEqual([{ name: 'instance', op: '=', value: '[::1]:8000' }])
  })

  test('a user match is parsed and rendered again, not pasted', () => {
    const q = buildQueries(
      (parseMatch(`{ job = 'radiance' , instance="gpu-7:8000" ,}`) as { matchers: LabelMatcher[] }).matchers,
      METER,
      [],
      5,
    )
    expect(q.selector).toBe(
      '{__name__=~"(?:[a-zA-Z_][a-zA-Z0-9_]*:)?engine_steps_held_total|up|process_start_time_seconds",job="radiance",instance="gpu-7:8000"}',
    )
  })

  test.each([
    ['empty', '{}', /empty selector/],
    ['no braces', 'instance="x"', /in braces/],
    ['a metric name', 'up{instance="x"}', /in braces/],
    ['__name__', '{__name__="x",instance="y"}', /__name__/],
    ['only a regex', '{instance=~".*"}', /label="value"/],
    ['unclosed', '{instance="x}', /not closed/],
    ['two matchers without a comma', '{a="1" b="2"}', /comma/],
    ['a raw newline', '{instance="a\nb"}', /raw newline/],
    ['an unknown escape', '{instance="a\\qb"}', /escape/],
    ['a bad label name', '{1a="x"}', /label name/],
    ['PromQL after the braces', '{instance="x"} or vector(1)', /in braces/],
  ])('bad --prometheus-match: %s', (_name, text, reason) => {
    const r = parseMatch(text)
    expect('error' in r && r.error).toMatch(reason)
    expect(() => source(fakeProm([], []), { match: text })).toThrow(PromSourceError)
  })

  test.each([
    ['a non-URL Prometheus', { prometheusUrl: 'prom:9090' }, /not an http\(s\) URL/],
    ['a hostile meter name', { meterName: 'x"} or vector(1) or {a="' }, /not a Prometheus metric name/],
    ['a non-URL base URL without a match', { baseUrl: 'gpu-7' }, /no default --prometheus-match/],
    ['credentials in the Prometheus URL', { prometheusUrl: 'http://ops:hunter2@prom.test:9090' }, /carries credentials/],
    ['a non-http URL with credentials', { prometheusUrl: 'ftp://ops:hunter2@prom.test' }, /not an http\(s\) URL/],
    ['credentials in a Prometheus URL with a space', { prometheusUrl: 'http://ops:hunter2 x@prom.test:9090' }, /carries credentials/],
  ])('%s is a bad-input error before any query', (_name, opts, message) => {
    const seen: string[] = []
    try {
      source(fakeProm([], [], seen), opts)
      expect.unreachable()
    } catch (error) {
      expect(error).toBeInstanceOf(PromSourceError)
      expect((error as PromSourceError).failure).toMatchObject({ kind: 'bad-input', what: expect.stringMatching(message) })
      expect(JSON.stringify((error as PromSourceError).failure) + (error as Error).message).not.toContain('hunter2')
    }
    expect(seen).toEqual([])
  })
})

describe('counters and config', () => {
  test.each([
    [[0, 1, 2], 0, 2],
    [[1000, 0, 2], 1, 2],
    [[5, 5, 5], 0, 0],
    [[3, 1, 0, 4], 2, 5],
  ])('raw samples %j: %i resets, increase %d', (values, resets, increase) => {
    expect(counterWalk(values.map((v, i) => ({ t: i, value: v, raw: String(v) })))).toEqual({ resets, increase })
  })

  test('durations', () => {
    expect([
      parsePromDuration('1s'),
      parsePromDuration('1m30s'),
      parsePromDuration('250ms'),
      parsePromDuration('1h'),
      parsePromDuration('1x'),
      parsePromDuration(''),
    ]).toEqual([1000, 90_000, 250, 3_600_000, undefined, undefined])
  })

  test("the scrape interval of a job from Prometheus' own config dump", () => {
    const yaml = [
      'global:',
      '  scrape_interval: 15s',
      '  scrape_timeout: 10s',
      '  evaluation_interval: 15s',
      'scrape_configs:',
      '- job_name: node',
      '  honor_timestamps: true',
      '  scrape_interval: 15s',
      '- job_name: radiance',
      '  scrape_interval: 1s',
      '  scrape_timeout: 1s',
      '  static_configs:',
      '  - targets:',
      '    - 127.0.0.1:8000',
      '',
    ].join('\n')
    expect(scrapeIntervalFromConfig(yaml, 'radiance')).toBe(1000)
    expect(scrapeIntervalFromConfig(yaml, 'node')).toBe(15_000)
    expect(scrapeIntervalFromConfig(yaml)).toBe(15_000)
  })
})
