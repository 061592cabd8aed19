// SGLang's command line (`python -m sglang.launch_server` / `sglang serve`): a plain argparse
// parser over the ServerArgs dataclass, `--x-y` ↔ field `x_y`, store_true for the
// `--enable-*`/`--disable-*` switches; the ServerArgs fields in dataclass order with their
// defaults, which the `server_args=ServerArgs(…)` line prints all of.
import { errorText, parseArgs } from './argparse.ts'
import type { OptionSpec, ParserSpec } from './argparse.ts'
import type { PyValue } from './pyrepr.ts'
import { PyFloat } from './pyrepr.ts'

const int = { kind: 'int' } as const
const str = { kind: 'str' } as const
const float = { kind: 'float' } as const
const o = (flag: string[] | string, rest: Omit<OptionSpec, 'strings' | 'group' | 'dest'> & { dest?: string }): OptionSpec => {
  const strings = Array.isArray(flag) ? flag : [flag]
  return { group: 'options', strings, dest: rest.dest ?? strings[0]!.slice(2).replaceAll('-', '_'), ...rest }
}

export const SGLANG_OPTIONS: readonly OptionSpec[] = [
  o(['--model-path', '--model'], {
    dest: 'model_path',
    action: 'store',
    type: str,
    default: null,
    required: true,
    help: 'The path of the model weights. This can be a local folder or a Hugging Face repo ID.',
  }),
  o('--tokenizer-path', { action: 'store', type: str, default: null, help: 'The path of the tokenizer.' }),
  o('--host', { action: 'store', type: str, default: '127.0.0.1', help: 'The host of the HTTP server.' }),
  o('--port', { action: 'store', type: int, default: 30000, help: 'The port of the HTTP server.' }),
  o('--served-model-name', {
    action: 'store',
    type: str,
    default: null,
    help: 'Override the model name returned by the v1/models endpoint in OpenAI API server.',
  }),
  o('--context-length', { action: 'store', type: int, default: null, help: "The model's maximum context length." }),
  o('--mem-fraction-static', {
    action: 'store',
    type: float,
    default: null,
    help: 'The fraction of the memory used for static allocation (model weights and KV cache memory pool).',
  }),
  o('--max-running-requests', { action: 'store', type: int, default: null, help: 'The maximum number of running requests.' }),
  o('--max-total-tokens', { action: 'store', type: int, default: null, help: 'The maximum number of tokens in the memory pool.' }),
  o('--chunked-prefill-size', {
    action: 'store',
    type: int,
    default: null,
    help: 'The maximum number of tokens in a chunk for the chunked prefill. Setting this to -1 means disabling chunked prefill.',
  }),
  o('--max-prefill-tokens', { action: 'store', type: int, default: 16384, help: 'The maximum number of tokens in a prefill batch.' }),
  o('--page-size', { action: 'store', type: int, default: 1, help: 'The number of tokens in a page.' }),
  o(['--tensor-parallel-size', '--tp-size'], {
    dest: 'tp_size',
    action: 'store',
    type: int,
    default: 1,
    help: 'The tensor parallelism size.',
  }),
  o(['--data-parallel-size', '--dp-size'], { dest: 'dp_size', action: 'store', type: int, default: 1, help: 'The data parallelism size.' }),
  o('--random-seed', { action: 'store', type: int, default: null, help: 'The random seed.' }),
  o('--log-level', { action: 'store', type: str, default: 'info', help: 'The logging level of all loggers.' }),
  o('--api-key', { action: 'store', type: str, default: null, help: 'Set API key of the server.' }),
  o('--enable-metrics', { action: 'store_true', default: false, help: 'Enable log prometheus metrics.' }),
  o('--enable-metrics-for-all-schedulers', {
    action: 'store_true',
    default: false,
    help: 'Enable --enable-metrics-for-all-schedulers when you want schedulers on all TP ranks to record request metrics separately.',
  }),
  o('--decode-log-interval', { action: 'store', type: int, default: 40, help: 'The log interval of decode batch.' }),
  o('--disable-radix-cache', { action: 'store_true', default: false, help: 'Disable RadixAttention for prefix caching.' }),
  o('--enable-cache-report', {
    action: 'store_true',
    default: false,
    help: 'Return number of cached tokens in usage.prompt_tokens_details for each openai request.',
  }),
  o('--speculative-algorithm', {
    action: 'store',
    type: { kind: 'choice', choices: ['EAGLE', 'EAGLE3', 'NEXTN', 'STANDALONE', 'NGRAM'] },
    default: null,
    help: 'Speculative algorithm.',
  }),
  o('--trust-remote-code', {
    action: 'store_true',
    default: false,
    help: 'Whether or not to allow for custom models defined on the Hub in their own modeling files.',
  }),
]

