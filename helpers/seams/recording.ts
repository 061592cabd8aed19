// A recorded run on disk: human-reviewable JSON with stable key order, one file per seam.
//   <folder>/run.json   metadata (svc, knob, expected, model, recorded at, tool version, choices, clock)
//   <folder>/http.json  every HTTP exchange in order
//   <folder>/host.json  every host command in order (the script only: no host, user or identity options)
//   run.json also holds `digests`: the sha256 of each file (run.json's own over its content without
//   `digests`), written by the recorder and checked before every replay: an edited recording is refused.
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ConfigProblem, Target } from '../config/load.ts'
import type { HostFailure } from './host.ts'
import { REDACTED } from './redacted.ts'
import type { HttpFailure } from './http.ts'
import { KNOB_NAME_RE, PROFILE_DOC } from '../profiles/doc.ts'
import { SVC_NAME } from '../config/shell.ts'
import { RUNTIMES } from '../config/runtime.ts'
import { SKIPPABLE_IDS } from '../config/skips.ts'
import { array, boolean, endsEarly, literal, nullable, number, object, optional, record, string, tagged, unknownValue, type Infer, type Schema } from '../schema/schema.ts'
import { STEP_IDS } from '../config/step-ids.ts'

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
  /** The recorded run's verdict and each step's verdict, added when the run closed; replay must reach the same. */
  verdict?: string
  steps?: Record<string, string>
  /** sha256 of every fixture file; see `fileDigests`. */
  digests?: Digests
}

export const FIXTURE_FILES = ['run.json', 'http.json', 'host.json'] as const
export type Digests = Record<(typeof FIXTURE_FILES)[number], string>

/** What a replay takes from the recording rather than from its own flags. */
export type RecordedTarget = Omit<Target, 'apiKey' | 'mode' | 'fixtures' | 'report' | 'junit' | 'sshOpts' | 'caFile' | 'summary' | 'force'>

/** The target without its secret, its outputs, and ssh options (identity files are nobody's business in a fixture). */
export function recordedTarget(target: Target): RecordedTarget {
  const { apiKey: _apiKey, mode: _mode, fixtures: _fixtures, report: _report, junit: _junit, sshOpts: _sshOpts, caFile: _caFile, summary: _summary, force: _force, ...rest } = target
  return rest
}

/**
 * The target a replay runs with. What is judged (svc, knob, value, previous) comes from one source,
 * the command line, which `replayCheck` has checked against the recording; the rest of the recorded
 * run's options (process, commands, budgets) from the recording; outputs and key from this invocation.
 */
