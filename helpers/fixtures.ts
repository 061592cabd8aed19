// A recorded run on disk: human-reviewable JSON with stable key order, one file per seam.
//   <folder>/run.json   metadata (svc, knob, expected, model, recorded at, tool version, choices, clock)
//   <folder>/http.json  every HTTP exchange in order
//   <folder>/host.json  every host command in order (the script only: no host, user or identity options)
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ConfigProblem, Target } from './config.ts'
import type { HostFailure } from './host.ts'
import { REDACTED } from './redact.ts'
import type { HttpFailure } from './http.ts'

export const FIXTURE_FORMAT = 1

export interface RunMeta {
  format: number
  svc: string
  knob: string
  /** The value asked for (null: the default). */
  value: string | null
  previous: string | null
  baseUrl: string
  host: string
  model: string | null
  recordedAt: string
  tool: { name: string; version: string }
  /** The run's random choices (exact word, vision colour, …), fed back in replay. */
  choices: Record<string, unknown>
  /** Every clock reading of the run, in ms after the first; replay returns them in order. */
  clock: number[]
  startedAtMs: number
  /** The run's options as recorded (no secret); a replay re-judges exactly this run. */
  target: RecordedTarget
  verdict?: string
}

/** What a replay takes from the recording rather than from its own flags. */
export type RecordedTarget = Omit<Target, 'apiKey' | 'mode' | 'fixtures' | 'report' | 'junit' | 'sshOpts'>

/** The target without its secret, its outputs, and ssh options (identity files are nobody's business in a fixture). */
export function recordedTarget(target: Target): RecordedTarget {
  const { apiKey: _apiKey, mode: _mode, fixtures: _fixtures, report: _report, junit: _junit, sshOpts: _sshOpts, ...rest } = target
  return rest
}

/** The target a replay runs with: the recorded run's options, this invocation's outputs and key. */
export function replayTarget(target: Target, meta: RunMeta): Target {
  return { ...target, ...meta.target, apiKey: target.apiKey, mode: 'replay', fixtures: target.fixtures, report: target.report, junit: target.junit }
}

export interface HttpExchange {
  seq: number
  /** ms after the run started, when the exchange ended. */
  at: number
  method: string
  /** Path and query, without scheme and host. */
  path: string
  request: { headers: Record<string, string>; sha256?: string; bytes?: number; body?: unknown }
  response?: { status: number; headers: Record<string, string>; body: string; redirects?: string[]; url?: string }
  error?: { failure: HttpFailure; message: string }
  durationMs: number
}

export interface HostExchange {
  seq: number
  at: number
  command: string
  asDeployUser: boolean
  stdout: string
  stderr: string
  exitCode: number | null
  failure?: HostFailure
  durationMs: number
}

export interface FixtureSet {
  meta: RunMeta
  http: HttpExchange[]
  host: HostExchange[]
}

export class FixtureError extends Error {
  readonly code: string
  constructor(code: string, message: string) {
    super(message)
    this.code = code
  }
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

/** JSON with object keys sorted, two-space indented, newline at the end: stable diffs. */
export function stableJson(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort)
    if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sort((v as Record<string, unknown>)[k])]))
    return v
  }
  return `${JSON.stringify(sort(value), null, 2)}\n`
}

export function readFixtures(folder: string): FixtureSet {
  const read = (name: string): unknown => {
    const path = join(folder, name)
    let text: string
    try {
      text = readFileSync(path, 'utf8')
    } catch {
      throw new FixtureError('ARMPROOF_FIXTURES_MISSING', `no recording at ${path}`)
    }
    try {
      return JSON.parse(text)
    } catch (error) {
      throw new FixtureError('ARMPROOF_FIXTURES_INVALID', `${path} is not valid JSON: ${(error as Error).message}`)
    }
  }
  const meta = read('run.json') as RunMeta
  if (meta.format !== FIXTURE_FORMAT) throw new FixtureError('ARMPROOF_FIXTURES_INVALID', `${join(folder, 'run.json')} has format ${meta.format}; this armproof reads format ${FIXTURE_FORMAT}`)
  return { meta, http: read('http.json') as HttpExchange[], host: read('host.json') as HostExchange[] }
}

/**
 * Writes a fixture set, refusing if a secret would land in a file: nothing is written then.
 * Files are written to a temp folder first and moved into place.
 */
