// `vllm serve`'s command line as FlexibleArgumentParser reads it (vllm/utils/argparse_utils.py):
// `_` and `-` are one in a flag's name (up to its first `.`), `--help=<kw>` searches the help,
// `--model X` moves to the positional model_tag with a warning, `--config FILE` inserts a YAML
// file's keys after the subcommand (CLI > config > defaults), a repeated flag is warned about and
// the last one wins, then Python's argparse (./argparse.ts) does the rest.
import { errorText, parseArgs } from './argparse.ts'
import type { OptionSpec, ParserSpec } from './argparse.ts'
import type { PyValue } from './pyrepr.ts'
import { yaml } from './yaml.ts'

const int = { kind: 'int' } as const
const str = { kind: 'str' } as const
const choice = (...choices: string[]) => ({ kind: 'choice', choices }) as const
/** The real build's choices (fixtures/real/vllm/9aaf83ef5/serve-help-kv-cache-dtype.txt), in its order. */
export const KV_CACHE_DTYPES = [
  'auto',
  'bfloat16',
  'float16',
  'fp8',
  'fp8_ds_mla',
  'fp8_e4m3',
  'fp8_e5m2',
  'fp8_inc',
  'fp8_per_token_head',
  'int8_per_token_head',
  'nvfp4',
  'turboquant_3bit_nc',
  'turboquant_4bit_nc',
  'turboquant_k3v4_nc',
  'turboquant_k8v4',
] as const
export const DEFAULT_MODEL = 'Qwen/Qwen3-0.6B'

const opt = (
  group: string,
  flag: string | string[],
  rest: Omit<OptionSpec, 'strings' | 'group' | 'dest'> & { dest?: string },
): OptionSpec => {
  const strings = Array.isArray(flag) ? flag : [flag]
  return { group, strings, dest: rest.dest ?? strings[0]!.slice(2).replaceAll('-', '_'), ...rest }
}

