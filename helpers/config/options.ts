// The options of `armproof verify` (`pnpm verify` in a checkout) as data: flag, env twin, meaning, default. `--help`, the
// `.env.example` check and the config loader all read this one table.
import { command } from './invocation.ts'
import { LEDGER_TAIL_LINES, defaultHelpCmd, defaultLedgerCmd } from './runtime.ts'

export interface OptionSpec {
  flag: string
  env: string
  kind: 'string' | 'boolean'
  meaning: string
  default: string
  /** Secrets (and options that may carry one by mistake, like --kube-opts) are never echoed back, even in an error message. */
  secret?: boolean
}

/** The key itself comes only from env or .env, never from a flag (argv is echoed by pnpm, kept by ps and shell history). */
export const API_KEY_ENV = 'VERIFY_API_KEY'

/** The one line that refuses a key on the command line: it names the two safe ways. */
export const API_KEY_FLAG_REFUSED = `--api-key: a key on the command line is refused (pnpm echoes it; ps and shell history keep it); put it in ${API_KEY_ENV} (env or .env) or in a file passed with --api-key-file PATH`

export { LEDGER_TAIL_LINES }
/** The default --ledger-cmd under the default runtime (podman); each runtime's is helpers/config/runtime.ts'. */
export const DEFAULT_LEDGER_CMD = defaultLedgerCmd('podman')

/**
 * Exit code of a run that reached its verdict (printed) but could not write one of its outputs
 * (--report, --junit, the step summary, the fixtures' verdict): an addition to the contract's codes.
 */
export const EXIT_OUTPUT_UNWRITTEN = 4

