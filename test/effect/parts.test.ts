// The effect's parts that need no Prometheus: its options (every problem before contact, env twins,
// .env), the windows and their query sizes, the coverage of a window (gaps, the arm's restart,
// samples Prometheus 2 returns twice), the series turned into blocks, the vault line's place.
import { readFileSync } from 'node:fs'
import { describe, expect, test, vi } from 'vitest'
import { freePort } from '../../engine/launch.ts'
import { effect } from '../../helpers/effect/command.ts'
import { LOG_EVERY_MS, progress } from '../../helpers/effect/progress.ts'
import { parseEffectArgs } from '../../helpers/effect/config.ts'
import { coverage, lastRestart } from '../../helpers/effect/coverage.ts'
import { EFFECT_OPTIONS } from '../../helpers/effect/options.ts'
import { rangeUrl } from '../../helpers/effect/query.ts'
import { increaseQuery, slotsQuery } from '../../helpers/effect/read.ts'
import { histogramBlocks } from '../../helpers/effect/series.ts'
import { insertEffect } from '../../helpers/effect/vault.ts'
import { DAY_MS, HOUR_MS, MAX_POINTS, planWindows, windowOf } from '../../helpers/effect/windows.ts'
import type { Matrix } from '../../helpers/effect/query.ts'
import { metricsFor, type MetricSpec } from '../../helpers/effect/metrics.ts'
import { builtinProfile, profileFromText } from '../../helpers/profiles/load.ts'

const ARMED = [
  '--svc',
  'llm-7',
  '--knob',
  'PREFILL_INTERLEAVE',
  '--armed-at',
  '2026-03-03T09:00:00Z',
  '--prometheus-url',
  'http://prometheus:9090',
]
const parse = (argv: string[], env: Record<string, string> = {}, dotenv?: string) => parseEffectArgs(argv, env, dotenv, '/')

describe('effect options', () => {
  test('a flag beats env, env beats .env; every option has its EFFECT_ twin, documented in .env.example', () => {
    const viaEnv = parse(
      [],
      { EFFECT_SVC: 'llm-7', EFFECT_KNOB: 'prefill-interleave', EFFECT_ARMED_AT: '2026-03-03T09:00:00Z', EFFECT_AFTER: '2h' },
      'EFFECT_AFTER=3h\nEFFECT_BEFORE=12h\n',
    )
    expect(viaEnv.ok && viaEnv.ask).toMatchObject({
      svc: 'llm-7',
      knob: 'PREFILL_INTERLEAVE',
      afterMs: 2 * HOUR_MS,
      beforeMs: 12 * HOUR_MS,
      armedAtMs: Date.parse('2026-03-03T09:00:00Z'),
    })
    const flag = parse([...ARMED, '--after', '90m'], { EFFECT_AFTER: '2h' })
    expect(flag.ok && flag.ask.afterMs).toBe(90 * 60_000)
    const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8')
    for (const o of EFFECT_OPTIONS) {
      expect(o.env).toBe(`EFFECT_${o.flag.toUpperCase().replaceAll('-', '_')}`)
      expect(example, o.env).toMatch(new RegExp(`^#?\\s*${o.env}=`, 'm'))
    }
  })

  test('every problem at once, one line each, before anything is contacted', () => {
    const r = parse([
      '--knob',
      'NOPE',
      '--armed-at',
      'yesterday',
      '--baseline',
      'weekly',
      '--before',
      '5m',
      '--metrics',
      'ttft,latency',
      '--threshold',
      'ttft=ten',
      '--min-count',
      '0',
      '--prometheus-url',
      'http://u:p@prom:9090',
      '--prometheus-match',
      '{}',
      '--vault',
      'v',
      '--stray',
    ])
    expect(r.ok).toBe(false)
    const text = r.ok ? '' : r.problems.join('\n')
    for (const bit of [
      '"NOPE" is not a knob',
      'not an RFC 3339 time',
      '"weekly" is not one of like-hours, before, yesterday, last-week',
      'at least 10m',
      '"latency" not a metric id',
      'is not id=N%',
      'whole number ≥ 1',
      'must not carry credentials',
      'empty selector',
      '--vault needs --report',
      'unknown option "--stray"',
      '--svc (or EFFECT_SVC) is required without --report',
    ])
      expect(text).toContain(bit)
    expect(text).not.toContain('u:p')
  })

  test('thresholds are shares per metric id; a bare number is a share, N% a percentage', () => {
    const r = parse([...ARMED, '--threshold', 'ttft=15%, preemptions=0.5'])
    expect(r.ok && r.ask.thresholds).toEqual({ ttft: 0.15, preemptions: 0.5 })
  })
})

