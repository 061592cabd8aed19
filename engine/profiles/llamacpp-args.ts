// llama-server's command line (common/arg.cpp), as the real de3ff81 build reads it
// (fixtures/real/llama.cpp/de3ff81/): exact option names only (no prefixes), `_` read as `-` in
// `--` flags, every option's env twin (`LLAMA_ARG_*`) applied first and a command-line flag
// overriding it with a `warn:` line, the last occurrence winning, `error: invalid argument: X` for
// an unknown one, and a switch's `--no-` form. `-np -1` (the server's default) is auto. Each
// option's --help block is the real build's, byte for byte (test/real/emulation.test.ts checks it).

export interface LlamaOption {
  /** Every name, as --help lists them; a switch's negations are in `negations`. */
  args: readonly string[]
  negations?: readonly string[]
  env: string | null
  key: string
  /** Takes a value (its hint is in the block). */
  takesValue: boolean
  /** Its --help block as the real build prints it. */
  block: string
  /** Converts a raw value (from argv or env); throws with llama.cpp's reason. */
  parse?: (raw: string) => number | string
}

const int = (raw: string): number => {
  if (!/^\s*[+-]?\d+/.test(raw)) throw new Error('stoi')
  return Number.parseInt(raw, 10)
}

const pad = ' '.repeat(40)
/** A block: the head at column 0 (the help from column 40 when it fits), then each further line at column 40. */
const block = (head: string, ...lines: string[]): string => {
  const [first, ...rest] = lines
  const top = head.length < 40 ? `${head.padEnd(40)}${first}` : `${head}\n${pad}${first}`
  return [top, ...rest.map((l) => (l === '' ? pad : `${pad}${l}`))].join('\n')
}