export const OPTIONS = [
  { flag: 'svc', env: 'VERIFY_SVC', kind: 'string', meaning: 'service (container / unit) name; [A-Za-z0-9_.-]+ only', default: 'required' },
  {
    flag: 'knob',
    env: 'VERIFY_KNOB',
    kind: 'string',
    meaning:
      "knob from the engine profile's catalog: its name, e.g. PREFILL_INTERLEAVE, or its flag with or without dashes, e.g. max-num-seqs",
    default: 'required',
  },
  {
    flag: 'engine',
    env: 'VERIFY_ENGINE',
    kind: 'string',
    meaning:
      "engine profile: radiance, vllm, sglang, llama.cpp, or the path of a profile file (YAML): how that engine's command line, --help, resolved values, metrics and endpoints read",
    default: 'radiance',
  },
  {
    flag: 'catalog',
    env: 'VERIFY_CATALOG',
    kind: 'string',
    meaning:
      "a knob catalog file (YAML: knobs: NAME: {env, flag, type, default, off, meter, …}): its knobs are added to the profile's, or replace one of the same name",
    default: 'none',
  },
  {
    flag: 'value',
    env: 'VERIFY_VALUE',
    kind: 'string',
    meaning: 'value the knob should now have; unset or empty means "the default"',
    default: "knob's default",
  },
  {
    flag: 'previous',
    env: 'VERIFY_PREVIOUS',
    kind: 'string',
    meaning: 'value before this arm, for the rollback line',
    default: "knob's default",
  },
  {
    flag: 'base-url',
    env: 'VERIFY_BASE_URL',
    kind: 'string',
    meaning: 'endpoint root, e.g. http://gpu-7:8000',
    default: 'required in live/record',
  },
  {
    flag: 'api-key-file',
    env: 'VERIFY_API_KEY_FILE',
    kind: 'string',
    meaning: `file holding the bearer token for /v1/* (one line); or the key itself in ${API_KEY_ENV} (env or .env). Never on the command line: --api-key is refused. Never printed, never recorded`,
    default: 'none',
  },
  { flag: 'model', env: 'VERIFY_MODEL', kind: 'string', meaning: 'model id for the probes', default: 'first id from /v1/models' },
  {
    flag: 'host',
    env: 'VERIFY_HOST',
    kind: 'string',
    meaning:
      'where the engine runs: local, or [user@]host[:port] reached by ssh -o BatchMode=yes; under --runtime kubernetes the pod, [namespace/]pod, reached with kubectl',
    default: 'local (kubernetes: the pod named --svc)',
  },
  {
    flag: 'ssh-opts',
    env: 'VERIFY_SSH_OPTS',
    kind: 'string',
    meaning: 'extra ssh options, split as a shell would, e.g. "-i ~/.ssh/deploy -p 2222"',
    default: 'none',
  },
  {
    flag: 'runtime',
    env: 'VERIFY_RUNTIME',
    kind: 'string',
    meaning:
      'how the host runs the engine, and so the default commands for its pid, ledger, --help and drop-ins: podman (rootless podman under systemd), docker, kubernetes (a pod reached with kubectl), process (a bare process)',
    default: 'podman',
  },
  {
    flag: 'kube-opts',
    env: 'VERIFY_KUBE_OPTS',
    kind: 'string',
    meaning:
      'kubectl\'s options under --runtime kubernetes, split as a shell would, e.g. "--context prod --kubeconfig /etc/armproof/kubeconfig" (a --token or --password is refused: keep it in the kubeconfig)',
    default: 'none',
    secret: true,
  },
  {
    flag: 'process',
    env: 'VERIFY_PROCESS',
    kind: 'string',
    meaning: "the engine's process name (pidof's): of the processes holding the base URL's port, the one so named is the engine",
    default: "the engine profile's (radiance, vllm, sglang, llama-server)",
  },
  {
    flag: 'pid-cmd',
    env: 'VERIFY_PID_CMD',
    kind: 'string',
    meaning:
      "command printing the engine's pid on the host (run as the deploy user); {svc}, {unit} and {port} (the base URL's) are substituted, quoted (under kubernetes also {pod} and {kube}; the pid as the pod sees it). Asked only when no process named --process holds the base URL's port and no container (or pod) answers for it",
    default:
      "the listener of the base URL's port, else the runtime's container (docker, podman) or the pod's declared port (kubernetes), else the one pidof --process finds",
  },
  {
    flag: 'deploy-user',
    env: 'VERIFY_DEPLOY_USER',
    kind: 'string',
    meaning: 'user that owns the rootless containers (ledger and --help run as this user)',
    default: 'the ssh user',
  },
  {
    flag: 'sudo',
    env: 'VERIFY_SUDO',
    kind: 'string',
    meaning: 'sudo -n for root-only reads (/proc/<pid>/cmdline under hidepid): auto (only after a plain read is refused), always or never',
    default: 'auto',
  },
  {
    flag: 'ledger-cmd',
    env: 'VERIFY_LEDGER_CMD',
    kind: 'string',
    meaning:
      "command printing the boot ledger (its latest boot is read from the end); {svc} and {unit} are substituted, quoted (under kubernetes also {pod} and {kube}, kubectl's options)",
    default: `the runtime's: ${DEFAULT_LEDGER_CMD} (podman), ${defaultLedgerCmd('docker')} (docker), ${defaultLedgerCmd('kubernetes')} (kubernetes), ${defaultLedgerCmd('process')} (process, with --unit)`,
  },
  {
    flag: 'help-cmd',
    env: 'VERIFY_HELP_CMD',
    kind: 'string',
    meaning:
      "command printing the pinned build's --help (the runtime's exec, then the engine profile's help command: radiance --help; vllm serve --help=all); substituted as --ledger-cmd is; under --runtime process also {engine}, the program the engine process runs (its /proc/<pid>/exe, or its interpreter and script)",
    default: `the runtime's: ${defaultHelpCmd('podman')} (podman), ${defaultHelpCmd('docker')}, ${defaultHelpCmd('kubernetes')}, ${defaultHelpCmd('process')} (process)`,
  },
  {
    flag: 'unit',
    env: 'VERIFY_UNIT',
    kind: 'string',
    meaning: 'systemd unit whose DropInPaths must be empty (may use {svc}); not under --runtime kubernetes',
    default: '{svc} under podman; none under docker and process (the drop-in gate is then skipped, with why)',
  },
  {
    flag: 'no-dropin-check',
    env: 'VERIFY_DROPIN_CHECK',
    kind: 'boolean',
    meaning: 'skip the drop-in gate (shown as skipped, never as passed); env: VERIFY_DROPIN_CHECK=0',
    default: 'check on',
  },
  {
    flag: 'health-budget',
    env: 'VERIFY_HEALTH_BUDGET',
    kind: 'string',
    meaning: 'how long /health may stay unreachable or 503 while loading',
    default: '15m',
  },
  {
    flag: 'meter-window',
    env: 'VERIFY_METER_WINDOW',
    kind: 'string',
    meaning: "how long to watch the knob's meter leave zero",
    default: '5m',
  },
  {
    flag: 'probe-timeout',
    env: 'VERIFY_PROBE_TIMEOUT',
    kind: 'string',
    meaning: 'how long one probe (chat completion) may take',
    default: '2m',
  },
  {
    flag: 'host-timeout',
    env: 'VERIFY_HOST_TIMEOUT',
    kind: 'string',
    meaning: 'how long one host command (pidof, ledger, --help, systemctl) may take',
    default: '30s',
  },
  {
    flag: 'baseline-report',
    env: 'VERIFY_BASELINE_REPORT',
    kind: 'string',
    meaning:
      "the last green verify report of this service (its --report), for the one-flag law: the engine's command line, binary or image and served model may differ from its record in the knob's flag alone",
    default: 'none: the newest armproof entry of the --vault page, else the one-flag step is skipped, saying why',
  },
  {
    flag: 'vault',
    env: 'VERIFY_VAULT',
    kind: 'string',
    meaning:
      "the vault folder writeback writes: the newest armproof entry on the service's page (found as writeback finds it) is the one-flag law's baseline, unless --baseline-report is given",
    default: 'none',
  },
  { flag: 'mode', env: 'VERIFY_MODE', kind: 'string', meaning: 'live, record or replay', default: 'live' },
  { flag: 'fixtures', env: 'VERIFY_FIXTURES', kind: 'string', meaning: 'fixture folder', default: 'fixtures/<svc>/<knob>' },
  { flag: 'report', env: 'VERIFY_REPORT', kind: 'string', meaning: 'JSON report path', default: 'none' },
  {
    flag: 'junit',
    env: 'VERIFY_JUNIT',
    kind: 'string',
    meaning: 'JUnit XML path, one testcase per proof step (a testsuite per target)',
    default: 'none',
  },
  {
    flag: 'skip',
    env: 'VERIFY_SKIP',
    kind: 'string',
    meaning:
      'behaviour probes the served model cannot take, comma-separated: probe.vision (a text-only model), probe.tools (no tool parser); shown skipped with that reason, never passed',
    default: 'none',
  },
  {
    flag: 'json',
    env: 'VERIFY_JSON',
    kind: 'boolean',
    meaning: 'write the JSON report (a fleet: the fleet report) to stdout, alone; every other line then goes to stderr; env: VERIFY_JSON=1',
    default: 'off',
  },
  {
    flag: 'summary',
    env: 'VERIFY_SUMMARY',
    kind: 'string',
    meaning:
      'Markdown summary path (mode, endpoint, duration, steps, the meter sparkline); also appended to GITHUB_STEP_SUMMARY when that is set',
    default: 'none',
  },
  {
    flag: 'ca-file',
    env: 'VERIFY_CA_FILE',
    kind: 'string',
    meaning: 'extra CA certificates (PEM) for an https endpoint, added to the system ones (NODE_EXTRA_CA_CERTS works too)',
    default: 'none',
  },
  {
    flag: 'force',
    env: 'VERIFY_FORCE',
    kind: 'boolean',
    meaning: 'record mode: overwrite a fixture folder that holds another run; env: VERIFY_FORCE=1',
    default: 'off',
  },
  {
    flag: 'prometheus-url',
    env: 'VERIFY_PROMETHEUS_URL',
    kind: 'string',
    meaning: "read the knob's meter and the request counters through this Prometheus' HTTP API instead of scraping /metrics",
    default: 'none',
  },
  {
    flag: 'prometheus-match',
    env: 'VERIFY_PROMETHEUS_MATCH',
    kind: 'string',
    meaning: 'series selector for this target in Prometheus (label matchers only), e.g. {job="radiance",instance="gpu-7:8000"}',
    default: '{instance="<host:port of --base-url>"}',
  },
  {
    flag: 'targets',
    env: 'VERIFY_TARGETS',
    kind: 'string',
    meaning: 'targets file for a fleet run (YAML or JSON: defaults: and targets:, keys are these long option names without dashes)',
    default: 'none',
  },
  {
    flag: 'concurrency',
    env: 'VERIFY_CONCURRENCY',
    kind: 'string',
    meaning:
      'at most this many targets verified at once in a fleet run; auto: as many as the run can afford (file descriptors, memory, an event loop that keeps up)',
    default: 'auto',
  },
  {
    flag: 'shard',
    env: 'VERIFY_SHARD',
    kind: 'string',
    meaning: 'i/n: verify only the i-th of n stable slices of the targets (a CI matrix fans a fleet out)',
    default: 'none',
  },
  {
    flag: 'run-id',
    env: 'VERIFY_RUN_ID',
    kind: 'string',
    meaning:
      "names this fleet run in its report: merge-reports joins only shards of one run id, so a shard left from an earlier run of the same file and options is refused (give each run its own, e.g. a Kubernetes Job's uid)",
    default: 'GITHUB_RUN_ID, else CI_PIPELINE_ID, else none',
  },
] as const satisfies readonly OptionSpec[]

