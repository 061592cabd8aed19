// The schema of a recording's three files (./recording-files.ts): what a recording must hold to be
// read back. Every failure a seam can record and every option a recording keeps is listed here,
// or this file does not compile.
import type { HostFailure } from './host.ts'
import type { HttpFailure } from './http.ts'
import { FIXTURE_FORMAT, type FIXTURE_FILES, type RecordedTarget } from './recording-files.ts'
import { KNOB_NAME_RE, PROFILE_DOC } from '../profiles/doc.ts'
import { SVC_NAME } from '../config/shell.ts'
import { RUNTIMES } from '../config/runtime.ts'
import { SKIPPABLE_IDS } from '../config/skips.ts'
import {
  array,
  boolean,
  literal,
  nullable,
  number,
  object,
  optional,
  record,
  string,
  tagged,
  unknownValue,
  type Infer,
  type Schema,
} from '../schema/schema.ts'
import { STEP_IDS } from '../config/step-ids.ts'

const SVC = SVC_NAME

/**
 * Every failure the seams can record, so a recording of any run reads back: a list that misses one
 * (the host seam's `output-cut` once) makes armproof refuse its own recording. The checks below
 * fail to compile when a seam's failure type gains a value these lists lack.
 */
const HTTP_FAILURES = [
  'refused',
  'timeout',
  'reset',
  'truncated',
  'dns',
  'too-large',
  'tls',
  'not-tls',
  'redirect',
  'other',
] as const satisfies readonly HttpFailure[]
const HOST_FAILURES = [
  'timeout',
  'unreachable',
  'host-key',
  'auth',
  'sudo-password',
  'spawn',
  'output-cut',
] as const satisfies readonly HostFailure[]
type Covers<All, Listed> = [Exclude<All, Listed>] extends [never] ? true : ['not listed', Exclude<All, Listed>]
const _httpFailures: Covers<HttpFailure, (typeof HTTP_FAILURES)[number]> = true
// A cancelled read is never a step's (only reads no step took are cancelled): no recording holds one.
const _hostFailures: Covers<Exclude<HostFailure, 'cancelled'>, (typeof HOST_FAILURES)[number]> = true
void _httpFailures
void _hostFailures
const HOST_SPEC = tagged('kind', {
  local: object({ kind: literal('local') }),
  ssh: object({ kind: literal('ssh'), host: string(), user: optional(string()), port: optional(number({ integer: true, min: 1 })) }),
  // Recorded since --runtime kubernetes: the pod, by Kubernetes' own name rules.
  pod: object({
    kind: literal('pod'),
    pod: string({ re: /^[a-z0-9][-a-z0-9.]{0,252}$/, says: 'a pod name (DNS-1123)' }),
    namespace: optional(string({ re: /^[a-z0-9][-a-z0-9]{0,62}$/, says: 'a namespace (DNS-1123 label)' })),
  }),
})
const DIGEST = string({ re: /^[0-9a-f]{64}$/, says: 'a sha256 hex digest' })

const KNOB = string({ re: KNOB_NAME_RE, says: 'a knob name in capitals' })

/** The recorded options (`RecordedTarget`), as a schema. */
const TARGET_SCHEMA = object({
  svc: string(SVC),
  knob: KNOB,
  value: nullable(string()),
  previous: nullable(string()),
  baseUrl: nullable(string()),
  model: nullable(string()),
  host: HOST_SPEC,
  process: string(),
  deployUser: nullable(string()),
  sudo: optional(literal('auto', 'always', 'never')),
  ledgerCmd: string(),
  helpCmd: string(),
  // null since a runtime may have no unit (a pod; a docker container or a bare process without --unit).
  unit: nullable(string()),
  dropinCheck: boolean(),
  healthBudgetMs: number({ min: 0 }),
  meterWindowMs: number({ min: 0 }),
  probeTimeoutMs: number({ min: 0 }),
  hostTimeoutMs: number({ min: 0 }),
  // Recorded since the meter could be read through Prometheus; absent in older recordings.
  prometheusUrl: optional(nullable(string())),
  prometheusMatch: optional(nullable(string())),
  // Recorded since the engine could be found by --pid-cmd; absent in older recordings.
  pidCmd: optional(nullable(string())),
  // Recorded since --runtime, --kube-opts and --skip; absent in older recordings (podman, none, none).
  runtime: optional(literal(...RUNTIMES)),
  kubeOpts: optional(array(string())),
  skip: optional(array(literal(...SKIPPABLE_IDS))),
  // Recorded since engines have profiles (--engine, --catalog): the profile as written, a catalog's knobs
  // in it; absent in older recordings (their knob is radiance's).
  engine: optional(PROFILE_DOC),
  // Recorded since the one-flag law: its baseline as read before contact (the step checks the record
  // again: helpers/config/arm-record.ts asArmRecord); absent in older recordings (the step is skipped).
  baseline: optional(
    nullable(
      object({
        from: string(),
        finishedAt: nullable(string()),
        record: nullable(unknownValue()),
        why: optional(string()),
        untrusted: optional(literal(true)),
      }),
    ),
  ),
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
  steps: optional(
    record(literal('passed', 'failed', 'inconclusive', 'skipped'), {
      re: new RegExp(`^(${STEP_IDS.map((x) => x.replace('.', '\\.')).join('|')})$`),
      says: 'a step id',
    }),
  ),
  digests: optional(object({ 'run.json': DIGEST, 'http.json': DIGEST, 'host.json': DIGEST })),
}) as Schema<unknown>

const HEADERS = record(string())
const HTTP_SCHEMA = array(
  object({
    seq: number({ integer: true, min: 0 }),
    at: number({ min: 0 }),
    method: string({ re: /^[A-Z]+$/, says: 'an HTTP method' }),
    path: string({ re: /^\//, says: 'a path starting with /' }),
    request: object({
      headers: HEADERS,
      sha256: optional(DIGEST),
      bytes: optional(number({ integer: true, min: 0 })),
      body: optional(unknownValue()),
    }),
    response: optional(
      object({
        status: number({ integer: true, min: 100 }),
        headers: HEADERS,
        body: string(),
        redirects: optional(array(string())),
        url: optional(string()),
      }),
    ),
    error: optional(object({ failure: literal(...HTTP_FAILURES), message: string() })),
    durationMs: number({ min: 0 }),
  }),
) as Schema<unknown>

const HOST_SCHEMA = array(
  object({
    seq: number({ integer: true, min: 0 }),
    at: number({ min: 0 }),
    command: string(),
    asDeployUser: boolean(),
    stdout: string(),
    stderr: string(),
    exitCode: nullable(number({ integer: true })),
    failure: optional(literal(...HOST_FAILURES)),
    durationMs: number({ min: 0 }),
  }),
) as Schema<unknown>

/** Each file's schema. */
export const RECORDING_SCHEMAS: Readonly<Record<(typeof FIXTURE_FILES)[number], Schema<unknown>>> = {
  'run.json': RUN_SCHEMA,
  'http.json': HTTP_SCHEMA,
  'host.json': HOST_SCHEMA,
}