export const SGLANG_PARSER: ParserSpec = {
  prog: 'launch_server.py',
  usage: 'launch_server.py [-h] --model-path MODEL_PATH [options]',
  options: SGLANG_OPTIONS,
}

/** The chunk size __post_init__ picks when none is given (from the GPU memory; 8192 here). */
export const AUTO_CHUNKED_PREFILL = 8192
/** What the scheduler runs when --max-running-requests is not given (computed from the memory pool; 128 here). */
export const AUTO_MAX_RUNNING = 128

/** The ServerArgs fields in dataclass order, as the resolved-args line and /server_info show them. */
export function serverArgsFields(v: ReadonlyMap<string, PyValue>): Array<[string, PyValue]> {
  const g = (k: string): PyValue => v.get(k) ?? null
  const model = g('model_path')
  return [
    ['model_path', model],
    ['tokenizer_path', g('tokenizer_path') ?? model],
    ['tokenizer_mode', 'auto'],
    ['skip_tokenizer_init', false],
    ['load_format', 'auto'],
    ['trust_remote_code', g('trust_remote_code')],
    ['dtype', 'auto'],
    ['kv_cache_dtype', 'auto'],
    ['quantization', null],
    ['context_length', g('context_length')],
    ['device', 'cuda'],
    ['served_model_name', g('served_model_name') ?? model],
    ['chat_template', null],
    ['is_embedding', false],
    ['revision', null],
    ['host', g('host')],
    ['port', g('port')],
    ['mem_fraction_static', g('mem_fraction_static') === null ? new PyFloat(0.88) : new PyFloat(Number(g('mem_fraction_static')))],
    ['max_running_requests', g('max_running_requests')],
    ['max_total_tokens', g('max_total_tokens')],
    ['chunked_prefill_size', g('chunked_prefill_size') ?? AUTO_CHUNKED_PREFILL],
    ['max_prefill_tokens', g('max_prefill_tokens')],
    ['schedule_policy', 'fcfs'],
    ['schedule_conservativeness', new PyFloat(1)],
    ['page_size', g('page_size')],
    ['tp_size', g('tp_size')],
    ['pp_size', 1],
    ['dp_size', g('dp_size')],
    ['stream_interval', 1],
    ['random_seed', g('random_seed') ?? 1],
    ['log_level', g('log_level')],
    ['log_requests', false],
    ['show_time_cost', false],
    ['enable_metrics', g('enable_metrics')],
    ['enable_metrics_for_all_schedulers', g('enable_metrics_for_all_schedulers')],
    ['decode_log_interval', g('decode_log_interval')],
    ['api_key', g('api_key')],
    ['disable_radix_cache', g('disable_radix_cache')],
    ['enable_cache_report', g('enable_cache_report')],
    ['speculative_algorithm', g('speculative_algorithm')],
  ]
}

export type SglangArgs = { kind: 'ok'; values: Map<string, PyValue> } | { kind: 'exit'; code: number; stdout: string; stderr: string }

export function parseSglang(argv: readonly string[], help: () => string): SglangArgs {
  const parsed = parseArgs(SGLANG_PARSER, argv)
  if (parsed.kind === 'help') return { kind: 'exit', code: 0, stdout: help(), stderr: '' }
  if (parsed.kind === 'error') return { kind: 'exit', code: 2, stdout: '', stderr: errorText(SGLANG_PARSER, parsed.message) }
  return { kind: 'ok', values: parsed.values }
}
