// `armproof serve`'s options as data (flag, env twin, meaning, default), read by the one
// command-line parser (helpers/config/command-line.ts). Safe by default: it listens on loopback, and it
// refuses to start without a token source unless told, and then only on loopback. The token
// itself never comes from a flag (argv is echoed by pnpm and kept by ps and shell history).
import { isIP } from 'node:net'
import { resolve } from 'node:path'
import { envBoolean, parseCommandLine } from '../config/command-line.ts'
import { COMMON_SWITCHES, optionRows, type OptionSpec } from '../config/options.ts'
import { parseDuration, formatDuration } from '../config/duration.ts'
import { showValue } from '../config/shell.ts'
import { command } from '../config/invocation.ts'

export const TOKEN_ENV = 'ARMPROOF_SERVE_TOKEN'
export const DEFAULT_LISTEN = '127.0.0.1:8080'
export const DEFAULT_RUN_TIMEOUT = '30m'
export const DEFAULT_MAX_RUNS = 4
export const DEFAULT_QUEUE = 16

export const SERVE_OPTIONS = [
  {
    flag: 'targets',
    env: 'ARMPROOF_SERVE_TARGETS',
    kind: 'string',
    meaning:
      'the targets file (as verify --targets reads it); POST /verify/<svc> runs the target whose svc is <svc>; read again at every request',
    default: 'required',
  },
  {
    flag: 'listen',
    env: 'ARMPROOF_SERVE_LISTEN',
    kind: 'string',
    meaning: 'HOST:PORT to listen on ([::1]:8080 for IPv6; port 0 picks a free one)',
    default: DEFAULT_LISTEN,
  },
  {
    flag: 'token-file',
    env: 'ARMPROOF_SERVE_TOKEN_FILE',
    kind: 'string',
    meaning: `file holding the bearer token requests must carry (one line); or the token itself in ${TOKEN_ENV}`,
    default: 'none',
  },
  {
    flag: 'no-token',
    env: 'ARMPROOF_SERVE_NO_TOKEN',
    kind: 'boolean',
    meaning: 'serve without a token: refused unless --listen is a loopback address',
    default: 'off',
  },
  {
    flag: 'run-timeout',
    env: 'ARMPROOF_SERVE_RUN_TIMEOUT',
    kind: 'string',
    meaning: 'how long one run may take before it is stopped (its report then says interrupted)',
    default: DEFAULT_RUN_TIMEOUT,
  },
  {
    flag: 'max-runs',
    env: 'ARMPROOF_SERVE_MAX_RUNS',
    kind: 'string',
    meaning: 'runs under way at once (one per target at most)',
    default: String(DEFAULT_MAX_RUNS),
  },
  {
    flag: 'queue',
    env: 'ARMPROOF_SERVE_QUEUE',
    kind: 'string',
    meaning: 'runs that may wait for a slot; past that a request gets 503',
    default: String(DEFAULT_QUEUE),
  },
] as const satisfies readonly OptionSpec[]

type Flag = (typeof SERVE_OPTIONS)[number]['flag']

export interface ServeOptions {
  targets: string
  host: string
  port: number
  tokenFile: string | null
  noToken: boolean
  runTimeoutMs: number
  maxRuns: number
  queue: number
}

export type ServeOptionsResult = { ok: true; options: ServeOptions } | { ok: false; help?: boolean; version?: boolean; problems: string[] }

/** `HOST:PORT` (`[v6]:PORT`) → its parts, or a message. */
export function parseListen(text: string): { host: string; port: number } | string {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(text.trim())
  const port = m ? Number(m[3]) : NaN
  if (!m || port > 65535) return `${showValue(text, 60)} is not HOST:PORT, e.g. 127.0.0.1:8080, 0.0.0.0:8080 or [::1]:8080`
  const host = m[1] ?? m[2]!
  if (m[1] !== undefined && isIP(host) !== 6) return `${showValue(text, 60)}: ${host} is not an IPv6 address`
  return { host, port }
}

