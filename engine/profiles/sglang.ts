// The SGLang profile (`python -m sglang.launch_server --model-path …`, ≈v0.5.9-shaped): the
// command line of ./sglang-args.ts, the log format `[%Y-%m-%d %H:%M:%S] message` (the launcher's
// early lines with `INFO file:line:`), the `server_args=ServerArgs(…)` line of every field,
// /health (503 while starting), /health_generate, /server_info and the deprecated
// /get_server_info, /model_info, /metrics only with --enable-metrics, a token-level radix cache,
// and a `Prefill batch, …` line per request.
import type { ProfileFaults } from './faults.ts'
import { RadixPrefixCache } from './prefix-cache.ts'
import { observe, PROMETHEUS_CONTENT_TYPE } from './prom-text.ts'
import { PyObject, pyRepr } from './pyrepr.ts'
import type { PyValue } from './pyrepr.ts'
import { formatActions, joinSections } from './argparse-help.ts'
import { AUTO_MAX_RUNNING, parseSglang, serverArgsFields, SGLANG_OPTIONS, SGLANG_PARSER } from './sglang-args.ts'
import { sglangMeters, sglangMetricsPage } from './sglang-metrics.ts'
import { json } from './types.ts'
import type { ProfileEngine, Start } from './types.ts'

export const SGLANG_VERSION = '0.5.9'
const MAX_TOTAL_NUM_TOKENS = 20480
const two = (n: number): string => String(n).padStart(2, '0')
export const sglangStamp = (d: Date): string =>
  `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`

export function sglangHelp(): string {
  return joinSections([
    [`usage: ${SGLANG_PARSER.usage}`],
    ['options:', '  -h, --help            show this help message and exit', ...formatActions(SGLANG_OPTIONS, false, false)],
  ])
}