/** In the parser's order (the order of the non-default args dict): the frontend's flags, then EngineArgs' by config group. */
export const VLLM_OPTIONS: readonly OptionSpec[] = [
  opt('Frontend', '--host', { action: 'store', type: str, default: null, help: 'Host name.' }),
  opt('Frontend', '--port', { action: 'store', type: int, default: 8000, help: 'Port number.' }),
  opt('Frontend', '--api-key', {
    action: 'store',
    type: str,
    nargs: '+',
    default: null,
    help: 'If provided, the server will require one of these keys to be presented in the header.',
  }),
  opt('Frontend', '--enable-auto-tool-choice', {
    action: 'boolean_optional',
    default: false,
    help: 'Enable auto tool choice for supported models. Use --tool-call-parser to specify which parser to use.',
  }),
  opt('Frontend', '--tool-call-parser', {
    action: 'store',
    type: str,
    default: null,
    help: 'Select the tool call parser depending on the model that you are using.',
  }),
  opt('Frontend', '--uvicorn-log-level', {
    action: 'store',
    type: choice('critical', 'debug', 'error', 'info', 'trace', 'warning'),
    default: 'info',
    help: 'Log level for uvicorn.',
  }),
  opt('ModelConfig', '--model', {
    action: 'store',
    type: str,
    default: DEFAULT_MODEL,
    help: 'Name or path of the Hugging Face model to use.',
  }),
  opt('ModelConfig', '--dtype', {
    action: 'store',
    type: choice('auto', 'bfloat16', 'float', 'float16', 'float32', 'half'),
    default: 'auto',
    help: 'Data type for model weights and activations.',
  }),
  opt('ModelConfig', '--seed', { action: 'store', type: int, default: 0, help: 'Random seed for reproducibility.' }),
  opt('ModelConfig', '--max-model-len', {
    action: 'store',
    type: int,
    default: null,
    help: 'Model context length (prompt and output). If unspecified, will be automatically derived from the model config.',
  }),
  opt('ModelConfig', '--served-model-name', {
    action: 'store',
    type: str,
    nargs: '+',
    default: null,
    help: 'The model name(s) used in the API. If multiple names are provided, the server will respond to any of the provided names.',
  }),
  opt('ModelConfig', '--enforce-eager', { action: 'boolean_optional', default: false, help: 'Whether to always use eager-mode PyTorch.' }),
  opt('ModelConfig', '--trust-remote-code', {
    action: 'boolean_optional',
    default: false,
    help: 'Trust remote code (e.g., from HuggingFace) when downloading the model and tokenizer.',
  }),
  opt('LoadConfig', '--load-format', {
    action: 'store',
    type: str,
    default: 'auto',
    help: 'The format of the model weights to load.',
  }),
  opt('ParallelConfig', ['--tensor-parallel-size', '-tp'], {
    action: 'store',
    type: int,
    default: 1,
    help: 'Number of tensor parallel groups.',
  }),
  opt('CacheConfig', '--block-size', {
    action: 'store',
    type: int,
    default: null,
    help: 'Size of a contiguous cache block in number of tokens. Accepts None (meaning "use default"). After construction, always int.',
  }),
  opt('CacheConfig', '--gpu-memory-utilization', {
    action: 'store',
    type: { kind: 'float' },
    default: 0.92,
    help: 'The fraction of GPU memory to be used for the model executor, which can range from 0 to 1.',
  }),
  opt('CacheConfig', '--kv-cache-dtype', {
    action: 'store',
    type: choice(...KV_CACHE_DTYPES),
    default: 'auto',
    help: 'Data type for kv cache storage. If "auto", will use model data type. CUDA 11.8+ supports fp8 (=fp8_e4m3) and fp8_e5m2. ROCm (AMD GPU) supports fp8 (=fp8_e4m3). Intel Gaudi (HPU) supports fp8 (using fp8_inc). Some models (namely DeepSeekV3.2) default to fp8, set to bfloat16 to use bfloat16 instead, this is an invalid option for models that do not default to fp8.',
  }),
  opt('CacheConfig', '--kv-cache-dtype-skip-layers', {
    action: 'store',
    type: str,
    nargs: '+',
    default: [],
    help: "Layer patterns to skip KV cache quantization. Accepts layer indices (e.g., '0', '2', '4') or attention type names (e.g., 'sliding_window').",
  }),
  opt('CacheConfig', '--enable-prefix-caching', { action: 'boolean_optional', default: null, help: 'Whether to enable prefix caching.' }),
  opt('ObservabilityConfig', '--show-hidden-metrics-for-version', {
    action: 'store',
    type: str,
    default: null,
    help: 'Enable deprecated Prometheus metrics that have been hidden since the specified version.',
  }),
  opt('SchedulerConfig', '--max-num-batched-tokens', {
    action: 'store',
    type: int,
    default: null,
    help: 'Maximum number of tokens to be processed in a single iteration.',
  }),
  opt('SchedulerConfig', '--max-num-seqs', {
    action: 'store',
    type: int,
    default: null,
    help: 'Maximum number of sequences to be processed in a single iteration.\nThe default value here is mainly for convenience when testing. In real usage, this should be set in `EngineArgs.create_engine_config`.',
  }),
  opt('SchedulerConfig', '--enable-chunked-prefill', {
    action: 'boolean_optional',
    default: null,
    help: 'If True, prefill requests can be chunked based on the remaining max_num_batched_tokens.',
  }),
  opt('AsyncEngineArgs', '--disable-log-stats', { action: 'store_true', default: false, help: 'Disable logging statistics.' }),
]

export const VLLM_PARSER: ParserSpec = {
  prog: 'vllm serve',
  usage: 'vllm serve [model_tag] [options]',
  positional: { dest: 'model_tag', default: null, help: 'The model tag to serve (optional if specified in config)' },
  options: VLLM_OPTIONS,
}

export type VllmArgs =
  | { kind: 'ok'; values: Map<string, PyValue>; warnings: string[] }
  | { kind: 'help'; keyword: string | null }
  | { kind: 'exit'; code: number; stdout: string; stderr: string }

/** `--a_b.c_d=V` → `--a-b.c_d=V`: dashes in the name up to its first `.`, as FlexibleArgumentParser does. */
export function dashed(arg: string): string {
  if (!arg.startsWith('--')) return arg
  const eq = arg.indexOf('=')
  const key = eq === -1 ? arg : arg.slice(0, eq)
  const dot = key.indexOf('.')
  const name = dot === -1 ? key : key.slice(0, dot)
  const fixed = `--${name.slice(2).replaceAll('_', '-')}${dot === -1 ? '' : key.slice(dot)}`
  return eq === -1 ? fixed : `${fixed}${arg.slice(eq)}`
}

