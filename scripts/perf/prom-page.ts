// Generated `/metrics` pages for the parser benchmark. A vLLM-shaped page, as prometheus_client
// (text format 0.0.4) prints it: `vllm:` gauges, counters as `<name>_total` plus a `<name>_created`
// gauge family, and many labelled histograms (`model_name`/`engine` labels, sorted, `le` among
// them) each followed by its `_created` gauge family. Deterministic: the same size gives the same
// bytes. And the hostile line of 100,000 labels (wideLine).
//
// It is written to be parseable by parse-prometheus-text-format too: no space after a comma
// inside braces, every `# HELP` has text, single spaces in `# TYPE` lines (that parser throws on
// each of those, all legal in the format).
import { goFloat } from '../../engine/metrics.ts'

type Labels = Readonly<Record<string, string>>

const LATENCY = [
  0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0,
]
const TTFT = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
]
const ITL = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0]
const TOKENS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 32768]
const ITERATION = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]
const PARAMS_N = [1, 2, 5, 10, 20]

/** vLLM v1's histogram families (vllm/v1/metrics/loggers.py) with their bucket bounds. */
const HISTOGRAMS: ReadonlyArray<readonly [string, string, readonly number[]]> = [
  ['vllm:iteration_tokens_total', 'Histogram of number of tokens per engine_step.', ITERATION],
  ['vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', TTFT],
  ['vllm:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', ITL],
  ['vllm:e2e_request_latency_seconds', 'Histogram of e2e request latency in seconds.', LATENCY],
  ['vllm:request_queue_time_seconds', 'Histogram of time spent in WAITING phase for request.', LATENCY],
  ['vllm:request_inference_time_seconds', 'Histogram of time spent in RUNNING phase for request.', LATENCY],
  ['vllm:request_prefill_time_seconds', 'Histogram of time spent in PREFILL phase for request.', LATENCY],
  ['vllm:request_decode_time_seconds', 'Histogram of time spent in DECODE phase for request.', LATENCY],
  ['vllm:request_prompt_tokens', 'Number of prefill tokens processed.', TOKENS],
  ['vllm:request_generation_tokens', 'Number of generation tokens processed.', TOKENS],
  ['vllm:request_max_num_generation_tokens', 'Histogram of maximum number of requested generation tokens.', TOKENS],
  ['vllm:request_params_n', 'Histogram of the n request parameter.', PARAMS_N],
  ['vllm:request_params_max_tokens', 'Histogram of the max_tokens request parameter.', TOKENS],
]

const CREATED = 1776930173.68

/** A small deterministic generator (LCG), so pages are reproducible. */
function rng(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

function line(name: string, labels: Labels, value: number): string {
  // prometheus_client sorts label names; values here need no escaping.
  const body = Object.keys(labels)
    .sort()
    .map((k) => `${k}="${labels[k]}"`)
    .join(',')
  return `${name}{${body}} ${goFloat(value)}\n`
}

function head(name: string, help: string, type: string): string {
  return `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n`
}

/** `series` label sets: a data-parallel deployment of `engine` ranks serving several model names. */
function labelSets(series: number): Labels[] {
  const out: Labels[] = []
  for (let i = 0; i < series; i++)
    out.push({ engine: String(i % 8), model_name: `org/radiance-ref-8b-ft${String(Math.floor(i / 8)).padStart(4, '0')}` })
  return out
}

function render(series: number): string {
  const next = rng(42)
  const sets = labelSets(series)
  const parts: string[] = []
  const created = (i: number): number => CREATED + i * 1.3e-5
  const gauge = (name: string, help: string, value: () => number): void => {
    parts.push(head(name, help, 'gauge'))
    for (const l of sets) parts.push(line(name, l, value()))
  }
  const counter = (name: string, help: string, extra: readonly Labels[], value: () => number): void => {
    const all = sets.flatMap((l) => extra.map((e) => ({ ...l, ...e })))
    parts.push(head(`${name}_total`, help, 'counter'))
    for (const l of all) parts.push(line(`${name}_total`, l, value()))
    parts.push(head(`${name}_created`, help, 'gauge'))
    all.forEach((l, i) => parts.push(line(`${name}_created`, l, created(i))))
  }
  gauge('vllm:num_requests_running', 'Number of requests in model execution batches.', () => Math.floor(next() * 64))
  gauge('vllm:num_requests_waiting', 'Number of requests waiting to be processed.', () => Math.floor(next() * 16))
  gauge('vllm:kv_cache_usage_perc', 'KV-cache usage. 1 means 100 percent usage.', () => Math.round(next() * 1e6) / 1e6)
  counter('vllm:num_preemptions', 'Cumulative number of preemption from the engine.', [{}], () => Math.floor(next() * 100))
  counter('vllm:prompt_tokens', 'Number of prefill tokens processed.', [{}], () => Math.floor(next() * 1e9))
  counter('vllm:generation_tokens', 'Number of generation tokens processed.', [{}], () => Math.floor(next() * 1e9))
  counter(
    'vllm:request_success',
    'Count of successfully processed requests.',
    ['stop', 'length', 'abort'].map((r) => ({ finished_reason: r })),
    () => Math.floor(next() * 1e6),
  )
  for (const [name, help, bounds] of HISTOGRAMS) {
    parts.push(head(name, help, 'histogram'))
    for (const l of sets) {
      let cumulative = 0
      for (const b of bounds) {
        cumulative += Math.floor(next() * 500)
        parts.push(line(`${name}_bucket`, { ...l, le: goFloat(b) }, cumulative))
      }
      cumulative += Math.floor(next() * 10)
      parts.push(line(`${name}_bucket`, { ...l, le: '+Inf' }, cumulative))
      parts.push(line(`${name}_count`, l, cumulative))
      parts.push(line(`${name}_sum`, l, Math.round(next() * cumulative * 1e6) / 1e3))
    }
    parts.push(head(`${name}_created`, help, 'gauge'))
    sets.forEach((l, i) => parts.push(line(`${name}_created`, l, created(i))))
  }
  return parts.join('')
}

/** A page of about `bytes` bytes (ASCII, so bytes = characters); within one series of the target. */
export function vllmPage(bytes: number): { text: string; series: number } {
  const one = render(1).length
  const two = render(2).length
  const perSeries = two - one
  const series = Math.max(1, Math.round((bytes - (one - perSeries)) / perSeries))
  return { text: render(series), series }
}

/** `wide{l0="v",l1="v",…} 1`: one sample with `count` labels (100,000: about 1 MB), names of growing length, one short value each. */
export function wideLine(count: number, duplicateLast = false): string {
  const parts: string[] = []
  for (let i = 0; i < count; i++) parts.push(`l${i}="v"`)
  if (duplicateLast) parts.push('l0="again"')
  return `wide{${parts.join(',')}} 1\n`
}