export function replayTarget(target: Target, meta: RunMeta): Target {
  return {
    ...target,
    ...meta.target,
    svc: target.svc,
    knob: target.knob,
    value: target.value,
    previous: target.previous ?? meta.target.previous,
    apiKey: target.apiKey,
    mode: 'replay',
    fixtures: target.fixtures,
    report: target.report,
    junit: target.junit,
  }
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

export function sha256(text: string | Uint8Array): string {
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

const SVC = SVC_NAME

/**
 * Every failure the seams can record, so a recording of any run reads back: a list that misses one
 * (the host seam's `output-cut` once) makes armproof refuse its own recording. The checks below
 * fail to compile when a seam's failure type gains a value these lists lack.
 */
const HTTP_FAILURES = ['refused', 'timeout', 'reset', 'truncated', 'dns', 'too-large', 'tls', 'not-tls', 'redirect', 'other'] as const satisfies readonly HttpFailure[]
const HOST_FAILURES = ['timeout', 'unreachable', 'host-key', 'auth', 'sudo-password', 'spawn', 'output-cut'] as const satisfies readonly HostFailure[]
type Covers<All, Listed> = [Exclude<All, Listed>] extends [never] ? true : ['not listed', Exclude<All, Listed>]
const _httpFailures: Covers<HttpFailure, (typeof HTTP_FAILURES)[number]> = true
const _hostFailures: Covers<HostFailure, (typeof HOST_FAILURES)[number]> = true
void _httpFailures
void _hostFailures
const HOST_SPEC = tagged('kind', {
  local: object({ kind: literal('local') }),
  ssh: object({ kind: literal('ssh'), host: string(), user: optional(string()), port: optional(number({ integer: true, min: 1 })) }),
  // Recorded since --runtime kubernetes: the pod, by Kubernetes' own name rules.
  pod: object({ kind: literal('pod'), pod: string({ re: /^[a-z0-9][-a-z0-9.]{0,252}$/, says: 'a pod name (DNS-1123)' }), namespace: optional(string({ re: /^[a-z0-9][-a-z0-9]{0,62}$/, says: 'a namespace (DNS-1123 label)' })) }),
})
const DIGEST = string({ re: /^[0-9a-f]{64}$/, says: 'a sha256 hex digest' })

const KNOB = string({ re: KNOB_NAME_RE, says: 'a knob name in capitals' })

/** The recorded options (`RecordedTarget`), as a schema. */
const TARGET_SCHEMA = object({
  svc: string(SVC), knob: KNOB, value: nullable(string()), previous: nullable(string()), baseUrl: nullable(string()), model: nullable(string()),
  host: HOST_SPEC, process: string(), deployUser: nullable(string()), sudo: optional(literal('auto', 'always', 'never')), ledgerCmd: string(), helpCmd: string(),
  // null since a runtime may have no unit (a pod; a docker container or a bare process without --unit).
  unit: nullable(string()),
  dropinCheck: boolean(), healthBudgetMs: number({ min: 0 }), meterWindowMs: number({ min: 0 }), probeTimeoutMs: number({ min: 0 }), hostTimeoutMs: number({ min: 0 }),
  // Recorded since the meter could be read through Prometheus; absent in older recordings.
  prometheusUrl: optional(nullable(string())), prometheusMatch: optional(nullable(string())),
  // Recorded since the engine could be found by --pid-cmd; absent in older recordings.
  pidCmd: optional(nullable(string())),
  // Recorded since --runtime, --kube-opts and --skip; absent in older recordings (podman, none, none).
  runtime: optional(literal(...RUNTIMES)), kubeOpts: optional(array(string())), skip: optional(array(literal(...SKIPPABLE_IDS))),
  // Recorded since engines have profiles (--engine, --catalog): the profile as written, a catalog's knobs
  // in it; absent in older recordings (their knob is radiance's).
  engine: optional(PROFILE_DOC),
})
// Every option a recording keeps is one its schema knows: a Target field added without its line
// here fails to compile (a recording of a run with it would not read back as written).
const _everyOption: Covers<keyof RecordedTarget, keyof Infer<typeof TARGET_SCHEMA>> = true
void _everyOption

const RUN_SCHEMA = object({
  format: literal(FIXTURE_FORMAT),
  svc: string(SVC),
  knob: KNOB,
  value: nullable(string()),
  previous: nullable(string()),
  baseUrl: string(),
  host: string(),
  model: nullable(string()),
  recordedAt: string({ re: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/, says: 'an ISO time' }),
  tool: object({ name: string(), version: string() }),
  choices: record(unknownValue()),
  clock: array(number({ min: 0 })),
  startedAtMs: number({ min: 0 }),
  target: TARGET_SCHEMA,
  verdict: optional(literal('green', 'red', 'inconclusive', 'error', 'interrupted')),
  steps: optional(record(literal('passed', 'failed', 'inconclusive', 'skipped'), { re: new RegExp(`^(${STEP_IDS.map((x) => x.replace('.', '\\.')).join('|')})$`), says: 'a step id' })),
  digests: optional(object({ 'run.json': DIGEST, 'http.json': DIGEST, 'host.json': DIGEST })),
}) as Schema<unknown>

const HEADERS = record(string())
const HTTP_SCHEMA = array(object({
  seq: number({ integer: true, min: 0 }),
  at: number({ min: 0 }),
  method: string({ re: /^[A-Z]+$/, says: 'an HTTP method' }),
  path: string({ re: /^\//, says: 'a path starting with /' }),
  request: object({ headers: HEADERS, sha256: optional(DIGEST), bytes: optional(number({ integer: true, min: 0 })), body: optional(unknownValue()) }),
  response: optional(object({ status: number({ integer: true, min: 100 }), headers: HEADERS, body: string(), redirects: optional(array(string())), url: optional(string()) })),
  error: optional(object({ failure: literal(...HTTP_FAILURES), message: string() })),
  durationMs: number({ min: 0 }),
})) as Schema<unknown>

const HOST_SCHEMA = array(object({
  seq: number({ integer: true, min: 0 }),
  at: number({ min: 0 }),
  command: string(),
  asDeployUser: boolean(),
  stdout: string(),
  stderr: string(),
  exitCode: nullable(number({ integer: true })),
  failure: optional(literal(...HOST_FAILURES)),
  durationMs: number({ min: 0 }),
})) as Schema<unknown>

const SCHEMAS: Readonly<Record<(typeof FIXTURE_FILES)[number], Schema<unknown>>> = { 'run.json': RUN_SCHEMA, 'http.json': HTTP_SCHEMA, 'host.json': HOST_SCHEMA }

/** The files' text, read as they are on disk (a BOM is accepted and dropped). */
function readTexts(folder: string): Record<(typeof FIXTURE_FILES)[number], string> {
  const out: Partial<Record<(typeof FIXTURE_FILES)[number], string>> = {}
  for (const name of FIXTURE_FILES) {
    const path = join(folder, name)
    try {
      out[name] = readFileSync(path, 'utf8').replace(/^\uFEFF/, '')
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      throw new FixtureError('ARMPROOF_FIXTURES_MISSING', code === 'ENOENT' || name !== 'run.json' ? `no recording at ${path}` : `${path} cannot be read (${code ?? 'error'})`)
    }
  }
  return out as Record<(typeof FIXTURE_FILES)[number], string>
}

/** Parses and checks one file against its schema; a problem names the file and the field. */
function parseChecked(folder: string, name: (typeof FIXTURE_FILES)[number], text: string): unknown {
  const path = join(folder, name)
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch (error) {
    const early = endsEarly(text, error)
    throw new FixtureError('ARMPROOF_FIXTURES_INVALID', `${path} is not valid JSON${early ? ' (it ends early: truncated?)' : ''}`)
  }
  if (name === 'run.json' && data && typeof data === 'object' && (data as RunMeta).format !== FIXTURE_FORMAT) {
    throw new FixtureError('ARMPROOF_FIXTURES_INVALID', `${path} has format ${JSON.stringify((data as RunMeta).format)}; this armproof reads format ${FIXTURE_FORMAT}`)
  }
  const r = SCHEMAS[name].check(data, '')
  if (!r.ok) throw new FixtureError('ARMPROOF_FIXTURES_INVALID', `${path}: field ${r.path || '(the whole file)'} ${r.problem}`)
  // The file as written, every field kept (the checked value drops the fields it does not name):
  // its digest is taken over what the recorder wrote, and a replay runs with every recorded option.
  return data
}

/** run.json's digest covers its content without the `digests` field itself. */
export function runDigest(meta: object): string {
  const { digests: _d, ...rest } = meta as RunMeta
  return sha256(stableJson(rest))
}

/** The digests of a fixture set's files as they are written. */
export function fileDigests(meta: RunMeta, texts: { 'http.json': string; 'host.json': string }): Digests {
  return { 'run.json': runDigest(meta), 'http.json': sha256(texts['http.json']), 'host.json': sha256(texts['host.json']) }
}

/** One digest for the whole recording: what a replay report carries and writeback checks again. */
export function recordingDigest(digests: Digests): string {
  return sha256(stableJson(digests))
}

/** The files whose content no longer matches the digests recorded in run.json. */
function editedFiles(meta: RunMeta, texts: Record<(typeof FIXTURE_FILES)[number], string>): string[] {
  const now = fileDigests(meta, texts)
  return FIXTURE_FILES.filter((f) => meta.digests![f] !== now[f])
}

export function readFixtures(folder: string): FixtureSet {
  const texts = readTexts(folder)
  const meta = parseChecked(folder, 'run.json', texts['run.json']) as RunMeta
  return { meta, http: parseChecked(folder, 'http.json', texts['http.json']) as HttpExchange[], host: parseChecked(folder, 'host.json', texts['host.json']) as HostExchange[] }
}

/**
 * A recording that is whole and unedited, or the problem (one line naming the file and field).
 * `digest`, when given, must equal the recording's digest (a replay report's).
 */
export function checkRecording(folder: string, digest?: string): { set: FixtureSet; digest: string } | { problem: string } {
  let set: FixtureSet
  let texts: Record<(typeof FIXTURE_FILES)[number], string>
  try {
    texts = readTexts(folder)
    set = readFixtures(folder)
  } catch (error) {
    if (!(error instanceof FixtureError)) throw error
    return { problem: error.message }
  }
  if (!set.meta.digests) return { problem: `${join(folder, 'run.json')}: field digests is missing: recorded by an older armproof, its files cannot be checked; re-record it` }
  const edited = editedFiles(set.meta, texts)
  if (edited.length) return { problem: `fixtures edited since recording: ${edited.map((f) => join(folder, f)).join(', ')} no longer match the digests in run.json; re-record instead of editing` }
  const whole = recordingDigest(set.meta.digests)
  if (digest !== undefined && digest !== whole) return { problem: `fixtures edited since recording: ${folder} is not the recording this report replayed (digest differs)` }
  return { set, digest: whole }
}

/** For writeback: null when the recording at `folder` is the unedited one with this digest, else the problem. */
export function verifyRecording(folder: string, digest: string): string | null {
  const r = checkRecording(folder, digest)
  return 'problem' in r ? r.problem : null
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
 * Before a replay contacts nothing: the fixtures exist, are whole and unedited, agree with
 * themselves (top-level svc/knob/value/previous equal `target.*`), and were recorded for the svc,
 * knob and value of the command line (and its --previous, when given). Returns the problems (exit 2).
 */
export function replayCheck(folder: string, want: { svc: string; knob: string; value: string | null; previous?: string | null }): { problems: string[]; meta?: RunMeta; digest?: string } {
  const checked = checkRecording(folder)
  if ('problem' in checked) {
    const missing = checked.problem.startsWith('no recording at')
    return { problems: [`--fixtures: ${checked.problem}${missing ? '; record one with --mode record' : ''}`] }
  }
  const meta = checked.set.meta
  const problems: string[] = []
  const show = (v: string | null) => (v === null ? 'the default' : v)
  const run = join(folder, 'run.json')
  for (const f of ['svc', 'knob', 'value', 'previous'] as const) {
    if (meta[f] !== meta.target[f]) problems.push(`--fixtures: ${run} disagrees with itself: ${f} is ${JSON.stringify(meta[f])} but target.${f} is ${JSON.stringify(meta.target[f])}; re-record instead of editing`)
  }
  if (problems.length) return { problems }
  if (meta.svc !== want.svc) problems.push(`--fixtures: ${folder} was recorded for --svc ${meta.svc}, not ${want.svc}`)
  if (meta.knob !== want.knob) problems.push(`--fixtures: ${folder} was recorded for --knob ${meta.knob}, not ${want.knob}`)
  if (meta.value !== want.value) problems.push(`--fixtures: ${folder} was recorded for --value ${show(meta.value)}, not ${show(want.value)}`)
  if (want.previous !== undefined && want.previous !== null && meta.previous !== want.previous) problems.push(`--fixtures: ${folder} was recorded for --previous ${show(meta.previous)}, not ${want.previous}`)
  return { problems, meta, digest: checked.digest }
}

/**
 * The target a run goes with: as given for live and record; for replay, the command line's
 * target with the recorded run's other options, after checking the recording fits (else the
 * problems, exit 2).
 */
export function targetForRun(target: Target): { target: Target } | { problems: ConfigProblem[] } {
  if (target.mode !== 'replay') return { target }
  const check = replayCheck(target.fixtures, target)
  if (check.problems.length > 0) return { problems: check.problems.map((message) => ({ option: '--fixtures', message })) }
  return { target: replayTarget(target, check.meta!) }
}
