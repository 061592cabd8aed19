// The llama.cpp profile (`llama-server -m … -np N`), printing and serving what the real de3ff81 build
// does (fixtures/real/llama.cpp/de3ff81/, compared by test/real/emulation.test.ts): the command line
// of ./llamacpp-args.ts; every log line prefixed with the time since start and a level letter
// (`0.00.020.523 I srv    load_model: …`; --no-log-timestamps keeps the letter, --no-log-prefix
// drops both, the first line keeps it); a boot that begins `srv  llama_server: initializing ...`,
// binds its port at once and answers 503 while it loads, and prints what it resolved when loading
// ends (`srv    load_model: initializing, n_slots = N, n_ctx_slot = C, kv_unified = 'B'`), the
// auto line and the llama_context block only at -lv 4; /props with total_slots and n_ctx per slot;
// /slots; /metrics only with --metrics (501 otherwise), `llamacpp:` families with no labels and
// values with 6 significant digits, prompt_tokens_cached_total moved by the prompt cache (off with
// --no-cache-prompt); images refused with a 500 without --mmproj, a prompt past a slot's context
// with a 400 that says both token counts; print_timing lines per request.
import type { ProfileFaults } from './faults.ts'
import { llamaHelp, parseLlama } from './llamacpp-args.ts'
import { sampleLine } from './prom-text.ts'
import { json } from './types.ts'
import type { ProfileEngine, Reply, Start } from './types.ts'

export const BUILD = { number: 1, commit: 'de3ff81' }
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

/** common/log.cpp's time prefix: minutes.seconds.milliseconds.microseconds since the start. */
export function elapsedPrefix(ms: number): string {
  const us = Math.max(0, Math.floor(ms * 1000))
  const min = Math.floor(us / 60e6)
  const s = Math.floor(us / 1e6) % 60
  return `${min}.${String(s).padStart(2, '0')}.${String(Math.floor(us / 1000) % 1000).padStart(3, '0')}.${String(us % 1000).padStart(3, '0')}`
}

/** An endpoint the server was started without (de3ff81's 501, fixtures/real/llama.cpp/de3ff81/metrics-disabled.txt). */
const notSupported = (endpoint: string, flag: string): Reply => ({
  status: 501,
  headers: { 'content-type': 'application/json; charset=utf-8' },
  body: JSON.stringify({
    error: {
      code: 501,
      message: `This server does not support ${endpoint} endpoint. Start it with \`${flag}\``,
      type: 'not_supported_error',
    },
  }),
})

const tag = (subsystem: 'srv ' | 'slot' | 'cmn ', fn: string): string => `${subsystem} ${fn.slice(0, 12).padStart(12)}:`
type Level = 'I' | 'W' | 'E'

