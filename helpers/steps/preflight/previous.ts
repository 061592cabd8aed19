// Check `preflight.previous`: the engine runs --previous now, read as verify's `argv` and `ledger`
// steps read it (the same judges, with --previous as the value they expect): the truth the
// rollback line relies on. Hands on the engine process argv read, for the env-file check.
import { checkArgv } from '../argv/judge.ts'
import { checkLedger } from '../ledger/judge.ts'
import type { ArgvEvidence } from '../argv/evidence.ts'
import type { EngineProcess, RunContext, StepOutputs } from '../context.ts'
import type { PreflightJudgement } from './registry.ts'

/** The engine process argv read, and the container of a pod its /proc was read in. */
export interface EngineRead {
  process: EngineProcess
  container: ArgvEvidence['container']
}

export interface PreviousResult {
  judgement: PreflightJudgement
  engine: EngineRead | undefined
}

/**
 * `listed`: the running build's --help defines the flag. Where it does not, what the engine runs is
 * not judged (no value of a flag the build lacks can be the engine's): argv is read only to find the
 * engine process, for the env-file check.
 */
export async function judgePrevious(
  ctx: RunContext,
  help: Partial<Pick<StepOutputs, 'buildDefault' | 'buildFlags'>>,
  listed = true,
): Promise<PreviousResult> {
  const at = { ...ctx, target: { ...ctx.target, value: ctx.target.previous } }
  const fallback = ctx.spec.default ?? help.buildDefault ?? null
  const previous = ctx.target.previous ?? fallback
  const shown = previous === null ? 'the default' : `${previous}${ctx.target.previous === null ? ' (the default)' : ''}`
  const expected = `the engine runs --previous ${shown} now (the rollback line restores it)`
  const argv = await checkArgv(at, {
    ...(help.buildDefault !== undefined ? { buildDefault: help.buildDefault } : {}),
    ...(help.buildFlags !== undefined ? { buildFlags: help.buildFlags } : {}),
  })
  const { gives = {}, ...a } = argv
  const engine = gives.engineProcess ? { process: gives.engineProcess, container: a.evidence.container } : undefined
  if (!listed)
    return {
      judgement: {
        verdict: 'skipped',
        expected,
        observed: `not judged: the running build's --help does not define ${ctx.spec.flag} (preflight.help)`,
        where: a.where,
        next: 'fix what preflight.help says first',
        evidence: { argv: a.evidence },
      },
      engine,
    }
  const differs = (observed: string) =>
    `do not deploy yet: the engine does not run --previous ${shown} (${observed}); give --previous what it runs (the rollback line restores --previous), or find out why it runs another value (a drop-in, an earlier deploy) before arming`
  if (a.verdict !== 'passed')
    return {
      judgement: {
        verdict: a.verdict,
        expected,
        observed: `argv: ${a.observed}`,
        where: a.where,
        next: a.verdict === 'failed' && engine ? differs(a.observed) : (a.next ?? ''),
        evidence: { argv: a.evidence },
      },
      engine,
    }
  const ledger = await checkLedger(at, {
    ...(help.buildDefault !== undefined ? { buildDefault: help.buildDefault } : {}),
    ...(gives.loadWait ? { loadWait: gives.loadWait } : {}),
    ...(gives.engineProcess ? { engineProcess: gives.engineProcess } : {}),
  })
  const { gives: _l, ...l } = ledger
  const evidence = { argv: a.evidence, ledger: l.evidence }
  // A knob whose engine prints no resolved value (llama.cpp's --cache-prompt): argv alone says it.
  if (l.verdict === 'skipped' && l.intendedSkip)
    return {
      judgement: { verdict: 'passed', expected, observed: `argv: ${a.observed}; ledger: ${l.observed}`, where: a.where, evidence },
      engine,
    }
  if (l.verdict !== 'passed')
    return {
      judgement: {
        verdict: l.verdict,
        expected,
        observed: `argv: ${a.observed}; ledger: ${l.observed}`,
        where: l.where,
        next: l.verdict === 'failed' ? differs(`its ledger: ${l.observed}`) : (l.next ?? ''),
        evidence,
      },
      engine,
    }
  return {
    judgement: { verdict: 'passed', expected, observed: `argv: ${a.observed}; ledger: ${l.observed}`, where: a.where, evidence },
    engine,
  }
}
