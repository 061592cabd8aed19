// Step `ledger`: the boot ledger's resolved value equals the expected one. radiance prints one
// resolved line per flag (`[auto]` and what bound the value are reported, a value clamped by a
// budget is red); another engine prints its resolved values where its profile says (vLLM's
// non-default args and engine config line, SGLang's ServerArgs and scheduler lines, llama.cpp's
// startup lines): every one of them is read and must agree (../resolved/agree.ts), and the step
// passes on the strongest, saying which.
import { redactSecretFlags } from '../argv/parse.ts'
import { canonicalValue } from '../../config/knobs.ts'
import { findResolved, unresolvedMentions } from './parse.ts'
import { defaultValue, expectedValue, type InputsOf, type Outcome, type RunContext } from '../context.ts'
import type { Judgement } from '../verdict.ts'
import { hostTrouble, runTemplate, tail, whereHost } from '../_host.ts'
import { runtimeHint } from '../_runtime.ts'
import type { HostResult } from '../../seams/host.ts'
import { isLogSource } from '../../profiles/convert.ts'
import { bootBeforePid, readLogSources } from '../resolved/log-sources.ts'
import { agree } from '../resolved/agree.ts'
import { untilLoaded } from '../health/loaded.ts'
import { formatDuration } from '../../config/duration.ts'
import { pollWait } from '../../seams/poll.ts'
import { sourceEvidence } from '../resolved/evidence.ts'

/** The line count a ledger command asks `podman logs` (or `tail -n`) for, if it asks for a tail. */
export function tailAsked(template: string): number | undefined {
  const m = /(?:--tail[= ]|\btail\s+-n\s*|\btail\s+-)(\d+)\b/.exec(template)
  const n = m ? Number(m[1]) : undefined
  return n !== undefined && n > 0 ? n : undefined
}

/** The ledger's lines, and how many a tail-limited ledger command asked for. */
function lineCount(r: HostResult): number {
  return r.stdout.split('\n').length - (r.stdout.endsWith('\n') ? 1 : 0)
}

/** A ledger command that exited non-zero: what it said, and where to look (inconclusive: nothing was read). */
const ledgerExited = (r: HostResult): string =>
  `the ledger command exited ${r.exitCode}: ${redactSecretFlags(tail(r.stdout)) || '(no output)'}`
const LEDGER_EXITED_NEXT = 'run the ledger command on the host by hand; set --ledger-cmd if logs live elsewhere'

/** No resolved line in a log read only from its tail that filled the tail: the latest boot is older than that (inconclusive). */
function tailTooShort(ctx: RunContext, r: HostResult, what: string, expected: string, where: string): Judgement<'ledger'> | undefined {
  const count = lineCount(r)
  const asked = tailAsked(ctx.target.ledgerCmd)
  if (r.exitCode !== 0 || asked === undefined || count < asked) return undefined
  return {
    verdict: 'inconclusive',
    expected,
    observed: `no ${what} in the last ${asked} lines of the log (the command reads only the tail): the latest boot's ledger is older than that`,
    where,
    next: `read the whole latest boot: set --ledger-cmd to a command that starts at the deploy, e.g. "podman logs --since <deploy time> {svc}" (or a larger --tail), then rerun`,
    evidence: { lines: count, tailLines: asked, tail: tail(r.stdout, 10, 2000) },
  }
}

/** How long a log may lag behind the engine that wrote it, and how often it is read again meanwhile. */
const LOG_LAG_MS = 5000
const LOG_LAG_POLL_MS = 250
/** At most this many reads in all, whatever a clock says. */
const LOG_LAG_READS = 1 + LOG_LAG_MS / LOG_LAG_POLL_MS

/**
 * The ledger as it stands once loading has ended: an engine prints what it resolved when loading
 * ends (llama.cpp's n_slots line, a budget known after the memory profile), and verify runs the
 * moment the deploy returns, while it still loads. /health is polled until 200 (the health
 * budget; the health step counts this wait), then the log is read and judged. Still loading past
 * the budget: a read that does not hold is inconclusive, never red. The evidence says when it read.
 */
