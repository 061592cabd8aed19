// llama-server's command line (common/arg.cpp): exact option names only (no prefixes), `_` read as
// `-` in `--` flags, every option's env twin (`LLAMA_ARG_*`) applied first and a command-line flag
// overriding it with a `warn:` line, the last occurrence winning, `error: invalid argument: X` for
// an unknown one. `-np -1` (the server's default) is auto.

export interface LlamaOption {
  args: readonly string[]
  env: string | null
  key: string
  value: string | null
  help: string
  /** Converts a raw value (from argv or env); throws with llama.cpp's reason. */
  parse?: (raw: string) => number | string
}

const int = (raw: string): number => {
  if (!/^\s*[+-]?\d+/.test(raw)) throw new Error('stoi')
  return Number.parseInt(raw, 10)
}

export const LLAMA_OPTIONS: readonly LlamaOption[] = [
  { args: ['-m', '--model'], env: 'LLAMA_ARG_MODEL', key: 'model', value: 'FNAME', help: 'model path to load', parse: String },
  {
    args: ['-a', '--alias'],
    env: 'LLAMA_ARG_ALIAS',
    key: 'alias',
    value: 'STRING',
    help: 'set alias for model name (to be used by REST API)',
    parse: String,
  },
  {
    args: ['--host'],
    env: 'LLAMA_ARG_HOST',
    key: 'host',
    value: 'HOST',
    help: 'ip address to listen, or bind to an UNIX socket if the address ends with .sock (default: 127.0.0.1)',
    parse: String,
  },
  { args: ['--port'], env: 'LLAMA_ARG_PORT', key: 'port', value: 'PORT', help: 'port to listen (default: 8080)', parse: int },
  {
    args: ['-c', '--ctx-size'],
    env: 'LLAMA_ARG_CTX_SIZE',
    key: 'ctx_size',
    value: 'N',
    help: 'size of the prompt context (default: 0, 0 = loaded from model)',
    parse: int,
  },
  {
    args: ['-np', '--parallel'],
    env: 'LLAMA_ARG_N_PARALLEL',
    key: 'n_parallel',
    value: 'N',
    help: 'number of server slots (default: -1, -1 = auto)',
    parse: (raw) => {
      const n = int(raw)
      if (n === 0 || n < -1) throw new Error('number of parallel sequences must be positive, or -1 for auto')
      return n
    },
  },
  {
    args: ['-kvu', '--kv-unified'],
    env: 'LLAMA_ARG_KV_UNIFIED',
    key: 'kv_unified',
    value: null,
    help: 'use single unified KV buffer shared across all sequences',
  },
  { args: ['-no-kvu', '--no-kv-unified'], env: null, key: 'no_kv_unified', value: null, help: 'use a separate KV buffer per sequence' },
  {
    args: ['--metrics'],
    env: 'LLAMA_ARG_ENDPOINT_METRICS',
    key: 'metrics',
    value: null,
    help: 'enable prometheus compatible metrics endpoint (default: disabled)',
  },
  {
    args: ['--slots'],
    env: 'LLAMA_ARG_ENDPOINT_SLOTS',
    key: 'slots',
    value: null,
    help: 'expose slots monitoring endpoint (default: enabled)',
  },
  { args: ['--no-slots'], env: null, key: 'no_slots', value: null, help: 'disables slots monitoring endpoint' },
  {
    args: ['--props'],
    env: null,
    key: 'props',
    value: null,
    help: 'enable changing global properties via POST /props (default: disabled)',
  },
  {
    args: ['--api-key'],
    env: 'LLAMA_API_KEY',
    key: 'api_key',
    value: 'KEY',
    help: 'API key to use for authentication (default: none)',
    parse: String,
  },
  {
    args: ['--cache-reuse'],
    env: 'LLAMA_ARG_CACHE_REUSE',
    key: 'cache_reuse',
    value: 'N',
    help: 'min chunk size to attempt reusing from the cache via KV shifting (default: 0)',
    parse: int,
  },
  { args: ['--jinja'], env: 'LLAMA_ARG_JINJA', key: 'jinja', value: null, help: 'use jinja template for chat (default: disabled)' },
  {
    args: ['-ngl', '--n-gpu-layers'],
    env: 'LLAMA_ARG_N_GPU_LAYERS',
    key: 'n_gpu_layers',
    value: 'N',
    help: 'max. number of layers to store in VRAM (default: -1)',
    parse: int,
  },
]

export type LlamaValues = Map<string, number | string | true>

export type LlamaArgs = { kind: 'ok'; values: LlamaValues; warnings: string[] } | { kind: 'help' } | { kind: 'error'; message: string }

const TRUTHY = /^(1|true|on|enabled|yes)$/i

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
    fromEnv.add(opt.key)
  }
  for (let i = 0; i < argv.length; i++) {
    const given = argv[i]!
    if (given === '-h' || given === '--help' || given === '--usage') return { kind: 'help' }
    const name = given.startsWith('--') ? given.replaceAll('_', '-') : given
    const opt = LLAMA_OPTIONS.find((o) => o.args.includes(name))
    if (!opt) return { kind: 'error', message: `error: invalid argument: ${given}` }
    if (opt.env !== null && fromEnv.has(opt.key)) {
      warnings.push(`warn: ${opt.env} environment variable is set, but will be overwritten by command line argument ${given}`)
      fromEnv.delete(opt.key)
    }
    if (!opt.parse) {
      values.set(opt.key, true)
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
        message: `error while handling argument "${given}": ${(error as Error).message}\n\nusage:\n${optionUsage(opt)}\n\nto show complete usage, run with -h`,
      }
    }
  }
  return { kind: 'ok', values, warnings }
}

/** One option as `-h` prints it: its names and value hint at column 0, the help from column 40, the env twin under it. */
export function optionUsage(opt: LlamaOption): string {
  const short = opt.args.filter((a) => !a.startsWith('--'))
  const long = opt.args.filter((a) => a.startsWith('--'))
  const names = short.length > 0 ? `${`${short.join(', ')},`.padEnd(7)}${long.join(', ')}` : long.join(', ')
  const head = opt.value ? `${names} ${opt.value}` : names
  const lines = [head.length < 40 ? head.padEnd(40) + opt.help : `${head}\n${' '.repeat(40)}${opt.help}`]
  if (opt.env) lines.push(`${' '.repeat(40)}(env: ${opt.env})`)
  return lines.join('\n')
}

export function llamaHelp(): string {
  return [
    '----- common params -----',
    '',
    `${'-h,    --help, --usage'.padEnd(40)}print usage and exit`,
    ...LLAMA_OPTIONS.map(optionUsage),
    '',
  ].join('\n')
}