export function startLlama(argv: readonly string[], env: NodeJS.ProcessEnv, faults: ProfileFaults): Start {
  const t0 = performance.now()
  const first = `${elapsedPrefix(performance.now() - t0)} I ${tag('srv ', 'llama_server')} initializing ...`
  const parsed = parseLlama(argv, env)
  if (parsed.kind === 'help') return { kind: 'exit', code: 0, stdout: llamaHelp(), stderr: `${first}\n` }
  if (parsed.kind === 'error') return { kind: 'exit', code: 1, stdout: '', stderr: `${first}\n${parsed.message}\n` }
  const v = parsed.values
  const on = (key: string, byDefault: boolean): boolean => (v.has(key) ? v.get(key) === true : byDefault)
  const verbosity = v.get('verbose') === true ? 99 : ((v.get('verbosity') as number | undefined) ?? 3)
  const prefixOn = on('log_prefix', true)
  const timesOn = on('log_timestamps', true)
  /** One log line as common/log.cpp writes it; null when `level` is above the verbosity (trace is 4). */
  const line = (level: Level, text: string, at = 3): string | null => {
    if (at > verbosity) return null
    if (!prefixOn) return text
    return `${timesOn ? `${elapsedPrefix(performance.now() - t0)} ` : ''}${level} ${text}`
  }
  const lines = (...xs: Array<string | null>): string[] => xs.filter((x): x is string => x !== null)
  const asked = (v.get('n_parallel') as number | undefined) ?? -1
  const auto = asked === -1
  const slots = auto ? AUTO_PARALLEL : asked
  const kvUnified = on('kv_unified', auto)
  const ctxAsked = (v.get('ctx_size') as number | undefined) ?? 0
  // -c 0: the training context for each sequence (common_fit_params: "using T for S sequences").
  const nCtx = ctxAsked || N_CTX_TRAIN * slots
  const nCtxSeq = kvUnified ? nCtx : Math.floor(nCtx / slots)
  const nCtxSlot = Math.min(nCtxSeq, N_CTX_TRAIN)
  const modelPath = String(v.get('model') ?? 'models/7B/ggml-model-f16.gguf')
  const alias = (v.get('alias') as string | undefined) ?? modelPath
  const metricsOn = on('metrics', false)
  const slotsOn = on('slots', true)
  const cachePrompt = on('cache_prompt', true)
  const jinja = on('jinja', true)
  const vision = v.has('mmproj')
  const m = {
    promptTokens: 0,
    cached: 0,
    promptMs: 0,
    predicted: 0,
    predictedMs: 0,
    decodes: 0,
    busySum: 0,
    tokensMax: 0,
    processing: 0,
    tasks: 0,
  }
  // What each slot's cache holds: the last prompt served there (the prompt cache reuses its common prefix).
  const slotCache: string[][] = Array.from({ length: slots }, () => [])
  const still = faults.has('llamacpp_meter_still')
  // Process-Start-Time-Unix: llama.cpp sends ggml_time_us() of the metrics' start, a monotonic clock, not a Unix time.
  const tStart = Number(process.hrtime.bigint() / 1000n)
  const slotLine = (fn: string, id: number, task: number, text: string) =>
    line('I', `${tag('slot', fn)} id ${String(id).padStart(2)} | task ${task} | ${text}`)
  const refused = (status: number, message: string, type: string): Reply & { log: string[] } => {
    const body = JSON.stringify({ error: { code: status, message, type } })
    return {
      status,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body,
      log: lines(line('W', `${tag('srv ', 'operator()')} got exception: ${body}`)),
    }
  }
  const engine: ProfileEngine = {
    profile: 'llama.cpp',
    host: String(v.get('host') ?? '127.0.0.1'),
    port: Number(v.get('port') ?? 8080),
    servedNames: [alias],
    apiKey: (v.get('api_key') as string | undefined) ?? null,
    unauthorized: () => json(401, { error: { code: 401, message: 'Invalid API Key', type: 'authentication_error' } }),
    bootLines() {
      return [
        first,
        // Printed by the argument parser itself, before the logger's prefix applies.
        ...parsed.warnings,
        ...lines(
          line(
            'I',
            `${tag('cmn ', 'common_param')} common_params_print_info: build ${BUILD.number} (${BUILD.commit}) with GNU 12.2.0 for Linux x86_64`,
            4,
          ),
          line(
            'I',
            `${tag('cmn ', 'common_param')} common_params_print_info: verbosity = ${verbosity} (adjust with the \`-lv N\` CLI arg)`,
          ),
          line(
            'I',
            `${tag('cmn ', 'common_param')} system_info: n_threads = 16 (n_threads_batch = 16) / 32 | CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | OPENMP = 1 | REPACK = 1 | `,
            4,
          ),
          auto
            ? line(
                'I',
                `${tag('srv ', 'llama_server')} n_parallel is set to auto, using n_parallel = ${slots} and kv_unified = ${kvUnified}`,
                4,
              )
            : null,
          line('I', `${tag('srv ', 'init')} using 8 threads for HTTP server`, 4),
          engine.apiKey === null
            ? line(
                'W',
                `${tag('srv ', 'llama_server')} security: no API key is set and CORS allows all origins (see https://github.com/ggml-org/llama.cpp/pull/25655)`,
              )
            : null,
          line('I', `${tag('srv ', 'load_model')} loading model '${modelPath}'`),
        ),
      ]
    },
    // The port is bound before the model loads: nothing is printed then (503 while loading).
    listeningLines() {
      return []
    },
    loadedLines(_now, port) {
      const context = (key: string, value: string | number) => line('I', `llama_context: ${key.padEnd(21)} = ${value}`, 4)
      return lines(
        line('I', 'llama_context: constructing llama_context', 4),
        context('n_seq_max', slots),
        context('n_ctx', nCtx),
        context('n_ctx_seq', nCtxSeq),
        context('n_batch', 2048),
        context('n_ubatch', 512),
        context('flash_attn', 'auto'),
        context('kv_unified', String(kvUnified)),
        nCtxSeq > N_CTX_TRAIN
          ? line('W', `llama_context: n_ctx_seq (${nCtxSeq}) > n_ctx_train (${N_CTX_TRAIN}) -- possible training context overflow`)
          : null,
        line('I', `${tag('cmn ', 'init')} llama threadpool init, n_threads = 16`),
        nCtxSeq > N_CTX_TRAIN
          ? line(
              'W',
              `${tag('srv ', 'load_model')} the slot context (${nCtxSeq}) exceeds the training context of the model (${N_CTX_TRAIN}) - capping`,
            )
          : null,
        line(
          'I',
          `${tag('srv ', 'load_model')} initializing, n_slots = ${slots + (faults.has('llamacpp_log_differs') ? 1 : 0)}, n_ctx_slot = ${nCtxSlot}, kv_unified = '${kvUnified}'`,
        ),
        ...Array.from({ length: slots }, (_, id) => slotLine('load_model', id, -1, `new slot, n_ctx = ${nCtxSlot}`)).map((l) =>
          verbosity >= 4 ? l : null,
        ),
        line('I', `${tag('srv ', 'load_model')} prompt cache is enabled, size limit: 8192 MiB`, 4),
        line('I', `${tag('srv ', 'load_model')} use \`--cache-ram 0\` to disable the prompt cache`, 4),
        line('I', `${tag('srv ', 'llama_server')} model loaded`),
        line('I', `${tag('srv ', 'llama_server')} listening on http://${engine.host}:${port}`),
        line('I', `${tag('srv ', 'update_slots')} all slots are idle`, 4),
      )
    },
    refuse(body, promptTokens) {
      if (promptTokens >= nCtxSlot)
        return {
          status: 400,
          headers: { 'content-type': 'application/json; charset=utf-8' },
          body: JSON.stringify({
            error: {
              code: 400,
              message: `request (${promptTokens} tokens) exceeds the available context size (${nCtxSlot} tokens), try increasing it`,
              type: 'exceed_context_size_error',
              n_prompt_tokens: promptTokens,
              n_ctx: nCtxSlot,
            },
          }),
        }
      const messages = Array.isArray(body.messages) ? (body.messages as Array<{ content?: unknown }>) : []
      const image = messages.some(
        (x) => Array.isArray(x.content) && (x.content as Array<{ type?: unknown }>).some((p) => p.type === 'image_url'),
      )
      if (image && !vision)
        return refused(
          500,
          'image input is not supported - hint: if this is unexpected, you may need to provide the mmproj',
          'server_error',
        )
      if (!jinja && Array.isArray(body.tools)) return refused(500, 'tools param requires --jinja flag', 'server_error')
      return null
    },
    answer(req, loading) {
      if (loading)
        return {
          status: 503,
          headers: { 'content-type': 'application/json; charset=utf-8' },
          body: JSON.stringify({ error: { message: 'Loading model', type: 'unavailable_error', code: 503 } }),
        }
      if (req.path === '/health' || req.path === '/v1/health') return json(200, { status: 'ok' })
      if (req.path === '/props') {
        return json(200, {
          default_generation_settings: { params: { n_predict: -1, temperature: 0.8, top_k: 40, top_p: 0.95 }, n_ctx: nCtxSlot },
          total_slots: slots + (faults.has('llamacpp_props_differs') ? 1 : 0),
          model_alias: alias,
          model_path: modelPath,
          modalities: { vision, video: false, audio: false },
          endpoint_slots: slotsOn,
          endpoint_props: on('props', false),
          endpoint_metrics: metricsOn,
          ui: true,
          chat_template:
            "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}",
          bos_token: '<|endoftext|>',
          eos_token: '<|im_end|>',
          build_info: `b${BUILD.number}-${BUILD.commit}`,
        })
      }
      if (req.path === '/slots') {
        if (!slotsOn) return notSupported('slots', '--slots')
        return json(
          200,
          Array.from({ length: slots }, (_, id) => ({
            id,
            id_task: -1,
            n_ctx: nCtxSlot,
            speculative: false,
            is_processing: id < m.processing,
          })),
        )
      }
      if (req.path === '/metrics') {
        if (!metricsOn) return notSupported('metrics', '--metrics')
        const z = (n: number): number => (still ? 0 : n)
        const rows: ReadonlyArray<readonly [string, 'counter' | 'gauge', string, number]> = [
          ['prompt_tokens_total', 'counter', 'Number of prompt tokens processed, excluding cached tokens', z(m.promptTokens)],
          ['prompt_tokens_cached_total', 'counter', 'Number of prompt tokens reused from the cache', z(m.cached)],
          ['prompt_seconds_total', 'counter', 'Total time spent processing prompts', z(m.promptMs / 1000)],
          ['tokens_predicted_total', 'counter', 'Number of generation tokens processed', z(m.predicted)],
          ['tokens_predicted_seconds_total', 'counter', 'Total time spent generating tokens', z(m.predictedMs / 1000)],
          [
            'n_decode_total',
            'counter',
            'Total number of llama_decode() calls, excluding speculative decoding and multimodal decoding',
            z(m.decodes),
          ],
          ['n_tokens_max', 'counter', 'Largest observed sequence length (prompt + generation)', m.tokensMax],
          ['spec_decode_num_draft_tokens_total', 'counter', 'Speculative: Total draft tokens generated', 0],
          ['spec_decode_num_accepted_tokens_total', 'counter', 'Speculative: Total draft tokens accepted by the target model', 0],
          ['spec_decode_num_drafts_total', 'counter', 'Speculative: Total speculative decoding verification steps', 0],
          [
            'prompt_tokens_seconds',
            'gauge',
            'Average prompt throughput in tokens/s',
            m.promptMs > 0 ? (m.promptTokens * 1000) / m.promptMs : 0,
          ],
          [
            'predicted_tokens_seconds',
            'gauge',
            'Average generation throughput in tokens/s',
            m.predictedMs > 0 ? (m.predicted * 1000) / m.predictedMs : 0,
          ],
          ['requests_processing', 'gauge', 'Number of requests processing', m.processing],
          ['requests_deferred', 'gauge', 'Number of requests deferred', 0],
          [
            'n_busy_slots_per_decode',
            'gauge',
            'Average number of busy slots per llama_decode() call',
            m.decodes > 0 ? m.busySum / m.decodes : 0,
          ],
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
          headers: { 'content-type': 'text/plain; version=0.0.4', 'process-start-time-unix': String(tStart) },
          body: `${body.join('\n')}\n`,
        }
      }
      if (req.path.startsWith('/v1/')) return null
      return json(404, { error: { code: 404, message: 'File Not Found', type: 'not_found_error' } })
    },
    record(s) {
      const task = m.tasks++
      // The slot whose cache shares the longest prefix with this prompt (LCP similarity), else the first.
      const common = (a: readonly string[]) => {
        let n = 0
        while (n < a.length && n < s.tokens.length && a[n] === s.tokens[n]) n++
        return n
      }
      let id = 0
      for (let i = 1; i < slots; i++) if (common(slotCache[i]!) > common(slotCache[id]!)) id = i
      const reused = cachePrompt ? Math.min(common(slotCache[id]!), Math.max(0, s.tokens.length - 1)) : 0
      slotCache[id] = cachePrompt ? [...s.tokens] : []
      const evaluated = s.tokens.length - reused
      const promptMs = s.ttftS * 1000
      const genMs = Math.max(0, (s.e2eS - s.ttftS) * 1000)
      m.promptTokens += evaluated
      m.cached += reused
      m.promptMs += promptMs
      m.predicted += s.completionTokens
      m.predictedMs += genMs
      const decodes = 1 + s.completionTokens
      m.decodes += decodes
      m.busySum += decodes * Math.max(1, m.processing)
      m.tokensMax = Math.max(m.tokensMax, s.tokens.length + s.completionTokens)
      const rate = (n: number, ms: number): string =>
        `${(ms / Math.max(1, n)).toFixed(2).padStart(8)} ms per token, ${(ms > 0 ? (n * 1000) / ms : 0).toFixed(2).padStart(8)} tokens per second`
      return lines(
        slotLine('get_availabl', id, -1, reused > 0 ? 'selected slot by LCP similarity' : 'selected slot by LRU, t_last = -1'),
        slotLine('launch_slot_', id, task, 'processing task, is_child = 0'),
        slotLine(
          'print_timing',
          id,
          task,
          `prompt eval time = ${promptMs.toFixed(2).padStart(10)} ms / ${String(evaluated).padStart(5)} tokens (${rate(evaluated, promptMs)})`,
        ),
        slotLine(
          'print_timing',
          id,
          task,
          `       eval time = ${genMs.toFixed(2).padStart(10)} ms / ${String(s.completionTokens).padStart(5)} tokens (${rate(s.completionTokens, genMs)})`,
        ),
        slotLine(
          'print_timing',
          id,
          task,
          `      total time = ${(promptMs + genMs).toFixed(2).padStart(10)} ms / ${String(evaluated + s.completionTokens).padStart(5)} tokens`,
        ),
        slotLine('release', id, task, `stop processing: n_tokens = ${s.tokens.length + s.completionTokens}, truncated = 0`),
        line('I', `${tag('srv ', 'update_slots')} all slots are idle`, 4),
      )
    },
    running(delta) {
      m.processing += delta
    },
    modelList() {
      return {
        models: [
          {
            name: alias,
            model: alias,
            modified_at: '',
            size: '',
            digest: '',
            type: 'model',
            description: '',
            tags: [''],
            capabilities: ['completion'],
            parameters: '',
            details: { parent_model: '', format: 'gguf', family: '', families: [''], parameter_size: '', quantization_level: '' },
          },
        ],
        object: 'list',
        data: [
          {
            id: alias,
            aliases: [alias],
            tags: [],
            object: 'model',
            created: Math.floor(Date.now() / 1000),
            owned_by: 'llamacpp',
            meta: {
              vocab_type: 2,
              n_vocab: 151936,
              n_ctx: nCtx,
              n_ctx_train: N_CTX_TRAIN,
              n_embd: 896,
              n_params: 494032768,
              size: 1260000000,
              ftype: 'Q8_0',
            },
          },
        ],
      }
    },
    stats() {
      return {
        profile: 'llama.cpp',
        resolved: {
          n_parallel: slots,
          asked,
          kv_unified: kvUnified,
          n_ctx: nCtx,
          n_ctx_seq: nCtxSeq,
          cache_prompt: cachePrompt,
          verbosity,
        },
        faults: [...faults],
      }
    },
  }
  return { kind: 'engine', engine }
}
