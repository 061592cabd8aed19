// The effect's scenarios as engine traffic, one Prometheus target (instance) each, all in one
// OpenMetrics file for `promtool tsdb create-blocks-from openmetrics`: what radiance would have
// exported, scrape by scrape, for 35 hours around one arm at 06:00 UTC on a Tuesday (in 2025: the
// after window is long over on any machine that runs this). Every scenario has the daily pattern
// inside its windows (the busy hours from 09:00 four times busier, TTFT's median 120 ms in the quiet
// hours and 400 ms in the busy ones: the six hours after the arm climb from quiet to busy) and a
// wobble of each hour of each day of its own; each changes one thing at the arm.
import { prng, seedOf } from '../support/prng.ts'
import { E2E_EDGES, ITL_EDGES, TTFT_EDGES, bucketCounts, busy, gaussian, poisson } from './traffic.ts'

export const ARM = Date.parse('2025-03-04T06:00:00Z')
export const HOUR = 3_600_000
export const MINUTE = 60_000
export const DATA_FROM = ARM - 25 * HOUR
export const DATA_TO = ARM + 10 * HOUR
/** The scrape interval of the generated data. */
export const SCRAPE_MS = 300_000
export const MODEL = 'qwen3'

type Latency = 'ttft' | 'itl' | 'e2e'
export type FamilyName = Latency | 'requests' | 'tokens' | 'preemptions' | 'steps' | 'llamacpp'

export interface Scenario {
  /** The instance label: `<name>:8000`. */
  name: string
  families: readonly FamilyName[]
  /** Requests per second in the busy hours (4: about 65,000 requests in the six hours after the arm). */
  rate: number
  /** Families the engine starts exporting only after the arm (a new build). */
  newAfter?: readonly FamilyName[]
  /** The latency's median multiplier after the arm (1: unchanged). */
  after?: Partial<Record<Latency, number>>
  /** The TTFT bucket edges after the arm (an engine that changed its buckets). */
  ttftEdgesAfter?: readonly number[]
  /** Spans without any scrape. */
  down?: ReadonlyArray<readonly [number, number]>
  /** The engine restarts here: its counters start again from zero. */
  restartAt?: number
  /** Held steps per step after the arm (PREFILL_INTERLEAVE's meter; 0 before). */
  heldAfter?: number
  /** Mixed step time multiplier after the arm. */
  mixedAfter?: number
  /** llama.cpp's seconds per generated token, multiplied after the arm. */
  tokenTimeAfter?: number
}

/** Each latency's median in the quiet hours, and how many times that in the busy ones. */
const LAT: Record<Latency, { edges: readonly number[]; median: number; busy: number; sigma: number; perRequest: number }> = {
  ttft: { edges: TTFT_EDGES, median: 0.12, busy: 400 / 120, sigma: 0.7, perRequest: 1 },
  itl: { edges: ITL_EDGES, median: 0.03, busy: 1.8, sigma: 0.5, perRequest: 40 },
  e2e: { edges: E2E_EDGES, median: 3, busy: 1.8, sigma: 0.6, perRequest: 1 },
}
/** How much like hours of two days differ (log-normal sd): latency, requests, step time. */
const DAY_TO_DAY = { latency: 0.02, rate: 0.03, step: 0.02 }
const NAME: Record<Latency, string> = {
  ttft: 'vllm:time_to_first_token_seconds',
  itl: 'vllm:inter_token_latency_seconds',
  e2e: 'vllm:e2e_request_latency_seconds',
}

/** Python's float text for an edge (prometheus_client writes 1.0, not 1). */
const le = (e: number) => (Number.isInteger(e) ? `${e}.0` : String(e))

interface Series {
  labels: string
  /** The samples as numbers, made text only at the end: 125k lines kept as strings until then cost more in the GC than making them. */
  values: number[]
  times: number[]
}

