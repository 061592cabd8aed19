// The vLLM profile of the reference engine (`vllm serve …`), shaped after the real build of
// fixtures/real/vllm/9aaf83ef5 (stock source built for CPU; test/real/vllm-emulation.test.ts
// compares the two): the command line of ./vllm-args.ts, the startup log (the logo, `non-default
// args: {…}` keyed by dest holding only what differs from the parser's defaults, the `Initializing
// a V1 LLM engine (v…) with config: key=value, …` line of VllmConfig.__str__, each behind its
// process's tag), /health (empty 200), /version, /v1/models, /metrics always (./vllm-metrics.ts),
// /server_info only under VLLM_SERVER_DEV_MODE=1, the real 400s (tools without
// --enable-auto-tool-choice, an image for a text-only model, prompt and max_tokens past
// max_model_len: ./vllm-refusals.ts), and a prefix cache of `block_size` blocks (128, as the CPU
// build chooses) that hits only when caching is on and only for whole blocks.
import { BlockPrefixCache } from './prefix-cache.ts'
import type { ProfileFaults } from './faults.ts'
import { observe } from './prom-text.ts'
import { PyFloat, pyRepr, pyStrOf } from './pyrepr.ts'
import type { PyValue } from './pyrepr.ts'
import { json } from './types.ts'
import type { ProfileEngine, Reply, Request, Served, Start } from './types.ts'
import { parseVllmServe, vllmDefaults } from './vllm-args.ts'
import { VLLM_TOP_USAGE, vllmServeHelp, vllmTopHelp } from './vllm-help.ts'
import { thousands, versionMessage, vllmLog } from './vllm-log.ts'
import { VLLM_METRICS_CONTENT_TYPE, vllmMeters, vllmMetricsPage } from './vllm-metrics.ts'
import { vllmRefusal, vllmReply } from './vllm-refusals.ts'

export const VLLM_VERSION = '0.23.0'
/** The real CPU build's KV cache: 8192 blocks of 128 tokens (1 GiB; `GPU KV cache size: 1,048,576 tokens`). */
export const NUM_GPU_BLOCKS = 8192
/** The block size the real CPU build chooses when --block-size is not given (cache_config_info block_size="128"); GPU builds choose 16 or more. */
export const DEFAULT_BLOCK_SIZE = 128
const KV_CACHE_MEMORY_BYTES = 1073741824
const TORCH_DTYPE: Record<string, string> = {
  auto: 'torch.bfloat16',
  bfloat16: 'torch.bfloat16',
  half: 'torch.float16',
  float16: 'torch.float16',
  float: 'torch.float32',
  float32: 'torch.float32',
}
const SENSITIVE = new Set(['api_key', 'hf_token', 'watermark_config'])

const pyEqual = (a: PyValue, b: PyValue): boolean => pyRepr(a) === pyRepr(b)

/** What the engine resolved from the parsed flags, the way VllmConfig ends up. */
export interface VllmResolved {
  model: string
  servedNames: string[]
  host: string
  port: number
  apiKey: string | null
  maxModelLen: number
  maxNumSeqs: number
  maxNumBatchedTokens: number
  blockSize: number
  /** --block-size was given (cache_config_info's user_specified_block_size). */
  blockSizeGiven: boolean
  enablePrefixCaching: boolean
  kvCacheDtype: string
  enableChunkedPrefill: boolean
  values: Map<string, PyValue>
  nonDefault: Array<[string, PyValue]>
}

export function resolveVllm(values: Map<string, PyValue>, faults: ProfileFaults): VllmResolved {
  const get = (k: string) => values.get(k) ?? null
  if (get('model_tag') !== null) values.set('model', get('model_tag'))
  const defaults = vllmDefaults()
  const nonDefault = [...values].filter(([k, v]) => !pyEqual(v, defaults.get(k) ?? null))
  const model = String(get('model'))
  const served = get('served_model_name')
  const asked = String(get('kv_cache_dtype'))
  const apiKey = get('api_key')
  return {
    model,
    servedNames: Array.isArray(served) ? served.map(String) : served === null ? [model] : [String(served)],
    host: (get('host') as string | null) ?? '0.0.0.0',
    port: Number(get('port')),
    apiKey: Array.isArray(apiKey) ? String(apiKey[0]) : null,
    maxModelLen: (get('max_model_len') as number | null) ?? 40960,
    maxNumSeqs: (get('max_num_seqs') as number | null) ?? 256,
    maxNumBatchedTokens: (get('max_num_batched_tokens') as number | null) ?? 2048,
    blockSize: (get('block_size') as number | null) ?? DEFAULT_BLOCK_SIZE,
    blockSizeGiven: get('block_size') !== null,
    enablePrefixCaching: (get('enable_prefix_caching') as boolean | null) ?? true,
    kvCacheDtype: faults.has('vllm_kv_fp8_fallback') && asked.startsWith('fp8') ? 'auto' : asked,
    enableChunkedPrefill: (get('enable_chunked_prefill') as boolean | null) ?? true,
    values,
    nonDefault,
  }
}

