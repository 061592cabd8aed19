// vLLM's /metrics as the real build serves it (fixtures/real/vllm/9aaf83ef5/live/metrics.txt:
// vllm/v1/metrics/loggers.py's PrometheusStatLogger on prometheus_client 0.26 in its default,
// single-process registry): prometheus_client's own python_* and process_* families first, then
// every vllm: family in the build's order, each series labelled engine and model_name, a counter
// exposed with `_total` and followed by its `_created` gauge (as a histogram is), the bucket edges
// of vllm/v1/metrics/buckets.py (1-2-5 up to max_model_len for token counts), and
// `vllm:cache_config_info` = 1 with one label per CacheConfig field as str(). Served as
// `text/plain; version=1.0.0; charset=utf-8`. `old` is a ≈v0.8 build: gpu_* names, prefix cache
// in blocks, no engine label. The FastAPI instrumentator's http_* families are not emulated.
import { processStartSeconds } from '../proc-start.ts'
import { family, histogram, histogramFamily } from './prom-text.ts'
import type { Histogram, Labels, Sample } from './prom-text.ts'

export const TTFT_BUCKETS = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10, 20, 40, 80, 160, 640, 2560,
]
export const ITL_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10, 20, 40, 80]
export const REQUEST_LATENCY_BUCKETS = [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680]
export const ITERATION_TOKENS_BUCKETS = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]
const N_BUCKETS = [1, 2, 5, 10, 20]
/** What prometheus_client 0.26 answers a scrape that accepts the text format. */
export const VLLM_METRICS_CONTENT_TYPE = 'text/plain; version=1.0.0; charset=utf-8'

/** build_1_2_5_buckets(max_model_len): 1, 2, 5, 10, 20, 50, … up to the context. */
export function oneTwoFive(max: number): number[] {
  const out: number[] = []
  for (let exp = 1; ; exp *= 10)
    for (const m of [1, 2, 5]) {
      if (m * exp > max) return out
      out.push(m * exp)
    }
}

export const FINISHED_REASONS = ['stop', 'length', 'abort', 'error', 'repetition'] as const
export type FinishedReason = (typeof FINISHED_REASONS)[number]

export interface VllmMeters {
  /** Seconds since the epoch the loggers were made: every `_created` gauge's value. */
  createdS: number
  running: number
  promptTokens: number
  generationTokens: number
  preemptions: number
  success: Record<FinishedReason, number>
  prefixQueries: number
  prefixHits: number
  ttft: Histogram
  itl: Histogram
  e2e: Histogram
  iterationTokens: Histogram
  requestPromptTokens: Histogram
  requestGenerationTokens: Histogram
  paramsN: Histogram
}

export function vllmMeters(maxModelLen: number): VllmMeters {
  const tokens = oneTwoFive(maxModelLen)
  return {
    createdS: Date.now() / 1000,
    running: 0,
    promptTokens: 0,
    generationTokens: 0,
    preemptions: 0,
    success: { stop: 0, length: 0, abort: 0, error: 0, repetition: 0 },
    prefixQueries: 0,
    prefixHits: 0,
    ttft: histogram(TTFT_BUCKETS),
    itl: histogram(ITL_BUCKETS),
    e2e: histogram(REQUEST_LATENCY_BUCKETS),
    iterationTokens: histogram(ITERATION_TOKENS_BUCKETS),
    requestPromptTokens: histogram(tokens),
    requestGenerationTokens: histogram(tokens),
    paramsN: histogram(N_BUCKETS),
  }
}

export interface VllmPage {
  modelName: string
  blockSize: number
  numGpuBlocks: number
  maxModelLen: number
  cacheInfo: Labels
  old: boolean
}

/** A counter and its `_created` gauge, as prometheus_client's default registry writes them. */
function counter(name: string, help: string, samples: readonly Sample[], createdS: number): string[] {
  const created = `${name.replace(/_total$/, '')}_created`
  return [
    ...family(name, 'counter', help, samples),
    ...family(
      created,
      'gauge',
      help,
      samples.map(([l]) => [l, createdS] as const),
    ),
  ]
}

function histo(name: string, help: string, labels: Labels, h: Histogram, createdS: number): string[] {
  return [...histogramFamily(name, help, labels, h), ...family(`${name}_created`, 'gauge', help, [[labels, createdS]])]
}

