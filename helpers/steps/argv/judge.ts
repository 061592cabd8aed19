// Step `argv`: the engine is the process serving the base URL (helpers/engine/find.ts), and its
// /proc/<pid>/cmdline, read as its parser reads it (helpers/argparse, with the engine profile's
// rules: `_` for `-`, unique prefixes, the last occurrence wins, `--config FILE` beneath the
// command line, `--no-x` for a switch, an env twin in /proc/<pid>/environ beneath it all),
// resolves the flag to the value, or lacks it where the knob is at its default and the flag is
// passed only when non-default ("unset means default").
import { argvExcerpt } from './parse.ts'
import { readConfig } from './config-read.ts'
import { canonicalValue } from '../../config/knobs.ts'
import { flagNames, type KnownFlag } from '../../argparse/rules.ts'
import { readEnvTwin, twinOccurrence } from './env-twin.ts'
import { findConfig, resolveFlag, type ConfigArgs, type Resolution } from '../../argparse/resolve.ts'
import { findEngine, type EngineFound } from '../../engine/find.ts'
import { describeOthers } from '../../engine/describe.ts'
import { settleTie, tieAtLookup } from './tie.ts'
import { engineQuery } from '../../engine/query.ts'
import { lookupLabel } from '../../engine/recheck.ts'
import { inContainer, procPlace } from '../../engine/runtime.ts'
import { defaultValue, expectedValue, type InputsOf, type Outcome, type RunContext, type StepOutputs } from '../context.ts'
import type { Judgement } from '../verdict.ts'
import type { ArgvEvidence } from './evidence.ts'
import { hostTrouble } from '../_host.ts'

/** Hands on the engine process it read (`engineProcess`), with what ties the endpoint to it: the meter ties its pages to it and checks it still serves after its watch. */
export async function checkArgv(ctx: RunContext, inputs: InputsOf<'argv'>): Promise<Outcome<'argv'>> {
  const gives: Pick<Partial<StepOutputs>, 'engineProcess' | 'loadWait' | 'engineCommand'> = {}
  const read: { lookup?: EngineFound } = {}
  const judgement = await judgeArgv(ctx, inputs, gives, read)
  return { ...(await tiedToEndpoint(ctx, judgement, read.lookup, gives)), gives }
}

/**
 * The endpoint tied to the pid whose command line was read (./tie.ts), whatever the knob's proof:
 * a green argv needs the tie, and a red one where another process holds the port is about a pid
 * the endpoint may not be (inconclusive unless the tie holds). A red about the only engine there,
 * with no one else on its port, stays red even where the tie cannot be made (still loading).
 */
async function tiedToEndpoint(
  ctx: RunContext,
  j: Judgement<'argv'>,
  lookup: EngineFound | undefined,
  gives: Pick<Partial<StepOutputs>, 'engineProcess' | 'loadWait'>,
): Promise<Judgement<'argv'>> {
  const engine = gives.engineProcess
  if (!lookup || !engine || (j.verdict !== 'passed' && j.verdict !== 'failed')) return j
  const q = engineQuery(ctx.target)
  const atOnce = tieAtLookup(lookup, q)
  if (atOnce) {
    engine.tie = atOnce
    return { ...j, evidence: { ...j.evidence, tie: atOnce } }
  }
  const settled = await settleTie(ctx, lookup, q, (w) => (gives.loadWait = w))
  // A red of the only engine, nobody else on its port, stays red untied (its later steps then say what they could not read).
  if (j.verdict === 'failed' && lookup.servedByOthers.length === 0 && !('tie' in settled)) return j
  if ('tie' in settled) {
    engine.tie = settled.tie
    if (settled.tie.by === 'listener') Object.assign(engine, { listenerTied: true, foundBy: 'listener' })
    return {
      ...j,
      observed: `${j.observed}; the endpoint is tied to it: ${settled.tie.said}`,
      evidence: { ...j.evidence, tie: settled.tie },
    }
  }
  const u = settled.untied
  return {
    ...j,
    verdict: 'inconclusive',
    observed: `${j.observed}; but nothing ties the endpoint to pid ${lookup.pid}: ${u.observed}${!u.other && u.holders.length > 0 ? ': the probes and the ledger would be about another process than the one whose command line was read' : ''}`,
    next: u.next,
    evidence: { ...j.evidence, tie: null, servedBy: u.holders },
  }
}

/** How the engine was found, and the other engines of its name, for `observed`. */
function foundText(e: EngineFound): string {
  return `pid ${e.pid} ${e.how.replace(/;.*$/, '')}${e.others.length ? `; other engines named here: ${describeOthers(e.others)}` : ''}`
}