export type OptionFlag = (typeof OPTIONS)[number]['flag']

/** `writeback`'s options, in the same shape and read by the same parser (./command-line.ts). */
export const WRITEBACK_OPTIONS = [
  { flag: 'report', env: 'WRITEBACK_REPORT', kind: 'string', meaning: 'the JSON report verify wrote (its --report)', default: 'required' },
  {
    flag: 'vault',
    env: 'WRITEBACK_VAULT',
    kind: 'string',
    meaning: 'the vault folder (a checkout of the vault repo)',
    default: 'required',
  },
  {
    flag: 'page',
    env: 'WRITEBACK_PAGE',
    kind: 'string',
    meaning: "the endpoint's page, relative to the vault; skips discovery",
    default: 'found by front matter service: <svc>, else <svc>.md',
  },
  { flag: 'svc', env: 'WRITEBACK_SVC', kind: 'string', meaning: 'refuse unless the report is for this service', default: 'any' },
  {
    flag: 'max-age',
    env: 'WRITEBACK_MAX_AGE',
    kind: 'string',
    meaning: 'refuse a report whose finishedAt is older than this (24h, 90m, 1h30m)',
    default: '24h',
  },
  { flag: 'dry-run', env: 'WRITEBACK_DRY_RUN', kind: 'boolean', meaning: 'print the diff, write nothing', default: 'off' },
  {
    flag: 'allow-replay',
    env: 'WRITEBACK_ALLOW_REPLAY',
    kind: 'boolean',
    meaning: 'accept a --mode replay report (it re-judges an old run; not a fresh proof)',
    default: 'off',
  },
] as const satisfies readonly OptionSpec[]