describe('the windows', () => {
  const now = Date.parse('2026-03-04T00:00:00Z')
  const arm = Date.parse('2026-03-03T09:00:00Z')

  test('before ends at the arm, after starts there; like hours try a week before, then a day before', () => {
    const r = planWindows({ armMs: arm, beforeMs: 24 * HOUR_MS, afterMs: 6 * HOUR_MS, baseline: 'like-hours', nowMs: now })
    expect('plan' in r && r.plan).toMatchObject({
      before: { endMs: arm, startMs: arm - DAY_MS, chunks: 24, chunkMs: HOUR_MS },
      after: { startMs: arm, endMs: arm + 6 * HOUR_MS, chunks: 6 },
      candidates: ['last-week', 'yesterday'],
    })
  })

  test('an after window not over yet, or a baseline that would reach past the arm, is refused in one line', () => {
    const future = planWindows({ armMs: arm, beforeMs: DAY_MS, afterMs: 20 * HOUR_MS, baseline: 'like-hours', nowMs: now })
    expect('problem' in future && future.problem).toMatch(/ends at 2026-03-04T05:00:00Z, 5m 00s|ends at 2026-03-04T05:00:00Z/)
    expect('problem' in future && future.problem).toContain('--after 15h')
    const long = planWindows({ armMs: arm - 3 * DAY_MS, beforeMs: DAY_MS, afterMs: 2 * DAY_MS, baseline: 'yesterday', nowMs: now })
    expect('problem' in long && long.problem).toContain('longer than a day')
  })

  test("short windows still have six chunks; the slot keeps every query under Prometheus' 11,000 points", () => {
    expect(windowOf('after', 0, 30 * 60_000)).toMatchObject({ chunks: 6, chunkMs: 5 * 60_000 })
    for (const len of [30 * 60_000, 6 * HOUR_MS, 7 * DAY_MS, 90 * DAY_MS]) {
      const w = windowOf('after', 0, len)
      for (const q of [
        increaseQuery([{ name: 'instance', op: '=', value: 'x' }], { name: 'm', kind: 'histogram' }, w),
        slotsQuery([{ name: 'instance', op: '=', value: 'x' }], { name: 'm', kind: 'counter' }, w),
      ]) {
        expect((q.endMs - q.startMs) / q.stepMs + 1).toBeLessThanOrEqual(MAX_POINTS + 1)
        expect(q.expr).not.toContain('vector(0)')
      }
    }
    expect(() => rangeUrl('http://p:9090', { expr: 'x', startMs: 0, endMs: 12_000_000, stepMs: 1000 })).toThrow(/11,000/)
  })

  test("the increase query reads buckets over whole chunks; a histogram's samples are read from its _count", () => {
    const w = windowOf('after', 0, 6 * HOUR_MS)
    const m = [{ name: 'instance', op: '=' as const, value: 'gpu-7:8000' }]
    expect(increaseQuery(m, { name: 'vllm:time_to_first_token_seconds', kind: 'histogram' }, w).expr).toBe(
      'increase(vllm:time_to_first_token_seconds_bucket{instance="gpu-7:8000"}[3600s])',
    )
    expect(slotsQuery(m, { name: 'vllm:request_success_total', kind: 'counter', match: 'finished_reason!="abort"' }, w).expr).toBe(
      'last_over_time(vllm:request_success_total{instance="gpu-7:8000",finished_reason!="abort"}[3s])',
    )
  })
})

const series = (times: number[], values: number[], metric: Record<string, string> = { instance: 'x' }): Matrix => [
  { metric, values: times.map((t, i) => ({ t, value: values[i]!, raw: String(values[i]) })) },
]
const MIN = 60_000