/** `CacheConfig.metrics_info()`: every field as str(), what `vllm:cache_config_info` carries (the real build's fields, in its order). */
export function cacheConfigInfo(r: VllmResolved, gpuMemoryUtilization: number): Record<string, string> {
  const fields: Array<[string, PyValue]> = [
    ['_block_size_resolved', true],
    ['block_size', r.blockSize],
    ['cache_dtype', r.kvCacheDtype],
    ['calculate_kv_scales', false],
    ['enable_prefix_caching', r.enablePrefixCaching],
    ['gpu_memory_utilization', new PyFloat(gpuMemoryUtilization)],
    ['hash_block_size', null],
    ['is_attention_free', false],
    ['kv_cache_dtype_skip_layers', []],
    ['kv_cache_memory_bytes', KV_CACHE_MEMORY_BYTES],
    ['kv_offloading_backend', 'native'],
    ['kv_offloading_size', null],
    ['kv_sharing_fast_prefill', false],
    ['mamba_block_size', null],
    ['mamba_cache_dtype', 'auto'],
    ['mamba_cache_mode', 'none'],
    ['mamba_page_size_padded', null],
    ['mamba_ssm_cache_dtype', 'auto'],
    ['num_cpu_blocks', null],
    ['num_gpu_blocks', NUM_GPU_BLOCKS],
    ['num_gpu_blocks_override', null],
    ['prefix_caching_hash_algo', 'sha256'],
    ['sliding_window', null],
    ['user_specified_block_size', r.blockSizeGiven],
    ['user_specified_mamba_block_size', false],
  ]
  return Object.fromEntries(fields.map(([k, v]) => [k, pyStrOf(v)]))
}

/** `VllmConfig.__str__`: the flat `key=value, ` list of the engine config line, the real build's keys in its order (max_num_seqs is not in it). */
export function vllmConfigString(r: VllmResolved, shown: { enablePrefixCaching: boolean; kvCacheDtype: string }): string {
  const v = (k: string): PyValue => r.values.get(k) ?? null
  const eager = v('enforce_eager') === true
  const parts: Array<[string, string]> = [
    ['model', pyRepr(r.model)],
    ['speculative_config', 'None'],
    ['tokenizer', pyRepr(r.model)],
    ['skip_tokenizer_init', 'False'],
    ['tokenizer_mode', 'auto'],
    ['revision', 'None'],
    ['tokenizer_revision', 'None'],
    ['trust_remote_code', pyStrOf(v('trust_remote_code'))],
    ['dtype', TORCH_DTYPE[String(v('dtype'))] ?? 'torch.bfloat16'],
    ['max_seq_len', String(r.maxModelLen)],
    ['download_dir', 'None'],
    ['load_format', String(v('load_format') ?? 'auto')],
    ['tensor_parallel_size', String(v('tensor_parallel_size'))],
    ['pipeline_parallel_size', '1'],
    ['data_parallel_size', '1'],
    ['decode_context_parallel_size', '1'],
    ['dcp_comm_backend', 'ag_rs'],
    ['disable_custom_all_reduce', 'True'],
    ['quantization', 'None'],
    ['quantization_config', 'None'],
    ['enforce_eager', eager ? 'True' : 'False'],
    ['enable_return_routed_experts', 'False'],
    ['kv_cache_dtype', shown.kvCacheDtype],
    ['device_config', 'cpu'],
    [
      'structured_outputs_config',
      "StructuredOutputsConfig(backend='auto', disable_any_whitespace=False, disable_additional_properties=False, reasoning_parser='', reasoning_parser_plugin='', enable_in_reasoning=False)",
    ],
    [
      'observability_config',
      `ObservabilityConfig(show_hidden_metrics_for_version=${pyRepr(v('show_hidden_metrics_for_version'))}, otlp_traces_endpoint=None, collect_detailed_traces=None, kv_cache_metrics=False, kv_cache_metrics_sample=0.01, cudagraph_metrics=False, enable_layerwise_nvtx_tracing=False, enable_mfu_metrics=False, enable_mm_processor_stats=False, enable_logging_iteration_details=False)`,
    ],
    ['seed', String(v('seed'))],
    ['served_model_name', r.servedNames[0]!],
    ['enable_prefix_caching', shown.enablePrefixCaching ? 'True' : 'False'],
    ['enable_chunked_prefill', r.enableChunkedPrefill ? 'True' : 'False'],
    ['pooler_config', 'None'],
    [
      'compilation_config',
      `{'mode': <CompilationMode.${eager ? 'NONE: 0' : 'DYNAMO_TRACE_ONCE: 2'}>, 'backend': 'inductor', 'custom_ops': ['none'], 'splitting_ops': [], 'compile_ranges_endpoints': [${r.maxNumBatchedTokens}], 'cudagraph_mode': <CUDAGraphMode.NONE: 0>, 'cudagraph_capture_sizes': [], 'max_cudagraph_capture_size': None}`,
    ],
    [
      'kernel_config',
      "KernelConfig(ir_op_priority=IrOpPriorityConfig(rms_norm=['native'], fused_add_rms_norm=['native']), enable_flashinfer_autotune=True, moe_backend='auto', linear_backend='auto')",
    ],
  ]
  return parts.map(([k, val]) => `${k}=${val}`).join(', ')
}