/**
 * The options of verify that `preflight` takes, with the same meaning and the same env twins
 * (VERIFY_*): what names the target and how its engine is reached. The rest of verify's (the
 * probes', the meter's, the modes', the fleet's, its outputs) mean nothing before a deploy and are
 * refused as unknown; their twins are not read.
 */
export const PREFLIGHT_VERIFY_FLAGS = [
  'svc',
  'knob',
  'engine',
  'catalog',
  'value',
  'previous',
  'base-url',
  'api-key-file',
  'host',
  'ssh-opts',
  'runtime',
  'kube-opts',
  'process',
  'pid-cmd',
  'deploy-user',
  'sudo',
  'ledger-cmd',
  'help-cmd',
  'unit',
  'no-dropin-check',
  'health-budget',
  'host-timeout',
  'ca-file',
] as const satisfies readonly OptionFlag[]

/** `preflight`'s own options (env twins PREFLIGHT_*), besides verify's it takes. */
export const PREFLIGHT_OPTIONS = [
  {
    flag: 'checkout',
    env: 'PREFLIGHT_CHECKOUT',
    kind: 'string',
    meaning:
      'the deploy checkout (the folder deploy.sh runs from): it must be on branch main with no change and no untracked file (git status --porcelain --untracked-files=all empty)',
    default: 'the current folder',
  },
  {
    flag: 'env-file',
    env: 'PREFLIGHT_ENV_FILE',
    kind: 'string',
    meaning:
      "the service's env file in the checkout, relative to it (a path leaving the checkout is refused): it must differ from the engine's running environment in the knob's variable alone, set to --value",
    default: 'none: that check is skipped, saying so',
  },
  {
    flag: 'report',
    env: 'PREFLIGHT_REPORT',
    kind: 'string',
    meaning: "JSON report path (verify's format, armproof-report/1, with preflight's step ids); never VERIFY_REPORT",
    default: 'none',
  },
  {
    flag: 'json',
    env: 'PREFLIGHT_JSON',
    kind: 'boolean',
    meaning: 'write the JSON report to stdout, alone; every other line then goes to stderr; env: PREFLIGHT_JSON=1',
    default: 'off',
  },
] as const satisfies readonly OptionSpec[]

