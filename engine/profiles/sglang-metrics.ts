// SGLang's /metrics (observability/metrics_collector.py; prometheus_client multiprocess, so a
// labelled family appears only once it has a series and there is no `_created`): scheduler
// families labelled model_name, engine_type, tp_rank, pp_rank, moe_ep_rank; tokenizer families
// model_name and engine_type; counters declared with `_total` in the name; `old`: 2024-era names.
import { family, histogram, histogramFamily } from './prom-text.ts'
import type { Histogram, Labels, Sample } from './prom-text.ts'

export const TTFT = [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400]
export const E2E = [...TTFT, 600, 1200, 1800, 2400]
export const ITL = [
  0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 2.0, 4.0, 6.0, 8.0,
]

export interface SglangMeters {
  running: number
  requests: number
  promptTokens: number
  generationTokens: number
  /** realtime_tokens_total by mode; a mode has a series once it was incremented. */
  realtime: Map<'prefill_compute' | 'prefill_cache' | 'decode', number>
  /** cached_tokens_total by cache_source: only once a request had cached tokens. */
  cached: Map<'device' | 'total', number>
  lastHitRate: number
  ttft: Histogram
  e2e: Histogram
  itl: Histogram
}

export function sglangMeters(): SglangMeters {
  return {
    running: 0,
    requests: 0,
    promptTokens: 0,
    generationTokens: 0,
    realtime: new Map(),
    cached: new Map(),
    lastHitRate: 0,
    ttft: histogram(TTFT),
    e2e: histogram(E2E),
    itl: histogram(ITL),
  }
}

export function sglangMetricsPage(m: SglangMeters, model: string, pages: number, still: boolean, old: boolean): string {
  if (old) {
    const l: Labels = { model_name: model }
    return `${[
      family('sglang:num_requests_running', 'gauge', 'Number of running requests', [[l, m.running]]),
      family('sglang:num_requests_waiting', 'gauge', 'Number of waiting requests', [[l, 0]]),
      family('sglang:cached_token', 'gauge', 'Number of cached prompt tokens', [[l, still ? 0 : (m.cached.get('total') ?? 0)]]),
      family('sglang:request_success_total', 'counter', 'Number of successfully processed requests', [[l, m.requests]]),
      family('sglang:prompt_tokens_total', 'counter', 'Number of prefill tokens processed', [[l, m.promptTokens]]),
      family('sglang:generation_tokens_total', 'counter', 'Number of generation tokens processed', [[l, m.generationTokens]]),
    ]
      .flat()
      .join('\n')}\n`
  }
  const sched: Labels = { engine_type: 'unified', model_name: model, moe_ep_rank: '0', pp_rank: '0', tp_rank: '0' }
  const tok: Labels = { engine_type: 'unified', model_name: model }
  const realtime: Sample[] = still
    ? (['prefill_compute', 'prefill_cache', 'decode'] as const).map((mode) => [{ ...sched, mode }, 0] as const)
    : [...m.realtime].map(([mode, v]) => [{ ...sched, mode }, v] as const)
  const cached: Sample[] = still ? [] : [...m.cached].map(([source, v]) => [{ ...tok, cache_source: source }, v] as const)
  const families = [
    family('sglang:num_running_reqs', 'gauge', 'The number of running requests.', [[sched, m.running]]),
    family('sglang:num_queue_reqs', 'gauge', 'The number of requests in the waiting queue.', [[sched, 0]]),
    family('sglang:num_used_tokens', 'gauge', 'The number of used tokens.', [[sched, 0]]),
    family('sglang:token_usage', 'gauge', 'The token usage.', [[sched, 0]]),
    family('sglang:cache_hit_rate', 'gauge', 'The prefix cache hit rate.', [[sched, still ? 0 : m.lastHitRate]]),
    ...(realtime.length > 0
      ? [
          family(
            'sglang:realtime_tokens_total',
            'counter',
            'Total number of tokens processed (updated on each log interval). mode: prefill_compute, prefill_cache, decode.',
            realtime,
          ),
        ]
      : []),
    ...(cached.length > 0 ? [family('sglang:cached_tokens_total', 'counter', 'Number of cached prompt tokens.', cached)] : []),
    ...(m.requests > 0
      ? [
          family('sglang:num_requests_total', 'counter', 'Number of requests processed.', [[tok, m.requests]]),
          family('sglang:prompt_tokens_total', 'counter', 'Number of prefill tokens processed.', [[tok, m.promptTokens]]),
          family('sglang:generation_tokens_total', 'counter', 'Number of generation tokens processed.', [[tok, m.generationTokens]]),
          histogramFamily('sglang:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', tok, m.ttft),
          histogramFamily('sglang:e2e_request_latency_seconds', 'Histogram of End-to-end request latency in seconds', tok, m.e2e),
          histogramFamily('sglang:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', tok, m.itl),
        ]
      : []),
    family('sglang:cache_config_info', 'gauge', 'Information of the cache config.', [[{ num_pages: String(pages), page_size: '1' }, 1]]),
  ]
  return `${families.flat().join('\n')}\n`
}