export async function checkLedger(ctx: RunContext, inputs: InputsOf<'ledger'>): Promise<Outcome<'ledger'>> {
  if (ctx.spec.proof.noResolvedLine !== undefined && (ctx.spec.proof.meter || ctx.spec.proof.stats)) return notPrinted(ctx)
  // What step argv already waited (to tie the endpoint once loaded) counts against the same budget: at least one ask.
  const before = inputs.loadWait?.waitedMs ?? 0
  const loaded = await untilLoaded(ctx, Math.max(1, ctx.target.healthBudgetMs - before))
  const waitedMs = before + loaded.waitedMs
  const gives = { loadWait: { state: loaded.state, waitedMs, ...(loaded.state !== 'loaded' ? { last: loaded.last } : {}) } }
  // A log lags behind the engine (its logger's thread, journald, a runtime's log driver): a read that
  // does not hold is made again for a few seconds before it is judged.
  let judged = await readAndJudge(ctx, inputs)
  let reads = 1
  const graceEnd = ctx.clock.now() + LOG_LAG_MS
  while (judged.verdict === 'failed' && loaded.state !== 'other' && ctx.clock.now() < graceEnd && reads < LOG_LAG_READS) {
    await pollWait(ctx.clock, graceEnd, LOG_LAG_POLL_MS)
    judged = await readAndJudge(ctx, inputs)
    reads++
  }
  const readAt = { health: loaded.state, waitedMs, reads }
  if (loaded.state === 'loading' && judged.verdict === 'failed') {
    return {
      ...judged,
      verdict: 'inconclusive',
      observed: `the engine had not finished loading within the health budget (${formatDuration(waitedMs)}; /health: ${loaded.last}), and its log does not yet hold what it resolves when loading ends: ${judged.observed}`,
      next: `the engine is still loading: watch the ledger (${ctx.target.ledgerCmd.replaceAll('{svc}', ctx.target.svc)}) until loading ends, then run again, with a larger --health-budget if the model is big`,
      evidence: { ...judged.evidence, readAt },
      gives,
    }
  }
  const when =
    loaded.state === 'loaded' && waitedMs > 0 ? ` (read once /health answered 200, after ${formatDuration(waitedMs)} of loading)` : ''
  return { ...judged, observed: `${judged.observed}${when}`, evidence: { ...judged.evidence, readAt }, gives }
}

/** A knob whose engine prints no resolved value (its catalog entry says why): argv and its meter prove it. */
function notPrinted(ctx: RunContext): Judgement<'ledger'> {
  const none = ctx.spec.proof.noResolvedLine!
  return {
    verdict: 'skipped',
    intendedSkip: true,
    expected: `${ctx.spec.flag} resolved in the boot log`,
    observed: `not read: ${none}`,
    where: `the ${ctx.engine.name} profile's ${ctx.spec.env} entry`,
    evidence: { noResolvedLine: none },
  }
}

async function readAndJudge(ctx: RunContext, inputs: InputsOf<'ledger'>): Promise<Judgement<'ledger'>> {
  const sources = ctx.engine.resolved.filter((s) => isLogSource(s) && ctx.spec.proof.sources?.[s.id] !== undefined)
  if (sources.length === 1 && sources[0]!.shape === 'flag-line') return checkFlagLine(ctx, inputs)
  return checkSources(
    ctx,
    inputs,
    sources.map((source) => ({ source, key: ctx.spec.proof.sources![source.id]! })),
  )
}

/** The engine's resolved values where its profile says they are printed, each source read and all of them agreeing. */
async function checkSources(
  ctx: RunContext,
  inputs: InputsOf<'ledger'>,
  sources: Parameters<typeof readLogSources>[2],
): Promise<Judgement<'ledger'>> {
  const { flag } = ctx.spec
  const value = expectedValue(ctx, inputs.buildDefault)
  const labels = sources.map((s) => s.source.label).join(', ')
  const expected =
    value === undefined
      ? `${flag} resolved in ${labels || 'the boot log'}`
      : `${flag} resolved to ${value} in ${labels || 'the boot log'}, each agreeing`
  if (sources.length === 0) {
    return {
      verdict: 'inconclusive',
      expected,
      observed: `the ${ctx.engine.name} profile names no line where the engine prints what it resolved for ${flag}`,
      where: `the ${ctx.engine.name} profile`,
      next: `say where it is printed: give the knob's catalog entry sources: (a source id of the profile's resolved: list → the knob's key there), then run again`,
      evidence: {},
    }
  }
  const r = await runTemplate(ctx, ctx.target.ledgerCmd)
  const trouble = hostTrouble(ctx, r, expected)
  if (trouble) return trouble
  const where = whereHost(ctx, r.command)
  // A boot stamped before the pid argv read started is another process's: never judged as this one's.
  const engineProcess = inputs.engineProcess
  const earlier = engineProcess ? bootBeforePid(r.stdout, ctx.engine, engineProcess.pid, engineProcess.startTimeSeconds) : undefined
  if (earlier) {
    return {
      verdict: 'inconclusive',
      expected,
      observed: earlier,
      where,
      next: `read the log of the process that serves the endpoint: check that --ledger-cmd reads this engine's current log (${ctx.target.ledgerCmd.replaceAll('{svc}', ctx.target.svc)}), and that the deploy restarted it; then run again`,
      evidence: { tail: redactSecretFlags(tail(r.stdout, 10, 2000)) },
    }
  }
  const readings = readLogSources(r.stdout, ctx.engine, sources)
  if (value === undefined) {
    return {
      verdict: 'inconclusive',
      expected,
      observed: readings.map((x) => `${x.source.label}: ${x.raw ?? x.state}`).join('; '),
      where,
      next: 'the expected value is the build default, which --help did not print: pass --value',
      evidence: { sources: sourceEvidence(readings) },
    }
  }
  const asked = canonicalValue(ctx.spec, value)
  const a = agree(ctx.spec, asked, value === defaultValue(ctx, inputs.buildDefault), readings)
  const evidence = {
    sources: sourceEvidence(readings, a.rows),
    ...(a.strongest
      ? { line: a.strongest.reading.text ?? '', value: a.strongest.value ?? asked, strongest: a.strongest.reading.source.id }
      : {}),
  }
  if (a.verdict === 'silent') {
    const short = tailTooShort(ctx, r, `line of ${labels}`, expected, where)
    if (short) return short
    const hint = runtimeHint(ctx, r.stdout)
    return {
      verdict: r.exitCode === 0 ? 'failed' : 'inconclusive',
      expected,
      observed:
        r.exitCode === 0
          ? `none of ${labels} in the latest boot of ${lineCount(r)} ledger lines prints ${flag}${a.observed ? ` (${a.observed})` : ''}`
          : ledgerExited(r),
      where,
      next:
        hint ??
        (r.exitCode === 0
          ? `the engine did not print what it resolved for ${flag} where the ${ctx.engine.name} profile says it does: check that the container was restarted by the deploy and that this is a ${ctx.engine.name} build (its log format: --engine)`
          : LEDGER_EXITED_NEXT),
      evidence: { ...evidence, exitCode: r.exitCode, tail: redactSecretFlags(tail(r.stdout, 10, 2000)) },
    }
  }
  return { verdict: a.verdict, expected, observed: a.observed, where, ...(a.next ? { next: a.next } : {}), evidence }
}