/** prometheus_client's platform and process collectors (the values are this process's, as the real ones are the server's). */
function processFamilies(): string[] {
  const mem = process.memoryUsage()
  const cpu = process.cpuUsage()
  const [major, minor, patch] = ['3', '11', '7']
  const gc = (name: string, help: string) =>
    family(
      name,
      'counter',
      help,
      ['0', '1', '2'].map((g) => [{ generation: g }, 0] as const),
    )
  return [
    ...gc('python_gc_objects_collected_total', 'Objects collected during gc'),
    ...gc('python_gc_objects_uncollectable_total', 'Uncollectable objects found during GC'),
    ...gc('python_gc_collections_total', 'Number of times this generation was collected'),
    ...family('python_info', 'gauge', 'Python platform information', [
      [{ implementation: 'CPython', major, minor, patchlevel: patch, version: `${major}.${minor}.${patch}` }, 1],
    ]),
    ...family('process_virtual_memory_bytes', 'gauge', 'Virtual memory size in bytes.', [[{}, mem.heapTotal + mem.external]]),
    ...family('process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes.', [[{}, mem.rss]]),
    ...family('process_start_time_seconds', 'gauge', 'Start time of the process since unix epoch in seconds.', [
      [{}, processStartSeconds()],
    ]),
    ...family('process_cpu_seconds_total', 'counter', 'Total user and system CPU time spent in seconds.', [
      [{}, Math.round((cpu.user + cpu.system) / 1e4) / 100],
    ]),
    ...family('process_open_fds', 'gauge', 'Number of open file descriptors.', [[{}, 35]]),
    ...family('process_max_fds', 'gauge', 'Maximum number of open file descriptors.', [[{}, 1024]]),
  ]
}