/** The OpenMetrics text of every scenario (families contiguous, as the format requires). */
export function openMetrics(scenarios: readonly Scenario[]): string {
  // Found by name and labels, each the same string every scrape (its hash computed once); listed
  // in the order of their first sample.
  const families = new Map<string, { type: string; series: Series[]; byName: Map<string, Map<string, Series>> }>()
  const sample = (family: string, type: string, name: string, labels: string, value: number, t: number) => {
    let f = families.get(family)
    if (!f) families.set(family, (f = { type, series: [], byName: new Map() }))
    let named = f.byName.get(name)
    if (!named) f.byName.set(name, (named = new Map()))
    let s = named.get(labels)
    if (!s) {
      named.set(labels, (s = { labels: `${name}${labels}`, values: [], times: [] }))
      f.series.push(s)
    }
    s.values.push(value)
    s.times.push(t)
  }
  for (const sc of scenarios) generate(sc, sample)
  const out: string[] = []
  for (const [family, f] of families) {
    out.push(`# TYPE ${family} ${f.type}`)
    for (const s of f.series)
      out.push(
        s.values.map((v, i) => `${s.labels} ${Number.isInteger(v) ? v : v.toFixed(6)} ${(s.times[i]! / 1000).toFixed(3)}`).join('\n'),
      )
  }
  out.push('# EOF')
  return `${out.join('\n')}\n`
}

type Sink = (family: string, type: string, name: string, labels: string, value: number, t: number) => void

