// What every step of one run sees: the target, the knob's catalog entry and the seams; and the
// typed outputs one step may hand to a later one (declared per step in ./registry.ts).
import type { Clock } from '../seams/clock.ts'
import type { Target } from '../config/load.ts'
import type { HostClient } from '../seams/host.ts'
import type { HttpClient } from '../seams/http.ts'
import type { Choices } from '../seams/choices.ts'
import type { ModelCard } from '../seams/models.ts'
import type { KnobSpec } from '../config/knobs.ts'
import { targetProfile } from '../profiles/target.ts'
import type { Engine } from '../profiles/types.ts'
import type { STEPS, StepId } from './registry.ts'
import type { Judgement } from './verdict.ts'
import type { MeterBaseline } from './meter/reading.ts'
import type { KnownFlag } from '../argparse/rules.ts'
import type { FoundBy } from '../engine/find.ts'
import type { FirstContactProblem } from './first-contact/answers.ts'
import type { EndpointTie } from '../engine/tie.ts'
import type { ConfigArgs } from '../argparse/resolve.ts'
import type { PodContainerChoice } from '../engine/runtime.ts'

/** The engine process step `argv` read (helpers/engine/find.ts found it). */
export interface EngineProcess {
  pid: string
  /** Its command line carried the flag as expected. */
  argvHeld: boolean
  /** prometheus_client's process_start_time_seconds for it: /proc/<pid>/stat field 22 / CLK_TCK + btime of /proc/stat; null when unread. */
  startTimeSeconds: number | null
  /** Seconds (1 / CLK_TCK). */
  startTimeResolution: number
  /** How it was found: holding the base URL's listening socket, as the container's process, by --pid-cmd, or by pidof --process. */
  foundBy: FoundBy
  /** The pid holds the listening socket of the URL's port AND the URL's host is the host inspected (loopback with --host local, or the ssh host's own name/address): the endpoint is tied to it. */
  listenerTied: boolean
  /** What ties the endpoint to this pid, step argv's precondition (./argv/tie.ts); absent: nothing did. */
  tie?: EndpointTie
}

export type { EndpointTie } from '../engine/tie.ts'

/**
 * What proved the run is about another engine than the one argv read, and the step judged with
 * it. `inconclusive`: the endpoint is another engine (a replica, a load balancer in front of
 * several): neither arm is proven and the engine is not at fault; `failed`: the evidence shows the
 * engine itself wrong (the pid argv read is gone: a restart). Decided where the proof is read
 * (./meter/bind.ts for a page's start time).
 */
export interface WrongEngine {
  step: StepId
  verdict: 'failed' | 'inconclusive'
  expected: string
  observed: string
  where: string
  next: string
}

/** The model the probes serve, learned once per run (--model, else /v1/models) and shared by them. */
export interface ServedModel {
  /** Asks /v1/models the first time (a probe calls this only once /health came up). */
  get(): Promise<string>
  /** The id, if a probe asked for it and got one; undefined when never asked or refused. */
  settled(): Promise<string | undefined>
  /** The cards /v1/models lists (asked once, shared with `get`); undefined when it cannot be read. */
  cards(): Promise<ModelCard[] | undefined>
  /** What /v1/models (asked once, shared) shows the operator got wrong, by first contact's rule; undefined: nothing. */
  mistake(): Promise<FirstContactProblem | undefined>
  /**
   * Settles this probe's reply id (null: no reply) and resolves, once every probe has settled its
   * own, to the probes whose reply carried the same id. A probe settles exactly once, replied or not.
   */
  replyId(probe: StepId, id: string | null): Promise<StepId[]>
}

/**
 * What a step may hand to the steps after it. The runner (helpers/steps/runbook.ts) keeps these;
 * a judge receives only the ones its registry entry declares (`inputs`), as `InputsOf<id>`.
 */