export function vllmMetricsPage(m: VllmMeters, page: VllmPage): string {
  const base: Labels = page.old ? { model_name: page.modelName } : { engine: '0', model_name: page.modelName }
  const t = m.createdS
  const usage = Math.min(1, (m.running * 4) / page.numGpuBlocks)
  const zero = (name: string, help: string) => counter(name, help, [[base, 0]], t)
  const prefix = page.old
    ? [
        ...counter(
          'vllm:gpu_prefix_cache_queries_total',
          'GPU prefix cache queries, in terms of number of queried blocks.',
          [[base, Math.floor(m.prefixQueries / page.blockSize)]],
          t,
        ),
        ...counter(
          'vllm:gpu_prefix_cache_hits_total',
          'GPU prefix cache hits, in terms of number of cached blocks.',
          [[base, Math.floor(m.prefixHits / page.blockSize)]],
          t,
        ),
      ]
    : [
        ...counter(
          'vllm:prefix_cache_queries_total',
          'Prefix cache queries, in terms of number of queried tokens.',
          [[base, m.prefixQueries]],
          t,
        ),
        ...counter('vllm:prefix_cache_hits_total', 'Prefix cache hits, in terms of number of cached tokens.', [[base, m.prefixHits]], t),
      ]
  const hist = (name: string, help: string, h: Histogram) => histo(name, help, base, h, t)
  const empty = (name: string, help: string, bounds: readonly number[]) => hist(name, help, histogram(bounds))
  const tokens = oneTwoFive(page.maxModelLen)
  const families = [
    processFamilies(),
    zero(
      'vllm:estimated_flops_per_gpu_total',
      'Estimated number of floating point operations per GPU (for Model Flops Utilization calculations).',
    ),
    zero(
      'vllm:estimated_read_bytes_per_gpu_total',
      'Estimated number of bytes read from memory per GPU (for Model Flops Utilization calculations).',
    ),
    zero(
      'vllm:estimated_write_bytes_per_gpu_total',
      'Estimated number of bytes written to memory per GPU (for Model Flops Utilization calculations).',
    ),
    family('vllm:num_requests_running', 'gauge', 'Number of requests in model execution batches.', [[base, m.running]]),
    family('vllm:num_requests_waiting', 'gauge', 'Number of requests waiting to be processed.', [[base, 0]]),
    family(
      'vllm:num_requests_waiting_by_reason',
      'gauge',
      "Number of waiting requests by reason. Reason labels: 'capacity' = waiting for scheduling capacity; 'deferred' = deferred by transient constraints (LoRA budget, KV transfer, blocked status). Sum of all reasons equals vllm:num_requests_waiting.",
      ['capacity', 'deferred'].map((reason) => [{ ...base, reason }, 0] as const),
    ),
    family(
      'vllm:engine_sleep_state',
      'gauge',
      'Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means engine is awake; weights_offloaded = 1 means sleep level 1; discard_all = 1 means sleep level 2.',
      (['awake', 'weights_offloaded', 'discard_all'] as const).map((s) => [{ ...base, sleep_state: s }, s === 'awake' ? 1 : 0] as const),
    ),
    page.old
      ? family('vllm:gpu_cache_usage_perc', 'gauge', 'GPU KV-cache usage. 1 means 100 percent usage.', [[base, usage]])
      : family('vllm:kv_cache_usage_perc', 'gauge', 'KV-cache usage. 1 means 100 percent usage.', [[base, usage]]),
    prefix,
    zero(
      'vllm:external_prefix_cache_queries_total',
      'External prefix cache queries from KV connector cross-instance cache sharing, in terms of number of queried tokens.',
    ),
    zero(
      'vllm:external_prefix_cache_hits_total',
      'External prefix cache hits from KV connector cross-instance cache sharing, in terms of number of cached tokens.',
    ),
    zero('vllm:mm_cache_queries_total', 'Multi-modal cache queries, in terms of number of queried items.'),
    zero('vllm:mm_cache_hits_total', 'Multi-modal cache hits, in terms of number of cached items.'),
    counter('vllm:num_preemptions_total', 'Cumulative number of preemption from the engine.', [[base, m.preemptions]], t),
    counter('vllm:prompt_tokens_total', 'Number of prefill tokens processed.', [[base, m.promptTokens]], t),
    counter(
      'vllm:prompt_tokens_by_source_total',
      'Number of prompt tokens by source.',
      [
        [{ ...base, source: 'local_compute' }, m.promptTokens - m.prefixHits],
        [{ ...base, source: 'local_cache_hit' }, m.prefixHits],
        [{ ...base, source: 'external_kv_transfer' }, 0],
      ],
      t,
    ),
    counter('vllm:prompt_tokens_cached_total', 'Number of cached prompt tokens (local + external).', [[base, m.prefixHits]], t),
    counter('vllm:generation_tokens_total', 'Number of generation tokens processed.', [[base, m.generationTokens]], t),
    counter(
      'vllm:request_success_total',
      'Count of successfully processed requests.',
      FINISHED_REASONS.map((r) => [{ ...base, finished_reason: r }, m.success[r]] as const),
      t,
    ),
    hist('vllm:request_prompt_tokens', 'Number of prefill tokens processed.', m.requestPromptTokens),
    hist('vllm:request_generation_tokens', 'Number of generation tokens processed.', m.requestGenerationTokens),
    hist('vllm:iteration_tokens_total', 'Histogram of number of tokens per engine_step.', m.iterationTokens),
    empty('vllm:request_max_num_generation_tokens', 'Histogram of maximum number of requested generation tokens.', tokens),
    hist('vllm:request_params_n', 'Histogram of the n request parameter.', m.paramsN),
    empty('vllm:request_params_max_tokens', 'Histogram of the max_tokens request parameter.', tokens),
    hist('vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', m.ttft),
    page.old
      ? hist('vllm:time_per_output_token_seconds', 'Histogram of time per output token in seconds.', m.itl)
      : hist('vllm:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', m.itl),
    empty('vllm:request_time_per_output_token_seconds', 'Histogram of time_per_output_token_seconds per request.', ITL_BUCKETS),
    hist('vllm:e2e_request_latency_seconds', 'Histogram of e2e request latency in seconds.', m.e2e),
    empty('vllm:request_queue_time_seconds', 'Histogram of time spent in WAITING phase for request.', REQUEST_LATENCY_BUCKETS),
    empty('vllm:request_inference_time_seconds', 'Histogram of time spent in RUNNING phase for request.', REQUEST_LATENCY_BUCKETS),
    empty('vllm:request_prefill_time_seconds', 'Histogram of time spent in PREFILL phase for request.', REQUEST_LATENCY_BUCKETS),
    empty('vllm:request_decode_time_seconds', 'Histogram of time spent in DECODE phase for request.', REQUEST_LATENCY_BUCKETS),
    empty(
      'vllm:request_prefill_kv_computed_tokens',
      'Histogram of new KV tokens computed during prefill (excluding cached tokens).',
      tokens,
    ),
    // The engine label only (no model_name), as the real page has it.
    family('vllm:cache_config_info', 'gauge', 'Information of the LLMEngine CacheConfig', [
      [page.old ? page.cacheInfo : { ...page.cacheInfo, engine: '0' }, 1],
    ]),
  ]
  return `${families.flat().join('\n')}\n`
}