export function startVllm(argv: readonly string[], env: NodeJS.ProcessEnv, faults: ProfileFaults, pid: number): Start {
  if (argv.length === 0 || argv[0] === '-h' || argv[0] === '--help') return { kind: 'exit', code: 0, stdout: vllmTopHelp(), stderr: '' }
  if (argv[0] === '-v' || argv[0] === '--version') return { kind: 'exit', code: 0, stdout: `${VLLM_VERSION}\n`, stderr: '' }
  if (argv[0] !== 'serve') {
    const choices = ['chat', 'complete', 'serve', 'bench', 'collect-env', 'run-batch'].map((c) => `'${c}'`).join(', ')
    return {
      kind: 'exit',
      code: 2,
      stdout: '',
      stderr: `${VLLM_TOP_USAGE}\nvllm: error: argument subparser: invalid choice: ${pyRepr(argv[0]!)} (choose from ${choices})\n`,
    }
  }
  const parsed = parseVllmServe(argv)
  if (parsed.kind === 'help') return { kind: 'exit', code: 0, stdout: vllmServeHelp(parsed.keyword), stderr: '' }
  if (parsed.kind === 'exit') return parsed
  return { kind: 'engine', engine: vllmEngine(resolveVllm(parsed.values, faults), parsed.warnings, env, faults, pid) }
}

