// The llama.cpp profile (`llama-server -m … -np N`, server-context.cpp@fb402660-shaped): the command
// line of ./llamacpp-args.ts, its startup lines (no timestamp or level; `srv  %12s:` / `slot %12s:`
// tags; `main: n_parallel is set to auto, …`, `llama_context: n_seq_max = N`, `initializing slots,
// n_slots = N`), /health ({"status":"ok"}, 503 while loading), /props with total_slots and n_ctx per
// slot, /slots, /metrics only with --metrics (501 otherwise), `llamacpp:` families with no labels
// and values printed with 6 significant digits, and print_timings lines per request.
import type { ProfileFaults } from './faults.ts'
import { llamaHelp, parseLlama } from './llamacpp-args.ts'
import { sampleLine } from './prom-text.ts'
import { json } from './types.ts'
import type { ProfileEngine, Start } from './types.ts'

export const BUILD = { number: 6543, commit: '2c4055912' }
const N_CTX_TRAIN = 32768
const AUTO_PARALLEL = 4

/** `ostream << double`: six significant digits, C's %g. */
export function cppDouble(n: number): string {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? 'nan' : n > 0 ? 'inf' : '-inf'
  if (n === 0) return '0'
  const exp = Math.floor(Math.log10(Math.abs(n)))
  if (exp < -4 || exp >= 6) {
    const [m, e] = n.toExponential(5).split('e') as [string, string]
    const mantissa = m.includes('.') ? m.replace(/\.?0+$/, '') : m
    return `${mantissa}e${e.startsWith('-') ? '-' : '+'}${e.replace(/^[+-]/, '').padStart(2, '0')}`
  }
  const fixed = n.toFixed(Math.max(0, 5 - exp))
  return fixed.includes('.') ? fixed.replace(/\.?0+$/, '') : fixed
}

const tag = (subsystem: 'srv ' | 'slot', fn: string): string => `${subsystem} ${fn.slice(0, 12).padStart(12)}:`

