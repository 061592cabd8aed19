// Each step id of the registry (./registry.ts) bound to its judge; TypeScript refuses a step
// without one, and a judge that reads an input its entry does not declare. The runner keeps what
// the steps hand on (`given`) and gives each judge only its declared inputs. The suite
// (suites/arm.test.ts, through ./runbook.ts) and the tests' in-process runner both judge through
// `judgeStep`, so a step's result is the same whoever runs it.
import { scrub } from '../seams/redact.ts'
import { checkArgv } from './argv/judge.ts'
import type { InputsOf, Outcome, RunContext, StepOutputs, WrongEngine } from './context.ts'
import { checkDropins } from './dropins/judge.ts'
import { checkHealth } from './health/judge.ts'
import { checkHelp } from './help/judge.ts'
import { checkLedger } from './ledger/judge.ts'
import { checkMeter, takeBaseline } from './meter/judge.ts'
import { markPromBaseline } from './meter/from-prometheus.ts'
import { wrongEngineAtBaseline } from './meter/two-engines.ts'
import { checkExact, checkTools, checkVision } from './probes/send.ts'
import { servedModel } from './probes/served.ts'
import { checkOneFlag } from './one-flag/judge.ts'
import { stepSpec, type SectionId, type StepId } from './registry.ts'
import { skippedOnPurpose } from './skipped.ts'
import { afterMistake } from './mistake.ts'
import type { JudgementFields, StepResult } from './verdict.ts'

export type Judge<Id extends StepId> = (ctx: RunContext, inputs: InputsOf<Id>) => Promise<Outcome<Id>>

export const JUDGES: { readonly [Id in StepId]: Judge<Id> } = {
  dropins: checkDropins,
  help: checkHelp,
  argv: checkArgv,
  ledger: checkLedger,
  health: checkHealth,
  'probe.exact': checkExact,
  'probe.tools': checkTools,
  'probe.vision': checkVision,
  // From /metrics, or with --prometheus-url from what Prometheus holds: one ladder (./meter/ladder.ts).
  meter: checkMeter,
  'one-flag': checkOneFlag,
}

/**
 * Work a section does once before its steps, and what it hands on: before the probes' traffic,
 * the meter's baseline scrape (and, where it is another engine's page, the proof that ends the
 * run), and the served model they share (asked by the first probe). Keyed by the section's id
 * (./registry.ts `SECTIONS`), never its title: a reworded title keeps the baseline.
 */
export const BEFORE_GROUP: {
  readonly [Id in SectionId]?: (ctx: RunContext, given?: Readonly<Partial<StepOutputs>>) => Promise<Partial<StepOutputs>>
} = {
  // --prometheus-url: no /metrics baseline; the watch window starts here (./meter/from-prometheus.ts).
  // No baseline where /health never answered 200: no traffic will flow, and the meter is not watched.
  // A baseline page another engine served proves the run is about two engines: it ends here (./meter/two-engines.ts).
  behaviour: async (ctx, given = {}) => {
    const baseline =
      given.healthy === false
        ? {}
        : ctx.target.prometheusUrl && ctx.spec.proof.meter
          ? await markPromBaseline(ctx)
          : await takeBaseline(ctx)
    const wrongEngine = await wrongEngineAtBaseline(ctx, baseline.baseline, given.engineProcess)
    return { ...baseline, ...(wrongEngine ? { wrongEngine } : {}), model: servedModel(ctx) }
  },
}

/** One run as the runner holds it: the steps' context, and what earlier steps handed on. */
export interface ProofRun {
  readonly ctx: RunContext
  readonly given: Partial<StepOutputs>
}

export function proofRun(ctx: RunContext): ProofRun {
  return { ctx, given: {} }
}

/** The declared inputs of one step, taken from what the earlier steps handed on. */
export function inputsFor<Id extends StepId>(id: Id, given: Partial<StepOutputs>): InputsOf<Id> {
  return Object.fromEntries(
    stepSpec(id)
      .inputs.filter((k) => given[k] !== undefined)
      .map((k) => [k, given[k]]),
  ) as InputsOf<Id>
}

/** Runs a section's `BEFORE_GROUP` work, keeping what it hands on; none once the run is proven to be about another engine, or a step found an operator's mistake. */
export async function beforeGroup(run: ProofRun, section: SectionId): Promise<void> {
  const before = BEFORE_GROUP[section]
  if (before && !run.given.wrongEngine && !run.given.mistake) Object.assign(run.given, await before(run.ctx, run.given))
}

/**
 * Once a step (or a section's work before its steps) proved the run to be about another engine
 * than the one argv read, nothing after it is worth waiting for (a health budget, a meter
 * window): the proof's own step takes the proof's verdict (inconclusive where the endpoint is
 * another engine, failed where the engine itself is wrong), every other later step is not judged.
 */
function afterWrongEngine(id: StepId, proof: WrongEngine): JudgementFields {
  if (proof.step === id)
    return { verdict: proof.verdict, expected: proof.expected, observed: proof.observed, where: proof.where, next: proof.next }
  return {
    verdict: 'skipped',
    expected: `${id} judged against the engine step argv read`,
    observed: `not judged: the run is proven to be about another engine than the one step argv read (${proof.observed})`,
    where: proof.where,
    next: proof.next,
  }
}

/**
 * Judges one step: its declared inputs in, what it hands on kept, its result timed and the API
 * key scrubbed (here, once, for every way a step ends), under the runbook title. `ctx` may be the
 * run's with another progress line.
 */
export async function judgeStep<Id extends StepId>(run: ProofRun, id: Id, title: string, ctx: RunContext = run.ctx): Promise<StepResult> {
  const started = performance.now()
  const { handed, ...judged } = await judgement(run, id, ctx)
  return scrub({ id, title, ...judged, durationMs: Math.round(performance.now() - started), ...handed }, ctx.target.apiKey) as StepResult
}

/**
 * How one step ends: after a proof of another engine, skipped on purpose, after an operator's
 * mistake an earlier step found (not judged: the run is `error`, ./mistake.ts), or by its judge
 * (with what the report keeps of what it hands on).
 */
async function judgement<Id extends StepId>(
  run: ProofRun,
  id: Id,
  ctx: RunContext,
): Promise<Omit<StepResult, 'id' | 'title' | 'durationMs' | 'buildDefault'> & { handed?: { buildDefault: string | null } }> {
  const proof = run.given.wrongEngine
  if (proof) return { ...afterWrongEngine(id, proof), evidence: {} }
  // --skip: the judge is not called (the served model's reply ids were settled for it, ./probes/served.ts).
  const skipped = skippedOnPurpose(ctx, id)
  if (skipped) return { ...skipped, evidence: {} }
  const found = run.given.mistake
  if (found) return { ...afterMistake(id, found), evidence: {} }
  const judge: Judge<Id> = JUDGES[id]
  const { gives, ...judged } = await judge(ctx, inputsFor(id, run.given))
  if (gives) Object.assign(run.given, gives)
  // The first mistake found ends the run: what is after it is not judged.
  if (judged.mistake !== undefined) run.given.mistake ??= { id, mistake: judged.mistake, where: judged.where }
  return { ...judged, ...(gives?.buildDefault !== undefined ? { handed: { buildDefault: gives.buildDefault } } : {}) }
}

/** The served model, once the probes asked for it (for the recording's metadata). */
export async function modelOf(run: ProofRun): Promise<string | null> {
  return run.ctx.target.model ?? (await run.given.model?.settled()) ?? null
}