/** radiance's ledger: one resolved line per flag, `--flag VALUE [auto] … bound by X`. */
async function checkFlagLine(ctx: RunContext, inputs: InputsOf<'ledger'>): Promise<Judgement<'ledger'>> {
  const { flag } = ctx.spec
  const value = expectedValue(ctx, inputs.buildDefault)
  const expected =
    value === undefined ? `a resolved ${flag} line` : value === 'auto' ? `${flag} resolved [auto]` : `${flag} resolved to ${value}`
  const r = await runTemplate(ctx, ctx.target.ledgerCmd)
  const trouble = hostTrouble(ctx, r, expected)
  if (trouble) return trouble
  const where = whereHost(ctx, r.command)
  const lines = findResolved(r.stdout, flag)
  const last = lines.at(-1)
  if (!last && r.exitCode === 0) {
    const count = lineCount(r)
    const short = tailTooShort(ctx, r, `line resolving ${flag}`, expected, where)
    if (short) return short
    const echoes = unresolvedMentions(r.stdout, flag).map(redactSecretFlags)
    if (echoes.length > 0 && !runtimeHint(ctx, r.stdout)) {
      return {
        verdict: 'failed',
        expected,
        observed: `no resolved ${flag} line in ${count} ledger lines; only lines that name the flag without resolving it, e.g. ${JSON.stringify(echoes.at(-1)!.slice(0, 300))}`,
        where,
        next: `a command line (the serve script's echo) shows the value asked for, not the one the engine resolved: the engine printed no ledger line "${flag} <value> …" at boot; check that this build prints its resolved config, and that the container was restarted by the deploy`,
        evidence: { exitCode: r.exitCode, mentions: echoes, tail: redactSecretFlags(tail(r.stdout, 10, 2000)) },
      }
    }
  }
  if (!last) {
    const hint = runtimeHint(ctx, r.stdout)
    return {
      verdict: r.exitCode === 0 ? 'failed' : 'inconclusive',
      expected,
      observed: r.exitCode === 0 ? `no line resolving ${flag} in ${r.stdout.split('\n').length} ledger lines` : ledgerExited(r),
      where,
      next:
        hint ??
        (r.exitCode === 0
          ? `the engine did not print what it resolved for ${flag}: check that this build prints its config at boot, and that the container was restarted by the deploy`
          : LEDGER_EXITED_NEXT),
      evidence: { exitCode: r.exitCode, tail: redactSecretFlags(tail(r.stdout, 10, 2000)) },
    }
  }
  const evidence = { line: last.text, value: last.value, auto: last.auto, boundBy: last.boundBy, bootsInLog: lines.length }
  const shown = `${last.text}${lines.length > 1 ? ` (latest of ${lines.length} boots in the log)` : ''}`
  if (value === undefined) {
    return {
      verdict: 'inconclusive',
      expected,
      observed: shown,
      where,
      next: 'the expected value is the build default, which --help did not print: pass --value',
      evidence,
    }
  }
  const resolved = canonicalValue(ctx.spec, last.value)
  const wantAuto = value === 'auto'
  const held = wantAuto ? last.auto : resolved === value && !last.auto
  if (held) return { verdict: 'passed', expected, observed: shown, where, evidence }
  let next = `the engine resolved ${flag} to ${last.auto ? `${resolved} [auto]` : resolved}, not ${value}: check the service env, redeploy --service ${ctx.target.svc}, and compare with argv`
  if (last.boundBy)
    next = `${flag} ${value} was clamped to ${resolved} by ${last.boundBy}: lower the value or raise that budget, then redeploy --service ${ctx.target.svc}`
  else if (!wantAuto && last.auto)
    next = `the engine chose ${flag} itself ([auto]): the explicit ${value} did not reach it; check argv and the service env`
  return { verdict: 'failed', expected, observed: shown, where, next, evidence }
}
