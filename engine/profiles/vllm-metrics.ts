// vLLM's /metrics (vllm/v1/metrics/loggers.py, PrometheusStatLogger; multiprocess mode, so no
// `_created`): counters exposed with `_total`, every series labelled model_name and engine, the
// bucket edges of vllm/v1/metrics/buckets.py, and `vllm:cache_config_info` = 1 with one label per
// CacheConfig field as str(). `old` is a ≈v0.8 build: gpu_* names, prefix cache in blocks, no engine label.
import { family, histogram, histogramFamily } from './prom-text.ts'
import type { Histogram, Labels } from './prom-text.ts'

export const TTFT_BUCKETS = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10, 20, 40, 80, 160, 640, 2560,
]
export const ITL_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10, 20, 40, 80]
export const REQUEST_LATENCY_BUCKETS = [0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680]
export const ITERATION_TOKENS_BUCKETS = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]

export interface VllmMeters {
  running: number
  promptTokens: number
  generationTokens: number
  preemptions: number
  success: { stop: number; length: number; abort: number }
  prefixQueries: number
  prefixHits: number
  ttft: Histogram
  itl: Histogram
  e2e: Histogram
  iterationTokens: Histogram
}

export function vllmMeters(): VllmMeters {
  return {
    running: 0,
    promptTokens: 0,
    generationTokens: 0,
    preemptions: 0,
    success: { stop: 0, length: 0, abort: 0 },
    prefixQueries: 0,
    prefixHits: 0,
    ttft: histogram(TTFT_BUCKETS),
    itl: histogram(ITL_BUCKETS),
    e2e: histogram(REQUEST_LATENCY_BUCKETS),
    iterationTokens: histogram(ITERATION_TOKENS_BUCKETS),
  }
}

export interface VllmPage {
  modelName: string
  blockSize: number
  numGpuBlocks: number
  cacheInfo: Labels
  old: boolean
}

export function vllmMetricsPage(m: VllmMeters, page: VllmPage): string {
  const base: Labels = page.old ? { model_name: page.modelName } : { engine: '0', model_name: page.modelName }
  const usage = Math.min(1, (m.running * 4) / page.numGpuBlocks)
  const prefix = page.old
    ? [
        family('vllm:gpu_prefix_cache_queries_total', 'counter', 'GPU prefix cache queries, in terms of number of queried blocks.', [
          [base, Math.floor(m.prefixQueries / page.blockSize)],
        ]),
        family('vllm:gpu_prefix_cache_hits_total', 'counter', 'GPU prefix cache hits, in terms of number of cached blocks.', [
          [base, Math.floor(m.prefixHits / page.blockSize)],
        ]),
      ]
    : [
        family('vllm:prefix_cache_queries_total', 'counter', 'Prefix cache queries, in terms of number of queried tokens.', [
          [base, m.prefixQueries],
        ]),
        family('vllm:prefix_cache_hits_total', 'counter', 'Prefix cache hits, in terms of number of cached tokens.', [
          [base, m.prefixHits],
        ]),
      ]
  const families = [
    family('vllm:num_requests_running', 'gauge', 'Number of requests in model execution batches.', [[base, m.running]]),
    family('vllm:num_requests_waiting', 'gauge', 'Number of requests waiting to be processed.', [[base, 0]]),
    page.old
      ? family('vllm:gpu_cache_usage_perc', 'gauge', 'GPU KV-cache usage. 1 means 100 percent usage.', [[base, usage]])
      : family('vllm:kv_cache_usage_perc', 'gauge', 'KV-cache usage. 1 means 100 percent usage.', [[base, usage]]),
    ...prefix,
    family('vllm:num_preemptions_total', 'counter', 'Cumulative number of preemption from the engine.', [[base, m.preemptions]]),
    family('vllm:prompt_tokens_total', 'counter', 'Number of prefill tokens processed.', [[base, m.promptTokens]]),
    family('vllm:generation_tokens_total', 'counter', 'Number of generation tokens processed.', [[base, m.generationTokens]]),
    family(
      'vllm:request_success_total',
      'counter',
      'Count of successfully processed requests.',
      (['stop', 'length', 'abort'] as const).map((r) => [{ ...base, finished_reason: r }, m.success[r]] as const),
    ),
    histogramFamily('vllm:iteration_tokens_total', 'Histogram of number of tokens per engine_step.', base, m.iterationTokens),
    histogramFamily('vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', base, m.ttft),
    page.old
      ? histogramFamily('vllm:time_per_output_token_seconds', 'Histogram of time per output token in seconds.', base, m.itl)
      : histogramFamily('vllm:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', base, m.itl),
    histogramFamily('vllm:e2e_request_latency_seconds', 'Histogram of e2e request latency in seconds.', base, m.e2e),
    family('vllm:cache_config_info', 'gauge', 'Information of the LLMEngine CacheConfig', [[page.cacheInfo, 1]]),
  ]
  return `${families.flat().join('\n')}\n`
}
