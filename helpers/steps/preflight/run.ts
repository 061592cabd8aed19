// The checks of one preflight, in their order, each timed and scrubbed of the run's key: the
// running build's --help (once, for the flag and the value), what the engine runs now, the unit's
// drop-ins, the deploy checkout, the env file against the engine's environment.
import { scrub } from '../../seams/redact.ts'
import type { HostClient } from '../../seams/host.ts'
import { checkDropins } from '../dropins/judge.ts'
import type { RunContext } from '../context.ts'
import { judgeCheckout } from './checkout.ts'
import { judgeEnvFile, type EnvFileAsk } from './env-file.ts'
import { judgeListed, judgeValue, readHelp, type AskedValue, type HelpRead } from './flag.ts'
import { judgePrevious } from './previous.ts'
import { preflightTitle, type PreflightJudgement, type PreflightStepId, type PreflightStepResult } from './registry.ts'
import { canonicalValue, valueProblem } from '../../config/knobs.ts'
import { formatDuration } from '../../config/duration.ts'

export interface PreflightAsk {
  value: AskedValue
  /** The deploy checkout, absolute. */
  checkout: string
  /** The env file, absolute and as given; null: not asked. */
  envFile: { shown: string; path: string } | null
  /** Where git runs: this machine. */
  local: HostClient
  /** Each check's result as it is judged (the terminal prints it at once). */
  onStep?: (result: PreflightStepResult) => void
  /** A plain line during a long wait: what the check waits for, at most one per `PROGRESS_EVERY_MS`. */
  progress?: (line: string) => void
  /** How often a silent check is said waiting; default `PROGRESS_EVERY_MS` (a test shortens it). */
  progressEveryMs?: number
}

/** A check that says nothing for this long is shown waiting (a log gets a line at least every 15 s). */
export const PROGRESS_EVERY_MS = 10_000

export async function runPreflight(base: RunContext, ask: PreflightAsk): Promise<PreflightStepResult[]> {
  const results: PreflightStepResult[] = []
  const every = ask.progressEveryMs ?? PROGRESS_EVERY_MS
  let said = 0
  const say = (line: string): void => {
    if (!ask.progress || Date.now() - said < every) return
    said = Date.now()
    ask.progress(scrub(line, base.target.apiKey) as string)
  }
  // What a judge says while it waits (the ledger waiting for loading to end), at most one line per period.
  const ctx: RunContext = { ...base, progress: say }
  const step = async (id: PreflightStepId, judge: () => Promise<PreflightJudgement> | PreflightJudgement): Promise<void> => {
    const started = performance.now()
    said = Date.now()
    // Real time, as verify's heartbeat: a check silent for a period is shown waiting, with how long.
    const heartbeat = setInterval(() => say(`${id}: waiting · ${formatDuration(performance.now() - started)}`), every)
    heartbeat.unref()
    let judged: PreflightJudgement
    try {
      judged = await judge()
    } finally {
      clearInterval(heartbeat)
    }
    const result = scrub(
      { id, title: preflightTitle(id), ...judged, durationMs: Math.round(performance.now() - started) },
      ctx.target.apiKey,
    ) as PreflightStepResult
    results.push(result)
    ask.onStep?.(result)
  }
  let help: HelpRead | undefined
  await step('preflight.help', async () => {
    help = await readHelp(ctx)
    return judgeListed(ctx, help)
  })
  const helpRead = help!
  await step('preflight.value', () => judgeValue(ctx, helpRead, ask.value))
  const given = helpRead.outcome.gives ?? {}
  const read: { engine?: Awaited<ReturnType<typeof judgePrevious>>['engine'] } = {}
  await step('preflight.previous', async () => {
    const r = await judgePrevious(ctx, given, helpRead.listed)
    read.engine = r.engine
    return r.judgement
  })
  await step('preflight.dropins', async () => {
    const { intendedSkip, ...j } = await checkDropins(ctx)
    return { ...j, ...(intendedSkip ? { intendedSkip } : {}), evidence: { ...j.evidence } }
  })
  await step('preflight.checkout', () => judgeCheckout(ask.local, ask.checkout, ctx.target.hostTimeoutMs))
  const fallback = ctx.spec.default ?? given.buildDefault ?? null
  const raw = ask.value.raw
  const value = raw === null ? fallback : valueProblem(ctx.spec, raw) === undefined ? canonicalValue(ctx.spec, raw) : null
  const envAsk: EnvFileAsk | null = ask.envFile ? { ...ask.envFile, value, fallback } : null
  await step('preflight.env-file', () => judgeEnvFile(ctx, envAsk, read.engine))
  return results
}