export const LLAMA_OPTIONS: readonly LlamaOption[] = [
  {
    args: ['-m', '--model'],
    env: 'LLAMA_ARG_MODEL',
    key: 'model',
    takesValue: true,
    block: block('-m,    --model FNAME', 'model path to load', '(env: LLAMA_ARG_MODEL)'),
    parse: String,
  },
  {
    args: ['-a', '--alias'],
    env: 'LLAMA_ARG_ALIAS',
    key: 'alias',
    takesValue: true,
    block: block('-a,    --alias STRING', 'set model name aliases, comma-separated (to be used by API)', '(env: LLAMA_ARG_ALIAS)'),
    parse: String,
  },
  {
    args: ['--host'],
    env: 'LLAMA_ARG_HOST',
    key: 'host',
    takesValue: true,
    block: block(
      '--host HOST',
      'IP addresses to listen on, comma-separated, or UNIX socket paths',
      'ending in .sock; with multiple TCP addresses, :: binds IPv6 only;',
      'overlapping addresses result in undefined behavior (default:',
      '127.0.0.1)',
      '(env: LLAMA_ARG_HOST)',
    ),
    parse: String,
  },
  {
    args: ['--port'],
    env: 'LLAMA_ARG_PORT',
    key: 'port',
    takesValue: true,
    block: block('--port PORT', 'port to listen (default: 8080)', '(env: LLAMA_ARG_PORT)'),
    parse: int,
  },
  {
    args: ['-c', '--ctx-size'],
    env: 'LLAMA_ARG_CTX_SIZE',
    key: 'ctx_size',
    takesValue: true,
    block: block('-c,    --ctx-size N', 'size of the prompt context (default: 0, 0 = loaded from model)', '(env: LLAMA_ARG_CTX_SIZE)'),
    parse: int,
  },
  {
    args: ['-np', '--parallel'],
    env: 'LLAMA_ARG_N_PARALLEL',
    key: 'n_parallel',
    takesValue: true,
    block: block('-np,   --parallel N', 'number of server slots (default: -1, -1 = auto)', '(env: LLAMA_ARG_N_PARALLEL)'),
    parse: (raw) => {
      const n = int(raw)
      if (n === 0 || n < -1) throw new Error('number of parallel sequences must be positive, or -1 for auto')
      return n
    },
  },
  {
    args: ['-kvu', '--kv-unified'],
    negations: ['-no-kvu', '--no-kv-unified'],
    env: 'LLAMA_ARG_KV_UNIFIED',
    key: 'kv_unified',
    takesValue: false,
    block: block(
      '-kvu,  --kv-unified, -no-kvu, --no-kv-unified',
      'use single unified KV buffer shared across all sequences (default:',
      'enabled if number of slots is auto)',
      '(env: LLAMA_ARG_KV_UNIFIED)',
    ),
  },
  {
    args: ['--metrics'],
    env: 'LLAMA_ARG_ENDPOINT_METRICS',
    key: 'metrics',
    takesValue: false,
    block: block('--metrics', 'enable prometheus compatible metrics endpoint (default: disabled)', '(env: LLAMA_ARG_ENDPOINT_METRICS)'),
  },
  {
    args: ['--slots'],
    negations: ['--no-slots'],
    env: 'LLAMA_ARG_ENDPOINT_SLOTS',
    key: 'slots',
    takesValue: false,
    block: block('--slots, --no-slots', 'expose slots monitoring endpoint (default: enabled)', '(env: LLAMA_ARG_ENDPOINT_SLOTS)'),
  },
  {
    args: ['--props'],
    env: 'LLAMA_ARG_ENDPOINT_PROPS',
    key: 'props',
    takesValue: false,
    block: block('--props', 'enable changing global properties via POST /props (default: disabled)', '(env: LLAMA_ARG_ENDPOINT_PROPS)'),
  },
  {
    args: ['--api-key'],
    env: 'LLAMA_API_KEY',
    key: 'api_key',
    takesValue: true,
    block: block(
      '--api-key KEY',
      'API key to use for authentication, multiple keys can be provided as a',
      'comma-separated list (default: none)',
      '(env: LLAMA_API_KEY)',
    ),
    parse: String,
  },
  {
    args: ['--cache-prompt'],
    negations: ['--no-cache-prompt'],
    env: 'LLAMA_ARG_CACHE_PROMPT',
    key: 'cache_prompt',
    takesValue: false,
    block: block(
      '--cache-prompt, --no-cache-prompt',
      'whether to enable prompt caching (default: enabled)',
      '(env: LLAMA_ARG_CACHE_PROMPT)',
    ),
  },
  {
    args: ['--cache-reuse'],
    env: 'LLAMA_ARG_CACHE_REUSE',
    key: 'cache_reuse',
    takesValue: true,
    block: block(
      '--cache-reuse N',
      'min chunk size to attempt reusing from the cache via KV shifting,',
      'requires prompt caching to be enabled (default: 0)',
      '[(card)](https://ggml.ai/f0.png)',
      '(env: LLAMA_ARG_CACHE_REUSE)',
    ),
    parse: int,
  },
  {
    args: ['--jinja'],
    negations: ['--no-jinja'],
    env: 'LLAMA_ARG_JINJA',
    key: 'jinja',
    takesValue: false,
    block: block('--jinja, --no-jinja', 'whether to use jinja template engine for chat (default: enabled)', '(env: LLAMA_ARG_JINJA)'),
  },
  {
    args: ['-mm', '--mmproj'],
    env: 'LLAMA_ARG_MMPROJ',
    key: 'mmproj',
    takesValue: true,
    block: block(
      '-mm,   --mmproj FILE',
      'path to a multimodal projector file. see tools/mtmd/README.md',
      'note: if -hf is used, this argument can be omitted',
      '(env: LLAMA_ARG_MMPROJ)',
    ),
    parse: String,
  },
  {
    args: ['-ngl', '--gpu-layers', '--n-gpu-layers'],
    env: 'LLAMA_ARG_N_GPU_LAYERS',
    key: 'n_gpu_layers',
    takesValue: true,
    block: block(
      '-ngl,  --gpu-layers, --n-gpu-layers N',
      'max. number of layers to store in VRAM, either an exact number,',
      "'auto', or 'all' (default: auto)",
      '(env: LLAMA_ARG_N_GPU_LAYERS)',
    ),
    parse: String,
  },
  {
    args: ['-v', '--verbose', '--log-verbose'],
    env: null,
    key: 'verbose',
    takesValue: false,
    block: block('-v,    --verbose, --log-verbose', 'Set verbosity level to infinity (i.e. log all messages, useful for', 'debugging)'),
  },
  {
    args: ['-lv', '--verbosity', '--log-verbosity'],
    env: 'LLAMA_ARG_LOG_VERBOSITY',
    key: 'verbosity',
    takesValue: true,
    block: block(
      '-lv,   --verbosity, --log-verbosity N',
      'Set the verbosity threshold. Messages with a higher verbosity will be',
      'ignored. Values:',
      ' - 0: generic output',
      ' - 1: error',
      ' - 2: warning',
      ' - 3: info',
      ' - 4: trace (more info)',
      ' - 5: debug',
      '(default: 3)',
      '',
      '(env: LLAMA_ARG_LOG_VERBOSITY)',
    ),
    parse: int,
  },
  {
    args: ['--log-prefix'],
    negations: ['--no-log-prefix'],
    env: 'LLAMA_ARG_LOG_PREFIX',
    key: 'log_prefix',
    takesValue: false,
    block: block('--log-prefix, --no-log-prefix', 'Enable prefix in log messages', '(env: LLAMA_ARG_LOG_PREFIX)'),
  },
  {
    args: ['--log-timestamps'],
    negations: ['--no-log-timestamps'],
    env: 'LLAMA_ARG_LOG_TIMESTAMPS',
    key: 'log_timestamps',
    takesValue: false,
    block: block('--log-timestamps, --no-log-timestamps', 'Enable timestamps in log messages', '(env: LLAMA_ARG_LOG_TIMESTAMPS)'),
  },
]