/** The occurrences as the parser reads them: each one, and which one wins. */
function occurrencesText(r: Resolution): string {
  if (r.occurrences.length === 0) return ''
  const shown = r.occurrences.map(
    (o) =>
      `${o.written}${o.source === 'config' ? ' (config file)' : o.source === 'env' ? " (the engine's environment)" : ''}${o.spelling === 'prefix' ? ' (a unique prefix)' : o.spelling === 'underscore' ? ' (_ read as -)' : ''}`,
  )
  return r.occurrences.length > 1 ? `${shown.join(', ')}; the parser keeps ${r.occurrences.find((o) => o.won)!.written}` : shown[0]!
}

async function judgeArgv(
  ctx: RunContext,
  inputs: InputsOf<'argv'>,
  gives: Pick<Partial<StepOutputs>, 'engineProcess' | 'engineCommand'>,
  read: { lookup?: EngineFound },
): Promise<Judgement<'argv'>> {
  const { flag, passedOnlyWhenNonDefault } = ctx.spec
  const rules = ctx.engine.parser
  const names = flagNames(ctx.spec, rules)
  const value = expectedValue(ctx, inputs.buildDefault)
  const fallback = defaultValue(ctx, inputs.buildDefault)
  const atDefault = value !== undefined && value === fallback
  const mustBeAbsent = atDefault && passedOnlyWhenNonDefault
  // A switch is its flag (true) or its negation (false); any other flag is followed by its value.
  const asWritten = (v: string): string => (names.switch ? (v === 'true' ? flag : (names.switch.negated ?? `no ${flag}`)) : `${flag} ${v}`)
  const expected =
    value === undefined ? `${flag} as the build default` : mustBeAbsent ? `no ${flag} (unset means default ${value})` : asWritten(value)
  const q = engineQuery(ctx.target)

  const lookup = await findEngine(ctx.host, q)
  if (lookup.kind === 'trouble') {
    // Where is the lookup said short (the survey's script is many lines; its output is in the evidence).
    const trouble = hostTrouble(ctx, lookup.result, expected)!
    return { ...trouble, where: lookupLabel(ctx.host.where, q) }
  }
  const seen = { others: lookup.others, portHolders: lookup.portHolders }
  if (lookup.kind !== 'found') {
    return {
      verdict: lookup.kind === 'missing' ? 'failed' : 'inconclusive',
      expected: `the one engine process serving ${ctx.target.baseUrl ?? 'the endpoint'}`,
      observed: lookup.observed,
      where: lookupLabel(ctx.host.where, q),
      next: lookup.next,
      evidence: { pids: lookup.pids, ...seen },
    }
  }
  const { pid, argv } = lookup
  read.lookup = lookup
  const where = `${procPlace(ctx.host.where, inContainer(q, lookup.container))}${q.pod ? ' ' : ': '}tr '\\0' ' ' < /proc/${pid}/cmdline`
  const found = {
    pid,
    foundBy: lookup.foundBy,
    how: lookup.how,
    ...seen,
    startTimeSeconds: lookup.startTimeSeconds,
    startTimeResolution: lookup.startTimeResolution,
    listenerTied: lookup.listenerTied,
    ...(lookup.container ? { container: lookup.container } : {}),
  }
  if (argv.length === 0) {
    return {
      verdict: 'inconclusive',
      expected,
      observed: `could not read /proc/${pid}/cmdline of the engine (${foundText(lookup)})`,
      where,
      next: 'the process may have just exited (restart loop?) or /proc is mounted with hidepid: check the service and retry, with sudo rights to read /proc if needed',
      evidence: found,
    }
  }
  // The meter ties its pages to this very process, and checks it still serves once it has watched the counter.
  const engineProcess = {
    pid,
    argvHeld: false,
    startTimeSeconds: lookup.startTimeSeconds,
    startTimeResolution: lookup.startTimeResolution,
    foundBy: lookup.foundBy,
    listenerTied: lookup.listenerTied,
  }
  gives.engineProcess = engineProcess
  // Step one-flag reads the whole command line (and the config file's flags, below).
  const command: StepOutputs['engineCommand'] = { pid, argv, ...(lookup.container ? { container: lookup.container } : {}) }
  gives.engineCommand = command

  const ref = findConfig(argv, rules)
  let config: ConfigArgs | undefined
  if (ref && !('problem' in ref)) {
    const read = await readConfig(ctx, pid, argv, ref, lookup.container)
    if ('problem' in read) {
      if (read.result?.failure) return hostTrouble(ctx, read.result, expected)!
      return {
        verdict: 'inconclusive',
        expected,
        observed: `the engine was started with ${rules.configFlag} ${ref.path}: ${read.problem}`,
        where: read.result ? `${ctx.host.where}: ${read.result.command}` : where,
        next: read.next,
        evidence: { ...found, argv: argvExcerpt(argv, 2000), configFile: ref.path },
      }
    }
    config = read.ok
    command.config = config
  }
  // The build's flags decide what a prefix names; the knob's own flag (and its spellings) takes a value even where --help lacks it, a switch none.
  const listed = inputs.buildFlags ?? null
  const own: KnownFlag[] = [...names.names, ...(names.switch?.negated ? [names.switch.negated] : [])].map((name) => ({
    name,
    takesValue: names.switch === undefined,
  }))
  const known = listed ? [...listed, ...own.filter((o) => !listed.some((k) => k.name === o.name))] : listed
  const r = resolveFlag(argv, names, rules, known, config)
  // An env twin sets the flag where the command line does not (llama.cpp reads it first; the command line wins).
  const twin = rules.envTwins ? ctx.spec.envTwin : undefined
  if (twin) {
    const read = await readEnvTwin(ctx, pid, twin, lookup.container)
    if ('problem' in read) {
      if (read.result.failure) return hostTrouble(ctx, read.result, expected)!
      return {
        verdict: 'inconclusive',
        expected,
        observed: `${flag} may come from ${twin} in the engine's environment, which could not be read: ${read.problem}`,
        where: `${ctx.host.where}: ${read.result.command}`,
        next: `give armproof the rights to read /proc/${pid}/environ (--sudo always), or check ${twin} in ${ctx.target.svc}'s env by hand`,
        evidence: { ...found, argv: argvExcerpt(argv, 2000) },
      }
    }
    if (read.value !== undefined) {
      const o = twinOccurrence(twin, read.value, names.switch !== undefined, r.value !== undefined)
      r.occurrences.unshift(o)
      if (r.value === undefined) r.value = o.value
    }
  }
  const evidence: ArgvEvidence = {
    ...found,
    pid: Number(pid),
    argv: argvExcerpt(argv, 2000),
    flag: r.occurrences.map((o) => o.written),
    occurrences: r.occurrences,
    configFile: ref && !('problem' in ref) ? ref.path : null,
    refused: r.refused,
  }
  const excerpt = argvExcerpt(argv)
  const written = occurrencesText(r)
  const proc = `(${foundText(lookup)})`
  if (r.problems.length > 0 || r.unsure.length > 0) {
    return {
      verdict: 'inconclusive',
      expected,
      observed: r.problems.length
        ? `the engine's parser would refuse this command line: ${r.problems.join('; ')} ${proc}`
        : `cannot tell whether ${r.unsure.join(', ')} names ${flag}: the build's flag list is unknown (step help did not read it) ${proc}`,
      where,
      next: r.problems.length
        ? 'the running engine cannot have been started with this command line as its parser reads it: check that --help-cmd runs the same build as the engine, and the serve script'
        : "make step help read the build's --help (check --help-cmd), so a unique prefix can be told from another flag",
      evidence,
    }
  }
  if (value === undefined) {
    return {
      verdict: 'inconclusive',
      expected,
      observed: written || `no ${flag}`,
      where,
      next: 'the expected value is the build default, which --help did not print: pass --value',
      evidence,
    }
  }
  if (r.value === undefined) {
    if (atDefault) {
      engineProcess.argvHeld = true
      return {
        verdict: 'passed',
        expected,
        observed: `no ${flag} in argv${config ? ` nor in ${config.file}` : ''}: unset means default ${value} ${proc}`,
        where,
        evidence,
      }
    }
    return {
      verdict: 'failed',
      expected,
      observed: `no ${flag} in argv${config ? ` nor in ${config.file}` : ''}: ${excerpt}`,
      where,
      next: `the flag did not reach the engine: check ${ctx.spec.env}=${value} in ${ctx.target.svc}'s env, that the serve script passes ${flag}${passedOnlyWhenNonDefault ? ` (it adds it only when the value is not ${fallback})` : ''}${twin ? ` (or sets ${twin})` : ''}, and redeploy --service ${ctx.target.svc}`,
      evidence,
    }
  }
  const resolved = canonicalValue(ctx.spec, r.value)
  if (mustBeAbsent) {
    return {
      verdict: 'failed',
      expected,
      observed: `argv carries ${written}`,
      where,
      next: `the serve script passes ${flag} only when it differs from ${value}, yet argv has it: the running engine was not started by the serve script you deployed, or ${ctx.spec.env} is not ${value}; redeploy --service ${ctx.target.svc}`,
      evidence,
    }
  }
  if (resolved !== value) {
    return {
      verdict: 'failed',
      expected,
      observed: `argv carries ${written}: the engine runs with ${asWritten(resolved)}`,
      where,
      next: `the engine runs with ${asWritten(resolved)}, not ${value}: check ${ctx.spec.env} in ${ctx.target.svc}'s env${r.occurrences.length > 1 ? ` and every place the serve script or ${config?.file ?? 'a config file'} sets ${flag}` : ''}, and redeploy --service ${ctx.target.svc}`,
      evidence,
    }
  }
  engineProcess.argvHeld = true
  return { verdict: 'passed', expected, observed: `${written} ${proc}`, where, evidence }
}
