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
export const DEFAULT_QUEUE_WAIT = '1m'
export const DEFAULT_KEEP_RUNS = '1h'
export const DEFAULT_HEADER_TIMEOUT = '10s'
export const DEFAULT_REQUEST_TIMEOUT = '15s'
export const DEFAULT_MAX_CONNECTIONS = 256
export const DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 32

export const SERVE_OPTIONS = [
  {
    flag: 'targets',
    env: 'ARMPROOF_SERVE_TARGETS',
    kind: 'string',
    meaning:
      'the targets file (as verify --targets reads it); POST /verify/<svc> runs the target whose svc is <svc>; read again once it changes',
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
  {
    flag: 'queue-wait',
    env: 'ARMPROOF_SERVE_QUEUE_WAIT',
    kind: 'string',
    meaning: 'how long a run may wait for a slot; then its request gets 503 with Retry-After (0: none waits, 503 at once)',
    default: DEFAULT_QUEUE_WAIT,
  },
  {
    flag: 'keep-runs',
    env: 'ARMPROOF_SERVE_KEEP_RUNS',
    kind: 'string',
    meaning: 'how long GET /runs/<id> keeps a finished asynchronous run',
    default: DEFAULT_KEEP_RUNS,
  },
  {
    flag: 'max-connections',
    env: 'ARMPROOF_SERVE_MAX_CONNECTIONS',
    kind: 'string',
    meaning: 'connections open at once, in all; past it a new one is closed at once',
    default: String(DEFAULT_MAX_CONNECTIONS),
  },
  {
    flag: 'max-connections-per-client',
    env: 'ARMPROOF_SERVE_MAX_CONNECTIONS_PER_CLIENT',
    kind: 'string',
    meaning: 'connections open at once from one client address; past it a new one is closed at once',
    default: String(DEFAULT_MAX_CONNECTIONS_PER_CLIENT),
  },
  {
    flag: 'header-timeout',
    env: 'ARMPROOF_SERVE_HEADER_TIMEOUT',
    kind: 'string',
    meaning: "a request's headers must arrive within this (408); a connection idle before its request is closed after it",
    default: DEFAULT_HEADER_TIMEOUT,
  },
  {
    flag: 'request-timeout',
    env: 'ARMPROOF_SERVE_REQUEST_TIMEOUT',
    kind: 'string',
    meaning: 'the whole request, body included, must arrive within this (408); the run that follows has --run-timeout',
    default: DEFAULT_REQUEST_TIMEOUT,
  },
  {
    flag: 'metrics-listen',
    env: 'ARMPROOF_SERVE_METRICS_LISTEN',
    kind: 'string',
    meaning: 'HOST:PORT of a second listener answering GET /healthz and GET /metrics in full without the token (for probes and Prometheus)',
    default: 'none',
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
  queueWaitMs: number
  keepRunsMs: number
  maxConnections: number
  maxConnectionsPerClient: number
  headerTimeoutMs: number
  requestTimeoutMs: number
  metricsListen: { host: string; port: number } | null
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
  const count = (flag: 'max-runs' | 'queue' | 'max-connections' | 'max-connections-per-client', fallback: number, max: number): number => {
    const r = raw(flag)
    if (!r) return fallback
    const n = positiveInt(r.value, max)
    if (n === undefined) problems.push(`${r.from}: ${showValue(r.value)} is not a whole number from 1 to ${max}`)
    return n ?? fallback
  }
  const maxRuns = count('max-runs', DEFAULT_MAX_RUNS, 64)
  const queue = count('queue', DEFAULT_QUEUE, 1024)
  const maxConnections = count('max-connections', DEFAULT_MAX_CONNECTIONS, 65536)
  const maxConnectionsPerClient = count('max-connections-per-client', DEFAULT_MAX_CONNECTIONS_PER_CLIENT, 65536)
  /** A duration option: its ms, within [min, max]; `zero` lets 0 through. */
  const duration = (
    flag: 'queue-wait' | 'keep-runs' | 'header-timeout' | 'request-timeout',
    fallback: string,
    zero: boolean,
    max: string,
  ): number => {
    const r = raw(flag)
    const text = r?.value ?? fallback
    const ms = text.trim() === '0' ? 0 : parseDuration(text)
    if (ms === undefined || (ms === 0 && !zero) || ms > parseDuration(max)!) {
      problems.push(
        `${r?.from ?? `--${flag}`}: ${showValue(text)} is not a ${zero ? '' : 'positive '}duration up to ${max}, e.g. ${fallback}`,
      )
      return parseDuration(fallback)!
    }
    return ms
  }
  const queueWaitMs = duration('queue-wait', DEFAULT_QUEUE_WAIT, true, '24h')
  const keepRunsMs = duration('keep-runs', DEFAULT_KEEP_RUNS, false, '168h')
  const headerTimeoutMs = duration('header-timeout', DEFAULT_HEADER_TIMEOUT, false, '10m')
  const requestTimeoutMs = duration('request-timeout', DEFAULT_REQUEST_TIMEOUT, false, '10m')
  if (requestTimeoutMs < headerTimeoutMs)
    problems.push(
      `--request-timeout ${raw('request-timeout')?.value ?? DEFAULT_REQUEST_TIMEOUT} is shorter than --header-timeout ${raw('header-timeout')?.value ?? DEFAULT_HEADER_TIMEOUT}: the whole request includes its headers`,
    )
  if (maxConnectionsPerClient > maxConnections)
    problems.push(
      `--max-connections-per-client ${maxConnectionsPerClient} is above --max-connections ${maxConnections}: one client could take them all`,
    )
  const metricsRaw = raw('metrics-listen')
  let metricsListen: { host: string; port: number } | null = null
  if (metricsRaw && metricsRaw.value !== 'none') {
    const m = parseListen(metricsRaw.value)
    if (typeof m === 'string') problems.push(`${metricsRaw.from}: ${m}`)
    else if (typeof listen !== 'string' && m.port !== 0 && m.port === listen.port && m.host === listen.host)
      problems.push(`${metricsRaw.from}: ${m.host}:${m.port} is --listen's own address; give the probes a port of their own`)
    else metricsListen = m
  }
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
      queueWaitMs,
      keepRunsMs,
      maxConnections,
      maxConnectionsPerClient,
      headerTimeoutMs,
      requestTimeoutMs,
      metricsListen,
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
    ...optionRows(SERVE_OPTIONS, 38, (flag) =>
      flag === 'listen' || flag === 'metrics-listen'
        ? 'HOST:PORT'
        : ['run-timeout', 'queue-wait', 'keep-runs', 'header-timeout', 'request-timeout'].includes(flag)
          ? 'duration'
          : ['max-runs', 'queue', 'max-connections', 'max-connections-per-client'].includes(flag)
            ? 'N'
            : 'path',
    ),
    ...COMMON_SWITCHES,
    '',
    'Requests (the request names a target, never an option or a command):',
    '  POST /verify/<svc>    runs that target; answers its JSON report: 200 green, 412 red, inconclusive, error or interrupted,',
    "                        503 while that target's run is under way or the queue is full, 401 without the token, 404 no such target",
    '  POST /analysis/<svc>  the same run, answered 200 for every outcome after the token (the report, or one shaped like it',
    "                        with verdict error), for a controller that judges the body (Argo Rollouts' web provider: jsonPath {$.verdict})",
    '  POST /runs/<svc>      starts that run and answers at once: 202, its id, Location: /runs/<id>',
    '  GET /runs/<id>        200 {"state": queued|running|done, "verdict"?, "report"?}, with the token',
    '  GET /healthz          200 {"status":"ok"} while serving (503 failing or stopping); more with the token',
    '  GET /metrics          its own counters (Prometheus text), with the token, or without one on --metrics-listen',
    `The token: Authorization: Bearer <token>; a Flagger webhook (it sends no headers) puts it in its metadata as token.`,
    `Each run is a child verify process of that target, stopped after --run-timeout (default ${formatDuration(parseDuration(DEFAULT_RUN_TIMEOUT)!)}) or when the client goes away.`,
  ].join('\n')
}

const TABLE_BEGIN = '<!-- generated from helpers/serve/options.ts by `pnpm faults-doc`; test/serve/options-doc.test.ts keeps it equal -->\n'
const TABLE_END = '\n<!-- end of the generated serve options -->'

/** serve's options as a Markdown table (flag, env twin, meaning, default), from SERVE_OPTIONS. */
export function serveOptionsTable(): string {
  const cell = (text: string): string => text.replaceAll('|', '\\|').replaceAll('<', '&lt;').replaceAll('>', '&gt;')
  return [
    '| flag | env | meaning | default |',
    '|---|---|---|---|',
    ...SERVE_OPTIONS.map(
      (o) =>
        `| \`--${o.flag}\` | \`${o.env}\` | ${cell(o.meaning)} | ${o.default === 'required' || o.default === 'none' || o.default === 'off' ? o.default : `\`${o.default}\``} |`,
    ),
  ].join('\n')
}

/** A document with its generated serve options table (between its markers) made again. */
export function withServeOptionsTable(text: string): string {
  const a = text.indexOf(TABLE_BEGIN)
  const b = text.indexOf(TABLE_END)
  if (a < 0 || b < a) throw new Error('the document lacks the markers around the generated serve options table')
  return text.slice(0, a + TABLE_BEGIN.length) + serveOptionsTable() + text.slice(b)
}