function generate(sc: Scenario, sample: Sink): void {
  const random = prng(seedOf(sc.name))
  const hourly = new Map<string, number>()
  const wobble = (what: string, t: number, sd: number) => {
    const key = `${what}:${Math.floor(t / HOUR)}`
    if (!hourly.has(key)) hourly.set(key, Math.exp(sd * gaussian(prng(seedOf(`${sc.name}:${key}`)))))
    return hourly.get(key)!
  }
  const base = `instance="${sc.name}:8000",model_name="${MODEL}"`
  const plain = `{${base}}`
  // per latency and bucket layout: the running counts' keys and the series' names and labels, made once
  const layouts = { ttft: new Map(), itl: new Map(), e2e: new Map() } as Record<
    Latency,
    Map<readonly number[], { keys: string[]; labels: string[] }>
  >
  const layoutOf = (kind: Latency, edges: readonly number[]) => {
    let l = layouts[kind].get(edges)
    if (!l)
      layouts[kind].set(edges, (l = { keys: edges.map((e) => `${kind}:${le(e)}`), labels: edges.map((e) => `{${base},le="${le(e)}"}`) }))
    return l
  }
  const names = Object.fromEntries(
    (['ttft', 'itl', 'e2e'] as const).map((k) => [k, { bucket: `${NAME[k]}_bucket`, count: `${NAME[k]}_count`, sum: `${NAME[k]}_sum` }]),
  ) as Record<Latency, { bucket: string; count: string; sum: string }>
  const inf = `{${base},le="+Inf"}`
  const reasons = ['stop', 'length', 'abort'].map((r) => ({ key: `req:${r}`, labels: `{${base},finished_reason="${r}"}` }))
  const has = (f: FamilyName) => sc.families.includes(f)
  const cum: Record<string, number> = {}
  const add = (k: string, v: number) => (cum[k] = (cum[k] ?? 0) + v)
  for (let t = DATA_FROM; t <= DATA_TO; t += SCRAPE_MS) {
    if (sc.restartAt !== undefined && t - SCRAPE_MS < sc.restartAt && t >= sc.restartAt) for (const k of Object.keys(cum)) cum[k] = 0
    const isDown = (x: number) => (sc.down ?? []).some(([a, b]) => x >= a && x < b)
    const armed = t > ARM
    const load = busy((((t / HOUR) % 24) + 24) % 24)
    const requests = isDown(t - SCRAPE_MS / 2)
      ? 0
      : poisson(random, sc.rate * (0.25 + 0.75 * load) * wobble('rate', t, DAY_TO_DAY.rate) * (SCRAPE_MS / 1000))
    const exported = (f: FamilyName) => has(f) && (armed || !(sc.newAfter ?? []).includes(f))
    for (const kind of ['ttft', 'itl', 'e2e'] as const) {
      if (!has(kind)) continue
      const lat = LAT[kind]
      const edges = kind === 'ttft' && armed && sc.ttftEdgesAfter ? sc.ttftEdgesAfter : lat.edges
      const median = lat.median * lat.busy ** load * wobble(kind, t, DAY_TO_DAY.latency) * (armed ? (sc.after?.[kind] ?? 1) : 1)
      const counts = bucketCounts(random, edges, requests * lat.perRequest, median, lat.sigma)
      const layout = layoutOf(kind, edges)
      // Cumulative buckets: each edge counts every observation at or below it.
      let below = 0
      edges.forEach((_, k) => {
        below += counts[k]!
        add(layout.keys[k]!, below)
      })
      const all = add(
        `${kind}:+Inf`,
        counts.reduce((a, b) => a + b, 0),
      )
      add(
        `${kind}:sum`,
        counts.reduce((a, c, k) => a + c * (k < edges.length ? edges[k]! * 0.7 : edges.at(-1)! * 1.5), 0),
      )
      if (isDown(t)) continue
      const name = names[kind]
      edges.forEach((_, k) => sample(NAME[kind], 'histogram', name.bucket, layout.labels[k]!, cum[layout.keys[k]!]!, t))
      sample(NAME[kind], 'histogram', name.bucket, inf, all, t)
      sample(NAME[kind], 'histogram', name.count, plain, all, t)
      sample(NAME[kind], 'histogram', name.sum, plain, cum[`${kind}:sum`]!, t)
    }
    if (has('requests')) {
      const stop = Math.round(requests * 0.85)
      const aborted = poisson(random, requests * 0.01)
      add('req:stop', stop)
      add('req:length', requests - stop)
      add('req:abort', aborted)
      if (!isDown(t))
        for (const r of reasons) sample('vllm:request_success', 'counter', 'vllm:request_success_total', r.labels, cum[r.key]!, t)
    }
    if (has('tokens')) {
      add('tokens', poisson(random, requests * 120))
      if (!isDown(t)) sample('vllm:generation_tokens', 'counter', 'vllm:generation_tokens_total', plain, cum.tokens!, t)
    }
    if (has('preemptions')) {
      add('preempt', poisson(random, requests * 0.003))
      if (!isDown(t) && exported('preemptions'))
        sample('vllm:num_preemptions', 'counter', 'vllm:num_preemptions_total', plain, cum.preempt!, t)
    }
    if (has('llamacpp')) {
      // llama-server's counters (de3ff81's names; no labels, no histograms): tokens and the seconds spent on them
      const predicted = poisson(random, requests * 120)
      const prompt = poisson(random, requests * 400)
      add('lc:predicted', predicted)
      add('lc:predicted_s', predicted * 0.03 * (1 + 0.8 * load) * wobble('lc', t, DAY_TO_DAY.step) * (armed ? (sc.tokenTimeAfter ?? 1) : 1))
      add('lc:prompt', prompt)
      add('lc:prompt_s', prompt * 0.0006 * (1 + 0.5 * load) * wobble('lcp', t, DAY_TO_DAY.step))
      const lc = `{instance="${sc.name}:8000"}`
      if (!isDown(t)) {
        sample('llamacpp:tokens_predicted', 'counter', 'llamacpp:tokens_predicted_total', lc, cum['lc:predicted']!, t)
        sample('llamacpp:tokens_predicted_seconds', 'counter', 'llamacpp:tokens_predicted_seconds_total', lc, cum['lc:predicted_s']!, t)
        sample('llamacpp:prompt_tokens', 'counter', 'llamacpp:prompt_tokens_total', lc, cum['lc:prompt']!, t)
        sample('llamacpp:prompt_seconds', 'counter', 'llamacpp:prompt_seconds_total', lc, cum['lc:prompt_s']!, t)
      }
    }
    if (has('steps')) {
      const steps = isDown(t - SCRAPE_MS / 2) ? 0 : poisson(random, 20 * (0.3 + 0.7 * load) * (SCRAPE_MS / 1000))
      const decode = Math.round(steps * 0.8)
      add('steps', steps)
      add('steps_decode', decode)
      add('seconds_decode', decode * 0.025 * wobble('step', t, DAY_TO_DAY.step))
      add(
        'seconds',
        decode * 0.025 * wobble('step', t, DAY_TO_DAY.step) +
          (steps - decode) * 0.06 * wobble('mixed', t, DAY_TO_DAY.step) * (armed ? (sc.mixedAfter ?? 1) : 1),
      )
      add('held', armed ? poisson(random, steps * (sc.heldAfter ?? 0)) : 0)
      if (!isDown(t)) {
        sample('radiance:engine_steps', 'counter', 'radiance:engine_steps_total', plain, cum.steps!, t)
        sample('radiance:engine_steps_decode', 'counter', 'radiance:engine_steps_decode_total', plain, cum.steps_decode!, t)
        sample('radiance:engine_step_seconds', 'counter', 'radiance:engine_step_seconds_total', plain, cum.seconds!, t)
        sample(
          'radiance:engine_step_seconds_decode',
          'counter',
          'radiance:engine_step_seconds_decode_total',
          `{${base}}`,
          cum.seconds_decode!,
          t,
        )
        sample('radiance:engine_steps_held', 'counter', 'radiance:engine_steps_held_total', plain, cum.held!, t)
      }
    }
  }
}