export interface StepOutputs {
  /** The build's default for the knob, as its --help prints it (null: none printed). Step `help`. */
  buildDefault: string | null
  /** The choices the build's --help lists for an enum knob's flag (null: none listed). Step `help`. */
  buildChoices: string[] | null
  /** /health answered 200 at least once. Step `health`. */
  healthy: boolean
  /** Every flag the build's --help lists, with whether it takes a value (null: none could be read). Step `help`. */
  buildFlags: KnownFlag[] | null
  /** The one engine process step `argv` read, how it was found, its start time, and whether its command line held. */
  engineProcess: EngineProcess
  /**
   * The run is proven to be about another engine than the one argv read (e.g. the endpoint's
   * process start time is not that pid's): the runner ends the run, the steps after it are not
   * judged (./judges.ts), and step `step` is judged with this proof and its verdict.
   */
  wrongEngine: WrongEngine
  /**
   * A step found an operator's mistake (./mistake.ts): the runner ends the run, the steps after it
   * are not judged (./judges.ts), and the run is `error`.
   */
  mistake: { id: StepId; mistake: string; where: string }
  /** The meter's starting point, taken before the probes sent their traffic (the probes' section, before them): the /metrics page, or when Prometheus' window starts. */
  baseline: MeterBaseline
  /** The served model id, shared by the three probes and read by the meter. */
  model: ServedModel
  /** How long step `ledger` waited for /health to answer 200 (loading to end) before it read the log, and how that ended: the health step's budget counts it. */
  loadWait: LoadWait
  /**
   * The command line of the engine process step `argv` read, as its /proc/<pid>/cmdline holds it
   * (secrets and all: never put in evidence as is), the flags of the `--config FILE` it names, and
   * the pod's container its reads ran in. Step `one-flag` reads it whole.
   */
  engineCommand: EngineCommand
}

/** The engine's command line as step argv read it (`StepOutputs.engineCommand`). */
export interface EngineCommand {
  pid: string
  argv: string[]
  config?: ConfigArgs
  container?: PodContainerChoice
}

/** Step ledger's wait for loading to end (../steps/health/loaded.ts). */
export interface LoadWait {
  state: 'loaded' | 'loading' | 'other'
  waitedMs: number
  /** What /health last answered while it waited (`503 (loading)`), when it did not end loaded. */
  last?: string
}

export interface RunContext {
  target: Target
  /** How to read the engine: its profile (--engine). */
  engine: Engine
  spec: KnobSpec
  http: HttpClient
  host: HostClient
  clock: Clock
  choices: Choices
  /** Shows a progress line during long waits (terminal only; quiet in CI). */
  progress(message: string): void
}

export function createContext(parts: Omit<RunContext, 'spec' | 'engine' | 'progress'> & { progress?: (m: string) => void }): RunContext {
  const { engine, spec } = targetProfile(parts.target)
  return { ...parts, engine, spec, progress: parts.progress ?? (() => {}) }
}

/** The value the knob should have now: the operator's, else the catalog's default, else the build's (`buildDefault`, from --help). */
export function expectedValue(ctx: RunContext, buildDefault?: string | null): string | undefined {
  return ctx.target.value ?? defaultValue(ctx, buildDefault)
}

/** The knob's default: the catalog's, else the build's (`buildDefault`, from --help). */
export function defaultValue(ctx: RunContext, buildDefault?: string | null): string | undefined {
  return ctx.spec.default ?? buildDefault ?? undefined
}

export function endpointUrl(ctx: RunContext, path: string): string {
  return `${ctx.target.baseUrl ?? 'http://replay.invalid'}${path}`
}

/** Headers for /v1/* calls: the API key goes only there (vLLM leaves /health and /metrics open). */
export function v1Headers(ctx: RunContext): Record<string, string> {
  return {
    'content-type': 'application/json',
    ...(ctx.target.apiKey ? { authorization: `Bearer ${ctx.target.apiKey}` } : {}),
  }
}

/** The outputs of earlier steps that step `Id` declares in the registry, and nothing else. */
export type InputsOf<Id extends StepId> = Readonly<
  Partial<Pick<StepOutputs, Extract<(typeof STEPS)[number], { id: Id }>['inputs'][number]>>
>

/** What a judge returns: its judgement, and the outputs it hands to later steps. */
export type Outcome<Id extends StepId = StepId> = Judgement<Id> & { gives?: Partial<StepOutputs> }