describe('the coverage of a window', () => {
  const w = { ...windowOf('after', 0, 6 * HOUR_MS) }
  const every = (from: number, to: number, step: number) =>
    Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => from + i * step)

  test('a gap of more than five scrape intervals is found; Prometheus 2 returning an edge sample twice is one sample', () => {
    const times = [...every(MIN, 2 * HOUR_MS, MIN), ...every(3 * HOUR_MS, 6 * HOUR_MS, MIN)]
    const twice = times.flatMap((t) => [t, t + w.slotMs])
    const values = twice.map((t) => Math.floor(t / MIN))
    const c = coverage(series(twice, values), w, null)
    expect(c.intervalMs).toBe(MIN)
    expect(c.gaps).toHaveLength(1)
    expect(c.gaps[0]).toMatchObject({ fromMs: 2 * HOUR_MS, toMs: 3 * HOUR_MS - w.slotMs, reset: false, arm: false })
  })

  test("the arm's restart (a gap near the arm that ends in a reset, or an engine that comes up late) is accounted for; a reset far from the arm is only counted", () => {
    const times = [...every(MIN, 5 * MIN, MIN), ...every(30 * MIN, 6 * HOUR_MS, MIN)]
    const values = times.map((t) => (t < 30 * MIN ? 1000 + t / MIN : (t - 30 * MIN) / MIN))
    expect(coverage(series(times, values), w, 0).gaps).toEqual([expect.objectContaining({ reset: true, arm: true })])
    expect(coverage(series(times, values), w, null).gaps).toEqual([expect.objectContaining({ arm: false })])
    const late = every(12 * MIN, 6 * HOUR_MS, MIN)
    expect(
      coverage(
        series(
          late,
          late.map((t) => t / MIN),
        ),
        w,
        0,
      ).gaps,
    ).toEqual([expect.objectContaining({ fromMs: 0, arm: true })])
    const tooLate = every(40 * MIN, 6 * HOUR_MS, MIN)
    expect(
      coverage(
        series(
          tooLate,
          tooLate.map((t) => t / MIN),
        ),
        w,
        0,
      ).gaps,
    ).toEqual([expect.objectContaining({ arm: false })])
    const flat = every(MIN, 6 * HOUR_MS, MIN)
    const c = coverage(
      series(
        flat,
        flat.map((t) => (t < 3 * HOUR_MS ? t / MIN : t / MIN - 180)),
      ),
      w,
      0,
    )
    expect(c).toMatchObject({ resets: 1, gaps: [] })
  })

  test('the restart before a proof is the end of the last gap or the last reset', () => {
    const w30 = windowOf('before', 0, 30 * MIN)
    const times = [...every(MIN, 5 * MIN, MIN), ...every(20 * MIN, 30 * MIN, MIN)]
    expect(
      lastRestart(
        series(
          times,
          times.map((t) => (t < 10 * MIN ? 500 : t / MIN)),
        ),
        w30,
      ),
    ).toBe(20 * MIN - w30.slotMs)
    const steady = every(MIN, 30 * MIN, MIN)
    expect(
      lastRestart(
        series(
          steady,
          steady.map((t) => t),
        ),
        w30,
      ),
    ).toBeNull()
  })
})

describe('bucket increases into blocks', () => {
  const w = windowOf('after', 0, 6 * HOUR_MS)
  const at = (i: number) => (i + 1) * w.chunkMs
  const bucket = (le: string, per: number[]) => ({
    metric: { instance: 'x', le },
    values: per.map((v, i) => ({ t: at(i), value: v, raw: String(v) })),
  })

  test('cumulative increases become counts per bucket; "1" and "1.0" are one edge', () => {
    const hb = histogramBlocks(
      [bucket('0.5', [1, 1, 1, 1, 1, 1]), bucket('1.0', [3, 3, 3, 3, 3, 3]), bucket('+Inf', [4, 4, 4, 4, 4, 4])],
      w,
    )
    expect(hb.edges).toEqual([0.5, 1])
    expect(hb.blocks[0]).toEqual([1, 2, 1])
    expect(hb.problems).toEqual([])
  })

  test('edges that change inside a window, and buckets that do not count together, are problems', () => {
    const changed = histogramBlocks(
      [
        bucket('0.5', [1, 1, 1]),
        { metric: { instance: 'x', le: '0.7' }, values: [3, 4, 5].map((i) => ({ t: at(i), value: 1, raw: '1' })) },
        bucket('+Inf', [4, 4, 4, 4, 4, 4]),
      ],
      w,
    )
    expect(changed.problems.join(' ')).toContain('the bucket edges change inside the window')
    const broken = histogramBlocks([bucket('0.5', [50, 1, 1, 1, 1, 1]), bucket('+Inf', [4, 4, 4, 4, 4, 4])], w)
    expect(broken.problems.join(' ')).toContain('not cumulative')
    expect(histogramBlocks([bucket('0.5', [1, 1, 1, 1, 1, 1])], w).problems.join(' ')).toContain('no le="+Inf" bucket')
  })
})