export type PreflightFlag = (typeof PREFLIGHT_OPTIONS)[number]['flag']

/** What a `preflight` run ends with, for --help and the docs: one wording. */
export const PREFLIGHT_EXIT_CODES_TEXT = `0 ready to deploy (every check passed, or was skipped saying why) · 1 not ready: do not deploy (a check failed; each names what to fix) · 2 usage or configuration error, before contact (a bad option, a --checkout that is no folder, an --env-file leaving the checkout, an unwritable --report; nothing contacted) or on first contact, as verify's (a host name that does not resolve, TLS, 401/403, 404 on /health, a port nothing on --host serves) · 3 cannot tell (a check could not be made: a host command failed, the engine could not be found) · ${EXIT_OUTPUT_UNWRITTEN} the verdict was printed but --report could not be written · 130/143 interrupted (SIGINT/SIGTERM): the checks made so far are the report, verdict interrupted`

/** `--help` rows: the flag, what it means, its env twin and its default (shared with pnpm writeback). */
export function optionRows(
  options: readonly Pick<OptionSpec, 'flag' | 'env' | 'kind' | 'meaning' | 'default'>[],
  width: number,
  metavar: (flag: string) => string = () => 'value',
): string[] {
  return options.map((o) => {
    const name = o.kind === 'boolean' ? `--${o.flag}` : `--${o.flag} <${metavar(o.flag)}>`
    return `  ${name.padEnd(width)} ${o.meaning}\n  ${''.padEnd(width)} env ${o.env}; default: ${o.default}`
  })
}

/** What each option's value is, as `--help` shows it: `<duration>`, `live|record|replay`, … */
export const METAVARS: Readonly<Record<string, string>> = {
  svc: 'svc',
  knob: 'knob',
  engine: 'radiance|vllm|sglang|llama.cpp|file',
  catalog: 'file',
  value: 'value',
  previous: 'value',
  'base-url': 'url',
  'api-key-file': 'path',
  model: 'id',
  host: 'local|[user@]host[:port]|[namespace/]pod',
  'ssh-opts': 'options',
  runtime: 'podman|docker|kubernetes|process',
  'kube-opts': 'options',
  skip: 'probe.vision,probe.tools',
  process: 'name',
  'deploy-user': 'user',
  sudo: 'auto|always|never',
  'ledger-cmd': 'command',
  'help-cmd': 'command',
  'pid-cmd': 'command',
  unit: 'unit',
  'health-budget': 'duration',
  'meter-window': 'duration',
  'probe-timeout': 'duration',
  'host-timeout': 'duration',
  mode: 'live|record|replay',
  fixtures: 'dir',
  report: 'path',
  'baseline-report': 'path',
  vault: 'dir',
  junit: 'path',
  summary: 'path',
  'ca-file': 'path',
  'prometheus-url': 'url',
  'prometheus-match': '{label="value",…}',
  targets: 'path',
  concurrency: 'auto|n',
  shard: 'i/n',
  'run-id': 'id',
}

export function metavar(flag: string): string {
  return METAVARS[flag] ?? 'value'
}

