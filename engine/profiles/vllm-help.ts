// What `vllm serve --help` prints (FlexibleArgumentParser.format_help): plain `--help` gives the
// usage, the description and only a "Config Groups" list, then the epilog; `--help=<kw>` gives
// `all` (every flag), a group by its title (case-insensitive), the flags whose option strings
// contain kw ("Arguments matching '<kw>'"), or "No group or arguments matching '<kw>'.".
import { formatActions, joinSections, wrap } from './argparse-help.ts'
import type { OptionSpec } from './argparse.ts'
import { optionStrings } from './argparse.ts'
import { VLLM_OPTIONS, VLLM_PARSER } from './vllm-args.ts'

/** The real build's description, as it prints it (its own line breaks), and the search tip under it. */
const DESCRIPTION = [
  'Launch a local OpenAI-compatible API server to serve LLM',
  'completions via HTTP. Defaults to Qwen/Qwen3-0.6B if no model is specified.',
  '',
  'Search by using: `--help=<ConfigGroup>` to explore options by section (e.g.,',
  '--help=ModelConfig, --help=Frontend)',
  '  Use `--help=all` to show all available flags at once.',
]
const EPILOG = [
  'For full list:            vllm serve --help=all',
  'For a section:            vllm serve --help=ModelConfig    (case-insensitive)',
  'For a flag:               vllm serve --help=max-model-len  (_ or - accepted)',
  'Documentation:            https://docs.vllm.ai',
]
const JSON_TIP = [
  'When passing JSON CLI arguments, the following sets of arguments are equivalent:',
  '   --json-arg \'{"key1": "value1", "key2": {"key3": "value2"}}\'',
  '   --json-arg.key1 value1 --json-arg.key2.key3 value2',
  '',
  'Additionally, list elements can be passed individually using +:',
  '   --json-arg \'{"key4": ["value3", "value4", "value5"]}\'',
  "   --json-arg.key4+ value3 --json-arg.key4+='value4,value5'",
]
const GROUP_SUMMARY: Record<string, string> = {
  Frontend: 'Arguments for the OpenAI-compatible frontend server.',
  ModelConfig: 'Configuration for the model.',
  ParallelConfig: 'Configuration for the distributed execution.',
  CacheConfig: 'Configuration for the KV cache.',
  SchedulerConfig: 'Scheduler configuration.',
  ObservabilityConfig: 'Configuration for observability - metrics and tracing.',
  AsyncEngineArgs: 'Arguments for asynchronous vLLM engine.',
}
const HELP_ACTION: OptionSpec = {
  strings: ['-h', '--help'],
  dest: 'help',
  action: 'store_true',
  default: false,
  help: 'show this help message and exit',
  group: 'options',
}
const POSITIONAL: OptionSpec = {
  strings: [],
  dest: 'model_tag',
  action: 'store',
  default: null,
  help: VLLM_PARSER.positional!.help,
  group: 'positional arguments',
}

/** The groups in the parser's order: argparse's two built-in ones, then the config groups. */
function groups(): Array<{ title: string; summary: string; actions: OptionSpec[] }> {
  const titles = ['positional arguments', 'options', ...new Set(VLLM_OPTIONS.map((o) => o.group))]
  return titles.map((title) => ({
    title,
    summary: GROUP_SUMMARY[title] ?? '',
    actions:
      title === 'positional arguments' ? [POSITIONAL] : title === 'options' ? [HELP_ACTION] : VLLM_OPTIONS.filter((o) => o.group === title),
  }))
}

function positionalLines(): string[] {
  const [first, ...rest] = wrap(`${POSITIONAL.help} (default: None)`, 54)
  return [`  model_tag             ${first}`, ...rest.map((l) => `${' '.repeat(24)}${l}`)]
}

function section(title: string, actions: readonly OptionSpec[], summary = ''): string[] {
  const body = actions.includes(POSITIONAL) ? positionalLines() : formatActions(actions, true, true)
  return [`${title}:`, ...(summary ? [`  ${summary}`, ''] : []), ...body]
}

export function vllmServeHelp(keyword: string | null): string {
  const usage = [`usage: ${VLLM_PARSER.usage}`]
  if (keyword !== null) {
    const kw = keyword.toLowerCase().replaceAll('_', '-')
    if (kw === 'all') {
      return joinSections([usage, DESCRIPTION, ...groups().map((g) => section(g.title, g.actions, g.summary)), JSON_TIP])
    }
    const group = groups().find((g) => g.title.toLowerCase() === kw)
    if (group) return joinSections([section(group.title, group.actions, group.summary), JSON_TIP])
    const matched = [HELP_ACTION, ...VLLM_OPTIONS].filter((o) => optionStrings(o).some((s) => s.toLowerCase().includes(kw)))
    if (matched.length > 0) return joinSections([[`Arguments matching '${kw}':`, ...formatActions(matched, true, true)], JSON_TIP])
    return joinSections([
      [`No group or arguments matching '${kw}'.`, "Use '--help' to see available groups or '--help=all' to see all available parameters."],
    ])
  }
  const list = groups().filter((g) => g.actions.length > 0)
  const titleWidth = Math.max(...list.map((g) => g.title.length)) + 1
  const width = Math.max(78 - 2, titleWidth + 20)
  const lines = list.flatMap((g) => {
    if (!g.summary) return [`  ${g.title}`]
    const wrapped = wrap(g.summary, width - titleWidth)
    return [`  ${g.title.padEnd(titleWidth)}${wrapped[0]}`, ...wrapped.slice(1).map((l) => `  ${' '.repeat(titleWidth)}${l}`)]
  })
  return joinSections([usage, DESCRIPTION, ['Config Groups:', ...lines], EPILOG])
}

export const VLLM_TOP_USAGE = 'usage: vllm [-h] [-v] {chat,complete,serve,bench,collect-env,run-batch} ...'

export function vllmTopHelp(): string {
  return joinSections([
    [VLLM_TOP_USAGE],
    ['vLLM CLI'],
    [
      'positional arguments:',
      '  {chat,complete,serve,bench,collect-env,run-batch}',
      '    serve               Launch a local OpenAI-compatible API server to serve LLM',
      '                        completions via HTTP.',
    ],
    [
      'options:',
      '  -h, --help            show this help message and exit',
      "  -v, --version         show program's version number and exit",
    ],
  ])
}