describe("the vault line's place", () => {
  const marker = '<!-- armproof:llm-7:PREFILL_INTERLEAVE:2026-03-03T09:31:05.120Z -->'
  test('under the entry and the lines indented under it, before the next entry; the page keeps its line ending', () => {
    const page = [
      '## Knob log',
      '',
      `- 2026-03-03 · PREFILL_INTERLEAVE 0 → 1 · … ${marker}`,
      '  rollback: `PREFILL_INTERLEAVE=0` then redeploy `--service llm-7`',
      '- 2026-03-04 · another entry',
      '',
    ].join('\r\n')
    const next = insertEffect(page, marker, '  effect: worse')
    expect(next.split('\r\n')).toEqual([
      '## Knob log',
      '',
      `- 2026-03-03 · PREFILL_INTERLEAVE 0 → 1 · … ${marker}`,
      '  rollback: `PREFILL_INTERLEAVE=0` then redeploy `--service llm-7`',
      '  effect: worse',
      '- 2026-03-04 · another entry',
      '',
    ])
    expect(insertEffect(`- x ${marker}\n  rollback: y`, marker, '  effect: z')).toBe(`- x ${marker}\n  rollback: y\n  effect: z`)
  })
})

describe('the command before and at contact', () => {
  const run = async (argv: string[]) => {
    let out = ''
    let err = ''
    const code = await effect({
      rawArgs: argv,
      env: { VERIFY_NO_DOTENV: '1' },
      cwd: '/',
      out: { write: (s: string) => (out += s) },
      err: { write: (s: string) => (err += s) },
    })
    return { code, out, err }
  }

  test('Prometheus that does not answer is inconclusive (exit 3), with where and what next', async () => {
    const port = await freePort()
    const r = await run([
      '--svc',
      'llm-7',
      '--knob',
      'PREFILL_INTERLEAVE',
      '--armed-at',
      '2025-03-04T09:00:00Z',
      '--prometheus-url',
      `http://127.0.0.1:${port}`,
      '--base-url',
      'http://gpu-7:8000',
    ])
    expect(r.code).toBe(3)
    expect(r.err).toMatch(/Prometheus did not answer: connection refused at http:\/\/127\.0\.0\.1:\d+\/api\/v1\/query_range\?query=/)
    expect(r.err).toContain('next: check --prometheus-url is reachable from here')
  })

  test('an after window that is not over yet is refused before contact (exit 2), with the --after that would do', async () => {
    const soon = new Date(Date.now() - 2 * HOUR_MS).toISOString()
    const r = await run([
      '--svc',
      'llm-7',
      '--knob',
      'PREFILL_INTERLEAVE',
      '--armed-at',
      soon,
      '--prometheus-url',
      'http://127.0.0.1:9',
      '--base-url',
      'http://gpu-7:8000',
    ])
    expect(r.code).toBe(2)
    expect(r.err).toMatch(/the after window ends at .*; judge it after that, or pass a shorter --after \(e\.g\. --after (1h59m|2h)\)/)
  })

  test('--help lists every option with its env twin; without a report the arm needs --svc, --knob and --armed-at', async () => {
    const help = await run(['--help'])
    expect(help.code).toBe(0)
    for (const o of EFFECT_OPTIONS) expect(help.out).toContain(`env ${o.env};`)
    const none = await run(['--prometheus-url', 'http://p:9090'])
    expect(none.code).toBe(2)
    expect(none.err).toContain('--armed-at (or EFFECT_ARMED_AT) is required without --report')
  })

  test('progress in a log: a line when the queries start, and one at least every 15 s until they are answered', () => {
    vi.useFakeTimers()
    try {
      let text = ''
      const p = progress({ write: (s: string) => (text += s) }, false, 'judging 9 metrics')
      p.update({ done: 3, total: 66, what: 'vllm:time_to_first_token_seconds after' })
      vi.advanceTimersByTime(LOG_EVERY_MS)
      vi.advanceTimersByTime(LOG_EVERY_MS)
      p.done()
      vi.advanceTimersByTime(5 * LOG_EVERY_MS)
      expect(LOG_EVERY_MS).toBeLessThanOrEqual(15_000)
      expect(text.split('\n').filter(Boolean)).toEqual([
        'armproof effect: judging 9 metrics',
        expect.stringMatching(
          /^armproof effect: 3 of 66 range queries answered after \d+s \(last: vllm:time_to_first_token_seconds after\)$/,
        ),
        expect.stringMatching(/^armproof effect: 3 of 66/),
      ])
    } finally {
      vi.useRealTimers()
    }
  })
})