/** The YAML keys of `--config FILE` as flags, as `load_config_file` turns them (a false bool becomes `--no-x` where one exists). */
function configArgs(path: string, parseYaml: (text: string) => unknown): string[] {
  if (!/\.(ya?ml)$/.test(path)) throw new Error(`Config file must be of a yaml/yml type. ${path.split('.').pop()} supplied`)
  // node:fs from its CommonJS module, at the one read (its ESM view's getters load fs/promises and the fs streams).
  const doc = parseYaml(process.getBuiltinModule('node:fs').readFileSync(path, 'utf8')) as Record<string, unknown> | null
  const noFlags = new Set(VLLM_OPTIONS.filter((o) => o.action === 'boolean_optional').map((o) => `--no-${o.strings[0]!.slice(2)}`))
  const out: string[] = []
  for (const [key, value] of Object.entries(doc ?? {})) {
    if (typeof value === 'boolean') {
      if (value) out.push(`--${key}`)
      else if (noFlags.has(`--no-${key}`)) out.push(`--no-${key}`)
    } else if (Array.isArray(value)) {
      if (value.length > 0) out.push(`--${key}`, ...value.map(String))
    } else if (typeof value === 'object' && value !== null) out.push(`--${key}`, JSON.stringify(value))
    else out.push(`--${key}`, String(value))
  }
  return out
}

/** Parses the argv after `vllm` (`serve …`). `warnings` are the WARNING log lines the parse itself prints. */
export function parseVllmServe(argvIn: readonly string[]): VllmArgs {
  let args = [...argvIn]
  const warnings: string[] = []
  const modelAt = args.findIndex((a) => /^--model(=.+|$)/.test(a))
  if (modelAt > 0) {
    warnings.push(
      'With `vllm serve`, you should provide the model as a positional argument or in a config file instead of via the `--model` option. The `--model` option will be removed in a future version.',
    )
    const inline = args[modelAt] !== '--model'
    const tag = inline ? args[modelAt]!.slice('--model='.length) : args[modelAt + 1]
    if (tag === undefined || (!inline && tag.startsWith('-')))
      return { kind: 'exit', code: 2, stdout: '', stderr: errorText(VLLM_PARSER, 'argument --model: expected one argument') }
    args = ['serve', tag, ...args.slice(1, modelAt), ...args.slice(modelAt + (inline ? 1 : 2))]
  }
  const configAt = args.indexOf('--config')
  if (configAt > 0) {
    const file = args[configAt + 1]
    if (file === undefined)
      return {
        kind: 'exit',
        code: 1,
        stdout: '',
        stderr: 'ValueError: No config file specified! Please check your command-line arguments.\n',
      }
    // Outside the try: a YAML library not loaded is this program's bug, never the file's ValueError.
    const { parse } = yaml()
    let inserted: string[]
    try {
      inserted = configArgs(file, parse)
    } catch (error) {
      return { kind: 'exit', code: 1, stdout: '', stderr: `ValueError: ${(error as Error).message}\n` }
    }
    const rest = [...args.slice(1, configAt), ...args.slice(configAt + 2)]
    args =
      rest.length > 0 && !rest[0]!.startsWith('-') ? ['serve', rest[0]!, ...inserted, ...rest.slice(1)] : ['serve', ...inserted, ...rest]
  }
  let keyword: string | null = null
  const processed: string[] = []
  const seen = new Set<string>()
  const duplicates: string[] = []
  for (const arg of args.slice(1)) {
    if (arg.startsWith('--help=')) {
      keyword = arg.slice('--help='.length).toLowerCase()
      processed.push('--help')
      continue
    }
    const fixed = dashed(arg)
    if (fixed.startsWith('--') && !fixed.includes('.')) {
      const name = fixed.split('=')[0]!
      if (seen.has(name) && !duplicates.includes(name)) duplicates.push(name)
      seen.add(name)
    }
    processed.push(fixed)
  }
  if (duplicates.length > 0) warnings.push(`Found duplicate keys ${duplicates.join(', ')}`)
  const parsed = parseArgs(VLLM_PARSER, processed)
  if (parsed.kind === 'help') return { kind: 'help', keyword }
  if (parsed.kind === 'error') return { kind: 'exit', code: 2, stdout: '', stderr: errorText(VLLM_PARSER, parsed.message) }
  return { kind: 'ok', values: parsed.values, warnings }
}

/** The parser's defaults (`parse_args([])`), which `get_non_default_args` compares against. */
export function vllmDefaults(): Map<string, PyValue> {
  const parsed = parseArgs(VLLM_PARSER, [])
  if (parsed.kind !== 'ok') throw new Error('vLLM parser: the empty command line does not parse')
  return parsed.values
}