export function startLlama(argv: readonly string[], env: NodeJS.ProcessEnv, faults: ProfileFaults): Start {
  const parsed = parseLlama(argv, env)
  if (parsed.kind === 'help') return { kind: 'exit', code: 0, stdout: llamaHelp(), stderr: '' }
  if (parsed.kind === 'error') return { kind: 'exit', code: 1, stdout: '', stderr: `${parsed.message}\n` }
  const v = parsed.values
  const asked = (v.get('n_parallel') as number | undefined) ?? -1
  const auto = asked === -1
  const slots = auto ? AUTO_PARALLEL : asked
  const kvUnified = v.has('kv_unified') || (auto && !v.has('no_kv_unified'))
  const nCtx = ((v.get('ctx_size') as number | undefined) ?? 0) || N_CTX_TRAIN
  const nCtxSeq = kvUnified ? nCtx : Math.floor(nCtx / slots)
  const modelPath = String(v.get('model') ?? 'models/7B/ggml-model-f16.gguf')
  const alias = (v.get('alias') as string | undefined) ?? modelPath
  const metricsOn = v.has('metrics')
  const slotsOn = !v.has('no_slots')
  const m = { promptTokens: 0, promptMs: 0, predicted: 0, predictedMs: 0, decodes: 0, busySum: 0, tokensMax: 0, processing: 0, tasks: 0 }
  const still = faults.has('llamacpp_meter_still')
  const startedAt = Math.floor(Date.now() / 1000)
  const slotLine = (fn: string, id: number, task: number, text: string): string =>
    `${tag('slot', fn)} id ${String(id).padStart(2)} | task ${task} | ${text}`
  const engine: ProfileEngine = {
    profile: 'llama.cpp',
    host: String(v.get('host') ?? '127.0.0.1'),
    port: Number(v.get('port') ?? 8080),
    servedNames: [alias],
    apiKey: (v.get('api_key') as string | undefined) ?? null,
    unauthorized: () => json(401, { error: { code: 401, message: 'Invalid API Key', type: 'authentication_error' } }),
    bootLines() {
      return [
        ...parsed.warnings,
        `build_info: b${BUILD.number}-${BUILD.commit}`,
        'system_info: n_threads = 16 (n_threads_batch = 16) / 32 | CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | OPENMP = 1 | REPACK = 1 |',
        ...(auto ? [`main: n_parallel is set to auto, using n_parallel = ${slots} and kv_unified = ${kvUnified}`] : []),
        `llama_context: n_seq_max     = ${slots}`,
        `llama_context: n_ctx         = ${nCtx}`,
        `llama_context: n_ctx_seq     = ${nCtxSeq}`,
        'llama_context: n_batch       = 2048',
        'llama_context: n_ubatch      = 512',
        'llama_context: flash_attn    = enabled',
        `llama_context: kv_unified    = ${kvUnified}`,
        `${tag('srv ', 'load_model')} initializing slots, n_slots = ${slots + (faults.has('llamacpp_log_differs') ? 1 : 0)}`,
        ...Array.from({ length: slots }, (_, id) => slotLine('load_model', id, -1, `new slot, n_ctx = ${nCtxSeq}`)),
        `${tag('srv ', 'load_model')} prompt cache is enabled, size limit: 8192 MiB`,
        `${tag('srv ', 'load_model')} use \`--cache-ram 0\` to disable the prompt cache`,
      ]
    },
    listeningLines(_now, port) {
      return [`main: server is listening on http://${engine.host}:${port}`, `${tag('srv ', 'update_slots')} all slots are idle`]
    },
    answer(req, loading) {
      if (loading) return json(503, { error: { code: 503, message: 'Loading model', type: 'unavailable_error' } })
      if (req.path === '/health' || req.path === '/v1/health') return json(200, { status: 'ok' })
      if (req.path === '/props') {
        return json(200, {
          default_generation_settings: { params: { n_predict: -1, temperature: 0.8, top_k: 40, top_p: 0.95 }, n_ctx: nCtxSeq },
          total_slots: slots + (faults.has('llamacpp_props_differs') ? 1 : 0),
          model_alias: alias,
          model_path: modelPath,
          modalities: { vision: false, audio: false },
          endpoint_slots: slotsOn,
          endpoint_props: v.has('props'),
          endpoint_metrics: metricsOn,
          webui: true,
          chat_template:
            "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}",
          bos_token: '<|endoftext|>',
          eos_token: '<|im_end|>',
          build_info: `b${BUILD.number}-${BUILD.commit}`,
        })
      }
      if (req.path === '/slots') {
        if (!slotsOn)
          return json(501, {
            error: {
              code: 501,
              message: 'This server does not support slots endpoint. Start it with `--slots`',
              type: 'not_supported_error',
            },
          })
        return json(
          200,
          Array.from({ length: slots }, (_, id) => ({
            id,
            id_task: -1,
            n_ctx: nCtxSeq,
            speculative: false,
            is_processing: id < m.processing,
          })),
        )
      }
      if (req.path === '/metrics') {
        if (!metricsOn)
          return json(501, {
            error: {
              code: 501,
              message: 'This server does not support metrics endpoint. Start it with `--metrics`',
              type: 'not_supported_error',
            },
          })
        const z = (n: number): number => (still ? 0 : n)
        const rows: ReadonlyArray<readonly [string, 'counter' | 'gauge', string, number]> = [
          ['prompt_tokens_total', 'counter', 'Number of prompt tokens processed.', z(m.promptTokens)],
          ['prompt_seconds_total', 'counter', 'Prompt process time', z(m.promptMs / 1000)],
          ['tokens_predicted_total', 'counter', 'Number of generation tokens processed.', z(m.predicted)],
          ['tokens_predicted_seconds_total', 'counter', 'Predict process time', z(m.predictedMs / 1000)],
          ['n_decode_total', 'counter', 'Total number of llama_decode() calls', z(m.decodes)],
          ['n_tokens_max', 'counter', 'Largest observed n_tokens.', m.tokensMax],
          [
            'n_busy_slots_per_decode',
            'counter',
            'Average number of busy slots per llama_decode() call',
            m.decodes > 0 ? m.busySum / m.decodes : 0,
          ],
          [
            'prompt_tokens_seconds',
            'gauge',
            'Average prompt throughput in tokens/s.',
            m.promptMs > 0 ? (m.promptTokens * 1000) / m.promptMs : 0,
          ],
          [
            'predicted_tokens_seconds',
            'gauge',
            'Average generation throughput in tokens/s.',
            m.predictedMs > 0 ? (m.predicted * 1000) / m.predictedMs : 0,
          ],
          ['requests_processing', 'gauge', 'Number of requests processing.', m.processing],
          ['requests_deferred', 'gauge', 'Number of requests deferred.', 0],
          ...(faults.has('llamacpp_old_metric_names')
            ? ([
                ['kv_cache_usage_ratio', 'gauge', 'KV-cache usage. 1 means 100 percent usage.', 0],
                ['kv_cache_tokens', 'gauge', 'KV-cache tokens.', 0],
              ] as const)
            : []),
        ]
        const body = rows.flatMap(([name, type, help, value]) => [
          `# HELP llamacpp:${name} ${help}`,
          `# TYPE llamacpp:${name} ${type}`,
          sampleLine(`llamacpp:${name}`, {}, value, cppDouble),
        ])
        return {
          status: 200,
          headers: { 'content-type': 'text/plain; version=0.0.4', 'process-start-time-unix': String(startedAt) },
          body: `${body.join('\n')}\n`,
        }
      }
      if (req.path.startsWith('/v1/')) return null
      return json(404, { error: { code: 404, message: 'File Not Found', type: 'not_found_error' } })
    },
    record(s) {
      const task = m.tasks++
      const promptMs = s.ttftS * 1000
      const genMs = Math.max(0, (s.e2eS - s.ttftS) * 1000)
      m.promptTokens += s.tokens.length
      m.promptMs += promptMs
      m.predicted += s.completionTokens
      m.predictedMs += genMs
      const decodes = 1 + s.completionTokens
      m.decodes += decodes
      m.busySum += decodes * Math.max(1, m.processing)
      m.tokensMax = Math.max(m.tokensMax, s.tokens.length + s.completionTokens)
      const rate = (n: number, ms: number): string =>
        `${(ms / Math.max(1, n)).toFixed(2).padStart(8)} ms per token, ${(ms > 0 ? (n * 1000) / ms : 0).toFixed(2).padStart(8)} tokens per second`
      return [
        slotLine('launch_slot_', 0, task, 'processing task'),
        slotLine('print_timing', 0, task, ''),
        `prompt eval time = ${promptMs.toFixed(2).padStart(10)} ms / ${String(s.tokens.length).padStart(5)} tokens (${rate(s.tokens.length, promptMs)})`,
        `       eval time = ${genMs.toFixed(2).padStart(10)} ms / ${String(s.completionTokens).padStart(5)} tokens (${rate(s.completionTokens, genMs)})`,
        `      total time = ${(promptMs + genMs).toFixed(2).padStart(10)} ms / ${String(s.tokens.length + s.completionTokens).padStart(5)} tokens`,
        `${tag('srv ', 'update_slots')} all slots are idle`,
      ]
    },
    running(delta) {
      m.processing += delta
    },
    modelList() {
      return {
        object: 'list',
        data: [
          {
            id: alias,
            object: 'model',
            created: Math.floor(Date.now() / 1000),
            owned_by: 'llamacpp',
            meta: { vocab_type: 2, n_vocab: 151936, n_ctx_train: N_CTX_TRAIN, n_embd: 896, n_params: 494032768, size: 1260000000 },
          },
        ],
      }
    },
    stats() {
      return {
        profile: 'llama.cpp',
        resolved: { n_parallel: slots, asked, kv_unified: kvUnified, n_ctx: nCtx, n_ctx_seq: nCtxSeq },
        faults: [...faults],
      }
    },
  }
  return { kind: 'engine', engine }
}