/** What a `pnpm verify` run ends with, for --help and the README: one wording. */
export const EXIT_CODES_TEXT = `0 green · 1 red (a proof step failed) · 2 usage or configuration error, found before contact (nothing contacted: a bad option, an unwritable output path, a key on the command line) or on first contact, before any proof step is judged (host name does not resolve, TLS verification fails, 401/403, 404 on /health) · 3 inconclusive · ${EXIT_OUTPUT_UNWRITTEN} the verdict was printed but an output file (--report, --junit, --summary, the step summary) could not be written · 130/143 interrupted (SIGINT/SIGTERM): the partial report is written with verdict interrupted`

/** The switches every command takes besides its table: help, version, colour (see ./color.ts). */
export const COMMON_SWITCHES = [
  '  --help, -h                         this text',
  '  --version, -V                      print the version (armproof X.Y.Z)',
  '  --color, --no-color                colour on or off; else FORCE_COLOR (non-empty; 0 or false: off), a non-empty NO_COLOR, TERM=dumb, and whether the output is a terminal decide',
]

/** `knobs`: radiance's knob names, or each built-in profile's (`[engine, names]`). */
export function helpText(knobs: readonly string[] | ReadonlyArray<readonly [string, readonly string[]]>): string {
  const knobLines =
    knobs.length > 0 && Array.isArray(knobs[0])
      ? [
          `Knobs of each --engine (or a --catalog file's): ${(knobs as ReadonlyArray<readonly [string, readonly string[]]>).map(([engine, names]) => `${engine}: ${names.join(', ')}`).join('; ')}`,
        ]
      : [`Knobs: ${(knobs as readonly string[]).join(', ')}`]
  const rows = optionRows(OPTIONS, 34, metavar)
  const verify = command('verify')
  return [
    'armproof: prove that one radiance knob arm reached the engine, moved its meter, and left behaviour intact.',
    '',
    `Usage: ${verify} --svc <svc> --knob <knob> [options]`,
    `       ${verify} --targets <file> [--concurrency auto|N] [--shard i/n] [options for every target]`,
    '',
    'Options (each has an env twin; .env is read; a flag beats env):',
    ...rows,
    ...COMMON_SWITCHES,
    '',
    'A <duration> is 90s, 5m, 1h30m or 500ms; a bare number is seconds (30 = 30s).',
    'Paths (--report, --junit, --summary, --api-key-file, --ca-file) are relative to the folder you ran the command from.',
    '',
    ...knobLines,
    '',
    "A fleet run: each target takes its entry, then the command line, then the file's defaults:, then env and .env; the whole file is checked before anything is contacted. Each target is then contacted once: an operator mistake there (host name, TLS, 401/403, 404 on /health) ends that target alone with verdict error. --report, --junit and --summary (run-wide, never in the file) hold every target; the exit code is the worst verdict (2, then 1, then 3, then 0). SIGINT/SIGTERM writes them partial: done targets keep their verdicts, the rest are interrupted; exit 130/143.",
    '',
    `The API key: ${API_KEY_ENV}=… in env or .env, or --api-key-file PATH; a key given as a flag (--api-key) is refused.`,
    '',
    'Examples:',
    `  ${verify} --svc llm-7 --knob PREFILL_INTERLEAVE --value 1 --base-url http://gpu-7:8000 --host deploy@gpu-7`,
    `  ${verify} --svc llm-7 --knob PREFILL_INTERLEAVE --base-url https://gpu-7:8443 --ca-file certs/internal-ca.pem --report out/llm-7.json --summary out/llm-7.md`,
    `  ${verify} --svc demo --knob PREFILL_INTERLEAVE --value 1 --mode replay --fixtures fixtures/demo/PREFILL_INTERLEAVE`,
    `  ${verify} --targets fleet.yaml --concurrency 8 --report out/fleet.json --junit out/fleet.xml --summary out/fleet.md`,
    `  ${verify} --svc llm-7 --knob PREFILL_INTERLEAVE --value 1 --base-url http://gpu-7:8000 --json | jq .verdict`,
    '',
    `Exit codes: ${EXIT_CODES_TEXT}`,
  ].join('\n')
}
