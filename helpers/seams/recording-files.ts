// A recorded run on disk: human-reviewable JSON with stable key order, one file per seam.
//   <folder>/run.json   metadata (svc, knob, expected, model, recorded at, tool version, choices, clock)
//   <folder>/http.json  every HTTP exchange in order
//   <folder>/host.json  every host command in order (the script only: no host, user or identity options)
//   run.json also holds `digests`: the sha256 of each file (run.json's own over its content without
//   `digests`, ./digest.ts), written by the recorder and checked before every replay (./recording.ts):
//   an edited recording is refused. The files' schema is ./recording-schema.ts.
// This file: what the files hold, as types, and the options a recording keeps of a run.
import type { Target } from '../config/load.ts'
import type { HostFailure } from './host.ts'
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
  const {
    apiKey: _apiKey,
    mode: _mode,
    fixtures: _fixtures,
    report: _report,
    junit: _junit,
    sshOpts: _sshOpts,
    caFile: _caFile,
    summary: _summary,
    force: _force,
    ...rest
  } = target
  return rest
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