describe('restarts besides the arm', () => {
  test('one or two are counted as increase() counts them; more cannot be accounted for: inconclusive', async () => {
    const { evaluateMetric } = await import('../../helpers/effect/evaluate.ts')
    const { JUDGE_DEFAULTS } = await import('../../helpers/effect/judge.ts')
    const w = windowOf('after', 0, 6 * HOUR_MS)
    const every = Array.from({ length: 360 }, (_, i) => (i + 1) * MIN)
    // A counter rising one a minute, back to zero at each restart.
    const slots = (resetsAt: number[]) =>
      series(
        every,
        every.map((t) => (t - Math.max(0, ...resetsAt.filter((r) => t >= r))) / MIN),
      )
    const spec = {
      id: 'requests',
      title: 'requests per second',
      kind: 'ratio' as const,
      numerator: [{ family: { name: 'vllm:request_success_total', kind: 'counter' as const }, sign: 1 as const }],
      denominator: 'seconds' as const,
      direction: 'none' as const,
      threshold: 0.2,
      floor: 0,
      unit: '/s',
    }
    const run = (resetsAt: number[]) =>
      evaluateMetric(spec, {
        windows: { before: w, after: w, baseline: w },
        baselineKind: 'before',
        armMs: -DAY_MS,
        selectorOf: (f) => f.name,
        options: JUDGE_DEFAULTS,
        required: () => false,
        data: () => ({
          increase: [
            {
              metric: { instance: 'x' },
              values: Array.from({ length: 6 }, (_, i) => ({ t: (i + 1) * HOUR_MS, value: 3600, raw: '3600' })),
            },
          ],
          slots: slots(resetsAt),
        }),
      })
    expect(run([2 * HOUR_MS]).notes.join(' ')).toContain('1 restart(s) of the engine in the baseline window')
    const many = run([HOUR_MS, 2 * HOUR_MS, 3 * HOUR_MS])
    expect(many.verdict).toBe('inconclusive')
    expect(many.reason).toContain('reset 3 times in the baseline window: the engine restarted again and again')
  })
})