/** Whether the server would answer only this machine: 127.0.0.0/8, ::1, localhost. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'))
}

function positiveInt(text: string, max: number): number | undefined {
  if (!/^\d{1,6}$/.test(text.trim())) return undefined
  const n = Number(text)
  return n >= 1 && n <= max ? n : undefined
}

/** Flags and env → options; every problem at once, never throws. Paths resolve against `cwd`. */
export function parseServeOptions(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): ServeOptionsResult {
  // --token is known only to be refused: its value goes with it, never shown.
  const parsed = parseCommandLine(argv, SERVE_OPTIONS, ['token'])
  if (parsed.help) return { ok: false, help: true, problems: [] }
  if (parsed.version) return { ok: false, version: true, problems: [] }
  const problems: string[] = []
  for (const p of parsed.problems) {
    if (p.kind === 'positional')
      problems.push(`unexpected argument ${showValue(p.value)}; options start with -- (${command('serve')} --help)`)
    else if (p.kind === 'unknown')
      problems.push(
        `unknown option ${showValue(p.rawName)}${p.swallowed ? ' (its value is not shown)' : ''}${p.meant !== undefined ? `; did you mean --${p.meant}?` : ''} (${command('serve')} --help)`,
      )
    else if (p.kind === 'refused')
      problems.push(
        `--token: a token on the command line is refused (pnpm echoes it; ps and shell history keep it); put it in ${TOKEN_ENV} or in a file passed with --token-file PATH`,
      )
    else problems.push(`--${p.flag}: ${p.kind === 'needs-value' ? 'needs a value' : 'takes no value'}`)
  }
  const raw = (flag: Flag): { value: string; from: string } | undefined => {
    const f = parsed.values.get(flag)
    if (typeof f === 'string') return { value: f, from: `--${flag}` }
    const o = SERVE_OPTIONS.find((x) => x.flag === flag)!
    const e = env[o.env]
    return e === undefined || e === '' ? undefined : { value: e, from: o.env }
  }
  const targets = raw('targets')
  if (!targets)
    problems.push(
      `--targets: required: the targets file whose targets POST /verify/<svc> runs (as ${command('verify')} --targets reads it)`,
    )
  const listenRaw = raw('listen')
  const listen = parseListen(listenRaw?.value ?? DEFAULT_LISTEN)
  if (typeof listen === 'string') problems.push(`${listenRaw?.from ?? '--listen'}: ${listen}`)
  let noToken = parsed.values.get('no-token') === true
  const noTokenEnv = env.ARMPROOF_SERVE_NO_TOKEN
  if (!noToken && noTokenEnv !== undefined) {
    const yes = envBoolean(noTokenEnv)
    if (yes === undefined) problems.push(`ARMPROOF_SERVE_NO_TOKEN: ${showValue(noTokenEnv)} is not 1/0/true/false`)
    noToken = yes === true
  }
  const tokenFile = raw('token-file')
  const tokenEnv = env[TOKEN_ENV]
  const hasToken = tokenFile !== undefined || (tokenEnv !== undefined && tokenEnv !== '')
  if (tokenFile && tokenEnv) problems.push(`${tokenFile.from} and ${TOKEN_ENV} are both set: give the token one way`)
  if (noToken && hasToken) problems.push(`--no-token and a token (${tokenFile?.from ?? TOKEN_ENV}) are both given: drop one`)
  if (!noToken && !hasToken)
    problems.push(
      `no token: every request must carry one (Authorization: Bearer <token>); set ${TOKEN_ENV}, or pass --token-file PATH (e.g. a Kubernetes secret mounted as a file); --no-token serves without one, on a loopback --listen only`,
    )
  if (noToken && typeof listen !== 'string' && !isLoopback(listen.host))
    problems.push(
      `--no-token with --listen ${listen.host}: anyone who reaches ${listen.host} could start runs; without a token serve listens on loopback only (127.0.0.1, ::1); give a token for ${listen.host}`,
    )
  const timeoutRaw = raw('run-timeout')
  const runTimeoutMs = parseDuration(timeoutRaw?.value ?? DEFAULT_RUN_TIMEOUT)
  if (runTimeoutMs === undefined || runTimeoutMs <= 0)
    problems.push(`${timeoutRaw?.from ?? '--run-timeout'}: ${showValue(timeoutRaw?.value ?? '')} is not a positive duration, e.g. 30m`)
  const count = (flag: 'max-runs' | 'queue', fallback: number, max: number): number => {
    const r = raw(flag)
    if (!r) return fallback
    const n = positiveInt(r.value, max)
    if (n === undefined) problems.push(`${r.from}: ${showValue(r.value)} is not a whole number from 1 to ${max}`)
    return n ?? fallback
  }
  const maxRuns = count('max-runs', DEFAULT_MAX_RUNS, 64)
  const queue = count('queue', DEFAULT_QUEUE, 1024)
  if (problems.length > 0 || !targets || typeof listen === 'string' || runTimeoutMs === undefined) return { ok: false, problems }
  return {
    ok: true,
    options: {
      targets: resolve(cwd, targets.value),
      host: listen.host,
      port: listen.port,
      tokenFile: tokenFile ? resolve(cwd, tokenFile.value) : null,
      noToken,
      runTimeoutMs,
      maxRuns,
      queue,
    },
  }
}

export function serveHelp(): string {
  return [
    'armproof serve: answers a rollout controller (Argo Rollouts, Flagger) with the verdict of one target of a targets file.',
    '',
    `Usage: ${command('serve')} --targets <file> [--listen HOST:PORT] [--token-file PATH] [options]`,
    '',
    'Options (each has an env twin; a flag beats env):',
    ...optionRows(SERVE_OPTIONS, 30, (flag) =>
      flag === 'listen' ? 'HOST:PORT' : flag === 'run-timeout' ? 'duration' : flag === 'max-runs' || flag === 'queue' ? 'N' : 'path',
    ),
    ...COMMON_SWITCHES,
    '',
    'Requests (the request names a target, never an option or a command):',
    '  POST /verify/<svc>    runs that target; answers its JSON report: 200 green, 412 red, inconclusive, error or interrupted,',
    "                        503 while that target's run is under way or the queue is full, 401 without the token, 404 no such target",
    '  POST /analysis/<svc>  the same run, answered 200 whatever the verdict, for a controller that judges the body',
    "                        (Argo Rollouts' web provider: jsonPath {$.verdict}; it takes any non-2xx as an error and never reads it)",
    '  GET /healthz          200 while serving;  GET /metrics  its own counters (Prometheus text)',
    `The token: Authorization: Bearer <token>; a Flagger webhook (it sends no headers) puts it in its metadata as token.`,
    `Each run is a child verify process of that target, stopped after --run-timeout (default ${formatDuration(parseDuration(DEFAULT_RUN_TIMEOUT)!)}) or when the client goes away.`,
  ].join('\n')
}
