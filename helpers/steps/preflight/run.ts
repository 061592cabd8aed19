// The checks of one preflight, in their order, each timed and scrubbed of the run's key: the
// running build's --help (once, for the flag and the value), what the engine runs now, the unit's
// drop-ins, the deploy checkout, the env file against the engine's environment.
import { scrub } from '../../seams/redact.ts'
import type { HostClient } from '../../seams/host.ts'
import { checkDropins } from '../dropins/judge.ts'
import type { RunContext } from '../context.ts'
import { judgeCheckout } from './checkout.ts'
import { judgeEnvFile, type EnvFileAsk } from './env-file.ts'
import { judgeListed, judgeValue, readHelp, type AskedValue } from './flag.ts'
import { judgePrevious } from './previous.ts'
import { preflightTitle, type PreflightJudgement, type PreflightStepId, type PreflightStepResult } from './registry.ts'
import { canonicalValue, valueProblem } from '../../config/knobs.ts'

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
}

export async function runPreflight(ctx: RunContext, ask: PreflightAsk): Promise<PreflightStepResult[]> {
  const results: PreflightStepResult[] = []
  const step = async (id: PreflightStepId, judge: () => Promise<PreflightJudgement> | PreflightJudgement): Promise<void> => {
    const started = performance.now()
    const judged = await judge()
    const result = scrub(
      { id, title: preflightTitle(id), ...judged, durationMs: Math.round(performance.now() - started) },
      ctx.target.apiKey,
    ) as PreflightStepResult
    results.push(result)
    ask.onStep?.(result)
  }
  const help = await readHelp(ctx)
  await step('preflight.help', () => judgeListed(ctx, help))
  await step('preflight.value', () => judgeValue(ctx, help, ask.value))
  const given = help.outcome.gives ?? {}
  const read: { engine?: Awaited<ReturnType<typeof judgePrevious>>['engine'] } = {}
  await step('preflight.previous', async () => {
    const r = await judgePrevious(ctx, given, help.listed)
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