describe("every engine's metrics, from its profile", () => {
  /** `# TYPE name type` of a real build's /metrics page, by name. */
  const types = (path: string) =>
    new Map(
      [...readFileSync(new URL(`../../fixtures/real/${path}`, import.meta.url), 'utf8').matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [
        m[1]!,
        m[2]!,
      ]),
    )
  const served = (metric: MetricSpec) =>
    metric.kind === 'histogram'
      ? [[metric.family.name, 'histogram'] as const]
      : [...metric.numerator, ...(metric.denominator === 'seconds' ? [] : metric.denominator)].map(
          (t) => [t.family.name, 'counter'] as const,
        )

  test('vLLM: every series the effect reads is one the real build serves, of that type (fixtures/real/vllm/9aaf83ef5)', () => {
    const page = types('vllm/9aaf83ef5/live/metrics.txt')
    const vllm = builtinProfile('vllm')
    const { specs, notJudged } = metricsFor(vllm.engine, vllm.knobs.get('ENABLE_PREFIX_CACHING')!.spec)
    expect(specs.map((m) => m.id)).toEqual(['ttft', 'itl', 'e2e', 'requests', 'tokens', 'preemptions', 'meter'])
    expect(notJudged).toEqual([])
    for (const m of specs) for (const [name, type] of served(m)) expect(page.get(name), `${m.id}: ${name}`).toBe(type)
    // the aborted requests are left out by the label the real build puts on them
    const text = readFileSync(new URL('../../fixtures/real/vllm/9aaf83ef5/live/metrics.txt', import.meta.url), 'utf8')
    expect(text).toContain('vllm:request_success_total{engine="0",finished_reason="abort"')
    expect(specs.find((m) => m.id === 'requests')).toMatchObject({ numerator: [{ family: { match: 'finished_reason!="abort"' } }] })
    // the knob's meter per prompt token (vLLM counts no engine steps)
    expect(specs.find((m) => m.id === 'meter')).toMatchObject({ title: 'prefix_cache_hits per prompt token', unit: '/prompt-token' })
  })

  test('llama.cpp: no histograms, no request counter: seconds per generated and per prompt token from the counters the real build serves (de3ff81), and what it cannot be judged by', () => {
    const page = types('llama.cpp/de3ff81/metrics.txt')
    const llama = builtinProfile('llama.cpp')
    const { specs, notJudged } = metricsFor(llama.engine, llama.knobs.get('CACHE_PROMPT')!.spec)
    expect(specs.map((m) => m.id)).toEqual(['tokens', 'token-time', 'prompt-time', 'meter'])
    for (const m of specs) for (const [name, type] of served(m)) expect(page.get(name), `${m.id}: ${name}`).toBe(type)
    expect(notJudged).toEqual([
      { id: 'ttft', why: 'llama.cpp exports no time to first token histogram' },
      { id: 'itl', why: 'llama.cpp exports no inter-token latency histogram' },
      { id: 'e2e', why: 'llama.cpp exports no end-to-end latency histogram' },
      { id: 'requests', why: 'llama.cpp exports no request counter' },
      { id: 'preemptions', why: 'llama.cpp exports no request counter' },
    ])
    expect(specs.find((m) => m.id === 'token-time')).toMatchObject({ direction: 'higher-worse', unit: 's/token' })
  })

  test("SGLang reads sglang: names, radiance vLLM's latency and its own cadence; no engine is read by another's names", () => {
    const sglang = metricsFor(builtinProfile('sglang').engine, undefined).specs
    expect(sglang.map((m) => m.id)).toEqual(['ttft', 'itl', 'e2e', 'requests', 'tokens', 'preemptions'])
    for (const m of sglang) for (const [name] of served(m)) expect(name, m.id).toMatch(/^sglang:/)
    const radiance = builtinProfile('radiance')
    const r = metricsFor(radiance.engine, radiance.knobs.get('PREFILL_INTERLEAVE')!.spec).specs
    expect(r.map((m) => m.id)).toEqual(['ttft', 'itl', 'e2e', 'requests', 'tokens', 'preemptions', 'decode-step', 'mixed-step', 'meter'])
    expect(r.find((m) => m.id === 'meter')).toMatchObject({ title: 'engine_steps_held per step' })
  })

  test('--engine is read as verify reads it; a knob of another engine without it is refused naming --engine', () => {
    const vllm = parse(['--svc', 'x', '--knob', 'max-num-seqs', '--armed-at', '2026-03-03T09:00:00Z', '--engine', 'vllm'])
    expect(vllm.ok && [vllm.ask.knob, vllm.ask.profile.engine.name]).toEqual(['MAX_NUM_SEQS', 'vllm'])
    const without = parse(['--svc', 'x', '--knob', 'MAX_NUM_SEQS', '--armed-at', '2026-03-03T09:00:00Z'])
    expect(without.ok).toBe(false)
    expect(without.ok ? '' : without.problems.join('\n')).toContain('is not a knob of the radiance profile (PREFILL_INTERLEAVE')
    expect(without.ok ? '' : without.problems.join('\n')).toContain("another engine's knob needs --engine")
    const unknown = parse([...ARMED, '--engine', 'tgi'])
    expect(unknown.ok ? '' : unknown.problems.join('\n')).toContain(
      '"tgi" is neither a built-in profile (radiance, vllm, sglang, llama.cpp) nor a profile file',
    )
  })
})

describe("a profile file's effect names", () => {
  test('are checked as the rest of a profile: metric names, and label matchers for requests-match', () => {
    const base = readFileSync(new URL('../../helpers/profiles/vllm.yaml', import.meta.url), 'utf8')
    const bad = base
      .replace(`requests-match: 'finished_reason!="abort"'`, `requests-match: 'finished_reason!=abort'`)
      .replace(`ttft: 'vllm:time_to_first_token_seconds'`, `ttft: 'time to first token'`)
    const loaded = profileFromText(bad, 'mine.yaml')
    expect('problems' in loaded && loaded.problems.map((p) => `${p.key}: ${p.message}`)).toEqual([
      expect.stringMatching(/^metrics\.effect\.ttft: .*a metric name/),
      expect.stringMatching(/^metrics\.effect\.requests-match: .*label matchers/),
    ])
    const good = profileFromText(base, 'mine.yaml')
    expect('engine' in good && good.engine.metrics.effect).toMatchObject({
      requestsMatch: 'finished_reason!="abort"',
      preemptions: 'vllm:num_preemptions_total',
    })
  })
})