export function writeFixtures(folder: string, set: FixtureSet, secrets: readonly string[]): void {
  const files: Record<string, string> = { 'run.json': stableJson(set.meta), 'http.json': stableJson(set.http), 'host.json': stableJson(set.host) }
  for (const [name, text] of Object.entries(files)) {
    for (const secret of secrets) {
      if (secret.length >= 4 && text.includes(secret)) {
        throw new FixtureError('ARMPROOF_FIXTURES_SECRET', `refusing to record: the API key would land in ${join(folder, name)}; nothing was written`)
      }
    }
    if (/authorization"?\s*:\s*"bearer\s+(?!\[redacted\])/i.test(text)) {
      throw new FixtureError('ARMPROOF_FIXTURES_SECRET', `refusing to record: a bearer token would land in ${join(folder, name)}; nothing was written`)
    }
  }
  const temp = `${folder}.tmp-${process.pid}`
  rmSync(temp, { recursive: true, force: true })
  mkdirSync(temp, { recursive: true })
  for (const [name, text] of Object.entries(files)) writeFileSync(join(temp, name), text)
  mkdirSync(folder, { recursive: true })
  for (const name of Object.keys(files)) renameSync(join(temp, name), join(folder, name))
  rmSync(temp, { recursive: true, force: true })
}

const SECRET_HEADERS = new Set(['authorization', 'cookie', 'set-cookie', 'x-api-key', 'proxy-authorization'])
const KEPT_RESPONSE_HEADERS = new Set(['content-type', 'location'])

/** Request headers as stored: secrets replaced by "[redacted]". */
export function redactRequestHeaders(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(headers ?? {})) out[k.toLowerCase()] = SECRET_HEADERS.has(k.toLowerCase()) ? REDACTED : v
  return out
}

/** Response headers as stored: only those replay needs; secrets never. */
export function keepResponseHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(headers)) if (KEPT_RESPONSE_HEADERS.has(k)) out[k] = v
  return out
}

/** A request body as stored: parsed JSON when it is JSON, with data-URL images cut to digest and size. */
export function storedBody(body: string): unknown {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return body.length > 4096 ? { sha256: sha256(body), bytes: body.length } : body
  }
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string' && v.startsWith('data:') && v.length > 256) {
      const comma = v.indexOf(',')
      return { dataUrl: v.slice(0, comma + 1), sha256: sha256(v), bytes: v.length }
    }
    if (Array.isArray(v)) return v.map(walk)
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]))
    return v
  }
  return walk(parsed)
}

/**
 * Before a replay contacts nothing: the fixtures exist and were recorded for this svc, knob and
 * value. Returns the problems (exit 2) and the recorded base URL, which the replay reports as
 * where things were seen.
 */
export function replayCheck(folder: string, want: { svc: string; knob: string; value: string | null }): { problems: string[]; meta?: RunMeta } {
  let meta: RunMeta
  try {
    meta = readFixtures(folder).meta
  } catch (error) {
    if (!(error instanceof FixtureError)) throw error
    return { problems: [`--fixtures: ${error.message}; record one with --mode record`] }
  }
  const problems: string[] = []
  const show = (v: string | null) => (v === null ? 'the default' : v)
  if (meta.svc !== want.svc) problems.push(`--fixtures: ${folder} was recorded for --svc ${meta.svc}, not ${want.svc}`)
  if (meta.knob !== want.knob) problems.push(`--fixtures: ${folder} was recorded for --knob ${meta.knob}, not ${want.knob}`)
  if (meta.value !== want.value) problems.push(`--fixtures: ${folder} was recorded for --value ${show(meta.value)}, not ${show(want.value)}`)
  return { problems, meta }
}

/** After a recorded run: notes its verdict in run.json, so a reviewer (and replay tests) can see it. */
export function markRecordedVerdict(folder: string, verdict: string): void {
  const path = join(folder, 'run.json')
  let meta: RunMeta
  try {
    meta = JSON.parse(readFileSync(path, 'utf8')) as RunMeta
  } catch {
    return
  }
  writeFileSync(path, stableJson({ ...meta, verdict }))
}

/**
 * The target a run goes with: as given for live and record; for replay, the recorded run's
 * options, after checking the recording fits (else the problems, exit 2).
 */
export function targetForRun(target: Target): { target: Target } | { problems: ConfigProblem[] } {
  if (target.mode !== 'replay') return { target }
  const check = replayCheck(target.fixtures, target)
  if (check.problems.length > 0) return { problems: check.problems.map((message) => ({ option: '--fixtures', message })) }
  return { target: replayTarget(target, check.meta!) }
}