function vllmEngine(
  r: VllmResolved,
  warnings: readonly string[],
  env: NodeJS.ProcessEnv,
  faults: ProfileFaults,
  pid: number,
): ProfileEngine {
  const meters = vllmMeters(r.maxModelLen)
  const cache = new BlockPrefixCache(r.blockSize)
  const gpuMemoryUtilization = Number(r.values.get('gpu_memory_utilization') ?? 0.92)
  const devMode = env.VLLM_SERVER_DEV_MODE === '1'
  const serving = {
    maxModelLen: r.maxModelLen,
    autoToolChoice: r.values.get('enable_auto_tool_choice') === true && r.values.get('tool_call_parser') !== null,
    multimodal: env.REF_TEXT_ONLY_MODEL !== '1',
    servedName: r.servedNames[0]!,
  }
  const lie = faults.has('vllm_args_line_differs')
  const otherDtype = (d: string): string => (d === 'auto' ? 'fp8' : 'auto')
  const info = (): Record<string, string> => {
    if (!faults.has('vllm_cache_info_differs')) return cacheConfigInfo(r, gpuMemoryUtilization)
    return cacheConfigInfo(
      { ...r, enablePrefixCaching: !r.enablePrefixCaching, kvCacheDtype: otherDtype(r.kvCacheDtype) },
      gpuMemoryUtilization,
    )
  }
  const config = vllmConfigString(r, lie ? { enablePrefixCaching: !r.enablePrefixCaching, kvCacheDtype: otherDtype(r.kvCacheDtype) } : r)
  const api = (now: Date, fileinfo: string, message: string, level: 'INFO' | 'WARNING' = 'INFO') =>
    vllmLog('APIServer', pid, level, now, fileinfo, message)
  const core = (now: Date, fileinfo: string, message: string) => vllmLog('EngineCore', pid, 'INFO', now, fileinfo, message)
  const worker = (now: Date, fileinfo: string, message: string) => vllmLog('Worker', pid, 'INFO', now, fileinfo, message)
  return {
    profile: 'vllm',
    host: r.host,
    port: r.port,
    servedNames: r.servedNames,
    apiKey: r.apiKey,
    unauthorized: () => json(401, { error: 'Unauthorized' }),
    bootLines(now) {
      const shown = r.nonDefault.map(([k, v]): [string, PyValue] => [
        k,
        SENSITIVE.has(k) ? '***' : lie && k === 'max_num_seqs' ? Number(v) + 1 : v,
      ])
      const dtype = String(r.values.get('kv_cache_dtype'))
      return [
        ...warnings.flatMap((w) => api(now, 'argparse_utils.py:283', w, 'WARNING')),
        ...api(
          now,
          'utils.py:306',
          versionMessage(VLLM_VERSION, r.model, env.VLLM_DISABLE_LOG_LOGO === undefined || env.VLLM_DISABLE_LOG_LOGO === '0'),
        ),
        ...api(now, 'utils.py:240', `non-default args: ${pyRepr(Object.fromEntries(shown))}`),
        ...(dtype.startsWith('fp8')
          ? api(
              now,
              'cache.py:141',
              `Using ${dtype} data type to store kv cache. It reduces the GPU memory footprint and boosts performance. Meanwhile, it may cause accuracy drop without a proper scaling factor.`,
            )
          : []),
        ...api(now, 'model.py:576', 'Resolved architecture: Qwen3ForCausalLM'),
        ...api(now, 'model.py:1711', `Using max model len ${r.maxModelLen}`),
        ...api(now, 'vllm.py:964', 'Asynchronous scheduling is enabled.'),
        ...core(now, 'core.py:109', `Initializing a V1 LLM engine (v${VLLM_VERSION}) with config: ${config}`),
        ...worker(now, 'cpu_model_runner.py:104', `Starting to load model ${r.model}...`),
        ...worker(now, 'cpu_model_runner.py:125', 'Warming up done.'),
        ...core(now, 'kv_cache_utils.py:1733', `GPU KV cache size: ${thousands(NUM_GPU_BLOCKS * r.blockSize)} tokens`),
        ...core(
          now,
          'kv_cache_utils.py:1734',
          `Maximum concurrency for ${thousands(r.maxModelLen)} tokens per request: ${((NUM_GPU_BLOCKS * r.blockSize) / r.maxModelLen).toFixed(2)}x`,
        ),
        ...core(now, 'core.py:306', 'init engine (profile, create kv cache, warmup model) took 1.00 s'),
        ...(devMode
          ? api(
              now,
              'api_server.py:1721',
              'SECURITY WARNING: Development endpoints are enabled! This should NOT be used in production!',
              'WARNING',
            )
          : []),
        ...api(now, 'api_server.py:599', "Supported tasks: ['generate']"),
      ]
    },
    listeningLines(now, port) {
      return [
        ...api(now, 'api_server.py:603', `Starting vLLM server on http://${r.host}:${port}`),
        ...api(now, 'launcher.py:37', 'Available routes are:'),
        // The routes the real build lists at the default log level (the rest only at DEBUG).
        ...[
          ['/openapi.json', 'HEAD, GET'],
          ['/docs', 'HEAD, GET'],
          ['/docs/oauth2-redirect', 'HEAD, GET'],
          ['/redoc', 'HEAD, GET'],
          ['/metrics', 'GET'],
        ].flatMap(([route, methods]) => api(now, 'launcher.py:46', `Route: ${route}, Methods: ${methods}`)),
        `(APIServer pid=${pid}) INFO:     Started server process [${pid}]`,
        `(APIServer pid=${pid}) INFO:     Waiting for application startup.`,
        `(APIServer pid=${pid}) INFO:     Application startup complete.`,
      ]
    },
    answer(req: Request): Reply | null {
      if (req.path === '/health' || req.path === '/ping') return { status: 200, body: '' }
      if (req.path === '/version') return json(200, { version: VLLM_VERSION })
      if (req.path === '/metrics') {
        const page = vllmMetricsPage(meters, {
          modelName: r.servedNames[0]!,
          blockSize: r.blockSize,
          numGpuBlocks: NUM_GPU_BLOCKS,
          maxModelLen: r.maxModelLen,
          cacheInfo: info(),
          old: faults.has('vllm_old_metric_names'),
        })
        return { status: 200, headers: { 'content-type': VLLM_METRICS_CONTENT_TYPE }, body: page }
      }
      if (req.path === '/server_info' && devMode) {
        const vllmEnv = Object.fromEntries(Object.entries(env).filter(([k]) => k.startsWith('VLLM_') && !k.includes('KEY')))
        if (req.query.get('config_format') === 'json') {
          return json(200, {
            vllm_config: {
              model_config: { model: r.model, served_model_name: r.servedNames[0], max_model_len: r.maxModelLen },
              cache_config: {
                ...info(),
                block_size: r.blockSize,
                enable_prefix_caching: r.enablePrefixCaching,
                cache_dtype: r.kvCacheDtype,
              },
              scheduler_config: {
                max_num_seqs: r.maxNumSeqs,
                max_num_batched_tokens: r.maxNumBatchedTokens,
                enable_chunked_prefill: r.enableChunkedPrefill,
              },
            },
            vllm_env: vllmEnv,
          })
        }
        return json(200, { vllm_config: config, vllm_env: vllmEnv })
      }
      if (req.path.startsWith('/v1/')) return null
      return json(404, { detail: 'Not Found' })
    },
    refuse(body, promptTokens) {
      return vllmRefusal(body, promptTokens, serving)
    },
    reply(response) {
      return vllmReply(response, VLLM_VERSION)
    },
    record(s: Served) {
      meters.promptTokens += s.tokens.length
      meters.generationTokens += s.completionTokens
      meters.success[s.finishReason === 'length' ? 'length' : s.finishReason === 'abort' ? 'abort' : 'stop'] += 1
      observe(meters.requestPromptTokens, s.tokens.length)
      observe(meters.requestGenerationTokens, s.completionTokens)
      observe(meters.paramsN, 1)
      let hit = 0
      if (r.enablePrefixCaching) {
        hit = cache.lookupAndInsert(s.tokens)
        meters.prefixQueries += s.tokens.length
        if (!faults.has('vllm_prefix_cache_still')) meters.prefixHits += hit
      }
      for (let left = s.tokens.length - hit; left > 0; left -= r.maxNumBatchedTokens)
        observe(meters.iterationTokens, Math.min(left, r.maxNumBatchedTokens))
      for (let i = 1; i < s.completionTokens; i++) observe(meters.iterationTokens, 1)
      observe(meters.ttft, s.ttftS)
      if (s.completionTokens > 1)
        for (let i = 1; i < s.completionTokens; i++) observe(meters.itl, (s.e2eS - s.ttftS) / (s.completionTokens - 1))
      observe(meters.e2e, s.e2eS)
      return []
    },
    running(delta) {
      meters.running += delta
    },
    modelList() {
      return {
        object: 'list',
        data: r.servedNames.map((id) => ({
          id,
          object: 'model',
          created: Math.floor(Date.now() / 1000),
          owned_by: 'vllm',
          root: r.model,
          parent: null,
          max_model_len: r.maxModelLen,
          permission: [
            {
              id: `modelperm-${process.getBuiltinModule('node:crypto').randomBytes(8).toString('hex')}`,
              object: 'model_permission',
              created: Math.floor(Date.now() / 1000),
              allow_create_engine: false,
              allow_sampling: true,
              allow_logprobs: true,
              allow_search_indices: false,
              allow_view: true,
              allow_fine_tuning: false,
              organization: '*',
              group: null,
              is_blocking: false,
            },
          ],
        })),
      }
    },
    stats() {
      return {
        profile: 'vllm',
        resolved: {
          max_num_seqs: r.maxNumSeqs,
          enable_prefix_caching: r.enablePrefixCaching,
          kv_cache_dtype: r.kvCacheDtype,
          block_size: r.blockSize,
        },
        prefix_cache: { queries: meters.prefixQueries, hits: meters.prefixHits },
        faults: [...faults],
      }
    },
  }
}