const ALL: readonly FamilyName[] = ['ttft', 'itl', 'e2e', 'requests', 'tokens', 'preemptions', 'steps']
const TTFT_ONLY: readonly FamilyName[] = ['ttft', 'requests']
const TTFT_ONLY_WITH_PREEMPTIONS: readonly FamilyName[] = ['ttft', 'requests', 'preemptions']
/** The TTFT edges an engine with its own --custom-histogram-buckets might export. */
export const CUSTOM_TTFT_EDGES = [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 51.2]

/** An older vLLM build: no generation_tokens_total, no num_preemptions_total. */
const OLDER: readonly FamilyName[] = ['ttft', 'itl', 'e2e', 'requests', 'steps']

export const SCENARIOS = {
  regression: { name: 'regression', families: ALL, rate: 4, after: { ttft: 2 }, heldAfter: 0.2 },
  improvement: { name: 'improvement', families: ['ttft', 'itl', 'requests'], rate: 4, after: { itl: 0.8 } },
  unchanged: { name: 'unchanged', families: TTFT_ONLY, rate: 4 },
  older: { name: 'older', families: OLDER, rate: 4 },
  newbuild: { name: 'newbuild', families: TTFT_ONLY_WITH_PREEMPTIONS, rate: 4, newAfter: ['preemptions'] },
  sparse: { name: 'sparse', families: TTFT_ONLY, rate: 0.002 },
  edges: { name: 'edges', families: TTFT_ONLY, rate: 4, ttftEdgesAfter: CUSTOM_TTFT_EDGES },
  reset: {
    name: 'reset',
    families: TTFT_ONLY,
    rate: 4,
    after: { ttft: 1.6 },
    down: [[ARM + 5 * MINUTE, ARM + 35 * MINUTE]],
    restartAt: ARM + 35 * MINUTE,
  },
  gap: { name: 'gap', families: TTFT_ONLY, rate: 4, down: [[ARM + 2 * HOUR, ARM + 3 * HOUR]] },
  cadence: { name: 'cadence', families: ['ttft', 'itl', 'steps'], rate: 4, heldAfter: 0.3, mixedAfter: 1.3 },
  /** The knob doing nothing, judged with the arm at 09:00: the six hours after it are exactly the busy ones. */
  busy: { name: 'busy', families: TTFT_ONLY, rate: 4 },
  /** A llama-server whose generation got 50% slower per token. */
  llama: { name: 'llama', families: ['llamacpp'], rate: 4, tokenTimeAfter: 1.5 },
} as const satisfies Record<string, Scenario>