export function startSglang(argv: readonly string[], _env: NodeJS.ProcessEnv, faults: ProfileFaults): Start {
  const parsed = parseSglang(argv, sglangHelp)
  if (parsed.kind === 'exit') return parsed
  const fields = serverArgsFields(parsed.values)
  const field = (k: string): PyValue => fields.find(([name]) => name === k)![1]
  const model = String(field('model_path'))
  const served = String(field('served_model_name'))
  const chunked = Number(field('chunked_prefill_size'))
  const maxRunning = (field('max_running_requests') as number | null) ?? AUTO_MAX_RUNNING
  const contextLen = (field('context_length') as number | null) ?? 32768
  const metricsOn = field('enable_metrics') === true
  const radix = field('disable_radix_cache') !== true
  const apiKey = field('api_key') as string | null
  const meters = sglangMeters()
  const cache = new RadixPrefixCache()
  const line = (now: Date, message: string): string => `[${sglangStamp(now)}] ${message}`
  const tp = (now: Date, message: string): string => `[${sglangStamp(now)} TP0] ${message}`
  const bump = (k: string, v: PyValue): PyValue =>
    faults.has('sglang_args_line_differs') && (k === 'chunked_prefill_size' || k === 'max_running_requests') && typeof v === 'number'
      ? v + 1
      : v
  const serverInfo = (): Record<string, unknown> => {
    const off = faults.has('sglang_server_info_differs') ? 1 : 0
    const base = Object.fromEntries(
      fields.map(([k, v]) => [
        k,
        v instanceof PyObject ? pyRepr(v) : typeof v === 'object' && v !== null && 'value' in v ? (v as { value: number }).value : v,
      ]),
    )
    return {
      ...base,
      chunked_prefill_size: chunked + off,
      max_running_requests: maxRunning + off,
      status: 'ready',
      max_total_num_tokens: MAX_TOTAL_NUM_TOKENS,
      max_req_input_len: MAX_TOTAL_NUM_TOKENS - 6,
      internal_states: [{ last_gen_throughput: 0, load: meters.running }],
      version: SGLANG_VERSION,
    }
  }
  const engine: ProfileEngine = {
    profile: 'sglang',
    host: String(field('host')),
    port: Number(field('port')),
    servedNames: [served],
    apiKey,
    unauthorized: () => json(401, { error: 'Unauthorized' }),
    bootLines(now) {
      return [
        line(
          now,
          "WARNING launch_server.py:52: 'python -m sglang.launch_server' is still supported, but 'sglang serve' is the recommended entrypoint.",
        ),
        line(now, 'INFO server_args.py:2222: Attention backend not specified. Use fa3 backend by default.'),
        line(
          now,
          `server_args=${pyRepr(
            new PyObject(
              'ServerArgs',
              fields.map(([k, v]) => [k, bump(k, v)] as const),
            ),
          )}`,
        ),
        tp(now, `Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=70.12 GB`),
        tp(
          now,
          `max_total_num_tokens=${MAX_TOTAL_NUM_TOKENS}, chunked_prefill_size=${chunked}, max_prefill_tokens=${String(field('max_prefill_tokens'))}, max_running_requests=${maxRunning}, context_len=${contextLen}`,
        ),
      ]
    },
    listeningLines(now, port) {
      return [
        line(now, `INFO:     Started server process [${process.pid}]`),
        line(now, 'INFO:     Waiting for application startup.'),
        line(now, 'INFO:     Application startup complete.'),
        line(now, `INFO:     Uvicorn running on http://${engine.host}:${port} (Press CTRL+C to quit)`),
        line(now, 'The server is fired up and ready to roll!'),
      ]
    },
    answer(req, loading) {
      const now = new Date()
      if (req.path === '/health' || req.path === '/health_generate') return loading ? { status: 503, body: '' } : { status: 200, body: '' }
      const older = faults.has('sglang_old_server_info')
      if (req.path === '/server_info' && !older) return json(200, serverInfo())
      if (req.path === '/get_server_info') {
        return {
          ...json(200, serverInfo()),
          ...(older
            ? {}
            : {
                log: [
                  line(
                    now,
                    "WARNING http_server.py:612: Endpoint '/get_server_info' is deprecated and will be removed in a future version. Please use '/server_info' instead.",
                  ),
                ],
              }),
        }
      }
      if (req.path === '/model_info' || req.path === '/get_model_info') {
        return json(200, {
          model_path: model,
          tokenizer_path: String(field('tokenizer_path')),
          is_generation: true,
          preferred_sampling_params: null,
          weight_version: 'default',
          has_image_understanding: false,
          has_audio_understanding: false,
          model_type: 'qwen2',
          architectures: ['Qwen2ForCausalLM'],
        })
      }
      if (req.path === '/metrics' && metricsOn) {
        return {
          status: 200,
          headers: { 'content-type': PROMETHEUS_CONTENT_TYPE },
          body: sglangMetricsPage(
            meters,
            served,
            MAX_TOTAL_NUM_TOKENS,
            faults.has('sglang_meter_still'),
            faults.has('sglang_old_metric_names'),
          ),
        }
      }
      if (req.path.startsWith('/v1/')) return loading ? json(503, { error: 'Server is starting' }) : null
      return json(404, { detail: 'Not Found' })
    },
    record(s, now) {
      const cached = radix ? cache.lookupAndInsert(s.tokens) : 0
      const fresh = s.tokens.length - cached
      meters.requests += 1
      meters.promptTokens += s.tokens.length
      meters.generationTokens += s.completionTokens
      meters.lastHitRate = s.tokens.length > 0 ? cached / s.tokens.length : 0
      const add = (mode: 'prefill_compute' | 'prefill_cache' | 'decode', n: number): void =>
        void (n > 0 && meters.realtime.set(mode, (meters.realtime.get(mode) ?? 0) + n))
      add('prefill_compute', fresh)
      add('prefill_cache', cached)
      add('decode', s.completionTokens)
      if (cached > 0)
        for (const source of ['device', 'total'] as const) meters.cached.set(source, (meters.cached.get(source) ?? 0) + cached)
      observe(meters.ttft, s.ttftS)
      observe(meters.e2e, s.e2eS)
      if (s.completionTokens > 1) observe(meters.itl, (s.e2eS - s.ttftS) / (s.completionTokens - 1))
      const chunk = chunked > 0 ? chunked : fresh
      const lines: string[] = []
      for (let left = fresh, first = true; left > 0 || first; left -= chunk, first = false) {
        lines.push(
          tp(
            now,
            `Prefill batch, #new-seq: 1, #new-token: ${Math.min(Math.max(left, 0), chunk)}, #cached-token: ${first ? cached : 0}, token usage: 0.00, #running-req: ${meters.running - 1}, #queue-req: 0, input throughput (token/s): 0.00, cuda graph: False`,
          ),
        )
      }
      return lines
    },
    running(delta) {
      meters.running += delta
    },
    modelList() {
      return {
        object: 'list',
        data: [
          {
            id: served,
            object: 'model',
            created: Math.floor(Date.now() / 1000),
            owned_by: 'sglang',
            root: model,
            max_model_len: contextLen,
          },
        ],
      }
    },
    stats() {
      return {
        profile: 'sglang',
        resolved: { chunked_prefill_size: chunked, max_running_requests: maxRunning, disable_radix_cache: !radix },
        faults: [...faults],
      }
    },
  }
  return { kind: 'engine', engine }
}