export type LlamaValues = Map<string, number | string | boolean>

export type LlamaArgs = { kind: 'ok'; values: LlamaValues; warnings: string[] } | { kind: 'help' } | { kind: 'error'; message: string }

const TRUTHY = /^(1|true|on|enabled|yes)$/i
const FALSY = /^(0|false|off|disabled|no)$/i

/** Parses llama-server's argv (without argv[0]) with its env: env first, then argv, in order. */
export function parseLlama(argv: readonly string[], env: NodeJS.ProcessEnv): LlamaArgs {
  const values: LlamaValues = new Map()
  const fromEnv = new Set<string>()
  const warnings: string[] = []
  for (const opt of LLAMA_OPTIONS) {
    const raw = opt.env === null ? undefined : env[opt.env]
    if (raw === undefined) continue
    if (opt.parse) {
      try {
        values.set(opt.key, opt.parse(raw))
      } catch (error) {
        return { kind: 'error', message: `error while handling environment variable "${opt.env}": ${(error as Error).message}` }
      }
    } else if (TRUTHY.test(raw)) values.set(opt.key, true)
    else if (FALSY.test(raw)) values.set(opt.key, false)
    fromEnv.add(opt.key)
  }
  for (let i = 0; i < argv.length; i++) {
    const given = argv[i]!
    if (given === '-h' || given === '--help' || given === '--usage') return { kind: 'help' }
    const name = given.startsWith('--') ? given.replaceAll('_', '-') : given
    const opt = LLAMA_OPTIONS.find((o) => o.args.includes(name) || o.negations?.includes(name))
    if (!opt) return { kind: 'error', message: `error: invalid argument: ${given}` }
    if (opt.env !== null && fromEnv.has(opt.key)) {
      warnings.push(`warn: ${opt.env} environment variable is set, but will be overwritten by command line argument ${given}`)
      fromEnv.delete(opt.key)
    }
    if (!opt.parse) {
      values.set(opt.key, !opt.negations?.includes(name))
      continue
    }
    const raw = argv[i + 1]
    if (raw === undefined) return { kind: 'error', message: `error while handling argument "${given}": expected value for argument` }
    i++
    try {
      values.set(opt.key, opt.parse(raw))
    } catch (error) {
      return {
        kind: 'error',
        message: `error while handling argument "${given}": ${(error as Error).message}\n\nusage:\n${opt.block}\n\nto show complete usage, run with -h`,
      }
    }
  }
  return { kind: 'ok', values, warnings }
}

/** What `--help` prints on stdout: the real build's blocks of the options emulated, under its first heading. */
export function llamaHelp(): string {
  return [
    '----- common params -----',
    '',
    block('-h,    --help, --usage', 'print usage and exit'),
    ...LLAMA_OPTIONS.map((o) => o.block),
    '',
  ].join('\n')
}
