// Check `preflight.env-file`: the change the deploy ships is exactly one variable. The service's env
// file in the checkout (read as ./env-parse.ts reads it) against the environment the engine runs
// with now (its /proc/<pid>/environ, where step argv reads the env twin: on the host, or in its
// container or pod) must differ in the knob's variable (or its env twin) alone, set to the new
// value; every other difference is named, with both values unless the variable looks secret
// (helpers/seams/redact.ts `secretVariable`): then only that it differs. Nothing read here is
// written anywhere but this check's result, and that holds no secret's value.
import { readFileSync, statSync } from 'node:fs'
import { canonicalValue, valueProblem } from '../../config/knobs.ts'
import { quote, showValue } from '../../config/shell.ts'
import { engineQuery } from '../../engine/query.ts'
import { inContainer, procPlace, procRead } from '../../engine/runtime.ts'
import { REDACTED, secretVariable } from '../../seams/redact.ts'
import { hostTrouble } from '../_host.ts'
import type { RunContext } from '../context.ts'
import { fromOdHex, parseEnvFile, parseEnviron } from './env-parse.ts'
import type { EngineRead } from './previous.ts'
import type { PreflightJudgement } from './registry.ts'

export interface EnvFileAsk {
  /** As the operator gave it, relative to the checkout. */
  shown: string
  /** Its absolute path (checked inside the checkout before anything ran). */
  path: string
  /** The value the deploy arms (null: unknown). */
  value: string | null
  /** The knob's default (the catalog's, else the build's --help's; null: none known). */
  fallback: string | null
}

/** One difference between the file and the running environment. */
export interface EnvDifference {
  name: string
  /** The engine's value now (null: not set); REDACTED for a secret. */
  running: string | null
  /** The file's (null: not set); REDACTED for a secret. */
  file: string | null
  line?: number
}

/** An env file larger than this is not one (1 MiB). */
const MAX_ENV_FILE = 1024 * 1024

/** How many differences `observed` names one by one. */
const SHOWN = 12

/** The engine's whole environment, as hex (no value is cut or misread at a newline). */
function environScript(pid: string): string {
  return `od -An -v -tx1 < /proc/${quote(pid)}/environ || exit 3`
}

const showVar = (v: string | null): string => (v === null ? 'unset' : v === REDACTED ? v : showValue(v, 60))

export function differenceText(d: EnvDifference): string {
  if (d.running === REDACTED || d.file === REDACTED)
    return `${d.name} (secret: values not shown) ${d.running === null ? "is not set in the engine's environment" : 'differs'}`
  return `${d.name}: the engine runs ${showVar(d.running)}, the file sets ${showVar(d.file)}`
}

/** The variables besides the knob's, all equal to the engine's, in words. */
const sameText = (n: number): string =>
  n === 0 ? 'it sets no other variable' : `the other ${n} variable${n === 1 ? '' : 's'} it sets equal the engine's`

export async function judgeEnvFile(ctx: RunContext, ask: EnvFileAsk | null, engine: EngineRead | undefined): Promise<PreflightJudgement> {
  const { spec } = ctx
  const knobVars = [spec.env, ...(spec.envTwin ? [spec.envTwin] : [])]
  const expected = ask
    ? `${ask.shown} differs from the engine's running environment in ${knobVars.join(' (or ')}${knobVars.length > 1 ? ')' : ''} alone, set to ${ask.value ?? 'the new value'}`
    : "the service's env file differs from the engine's running environment in the knob's variable alone"
  if (!ask)
    return {
      verdict: 'skipped',
      intendedSkip: true,
      expected,
      observed: 'not checked: no --env-file (PREFLIGHT_ENV_FILE) was given',
      where: 'the deploy checkout',
      next: `give --env-file <the service's env file, relative to --checkout> to check that the deploy changes ${spec.env} alone`,
      evidence: {},
    }
  const fileWhere = `local: ${ask.path}`
  let text: string
  try {
    const st = statSync(ask.path)
    if (!st.isFile() || st.size > MAX_ENV_FILE)
      return {
        verdict: 'failed',
        expected,
        observed: `${ask.shown} is ${st.isFile() ? `${st.size} bytes, more than an env file's ${MAX_ENV_FILE}` : 'not a regular file'}`,
        where: fileWhere,
        next: `do not deploy: give --env-file the env file deploy.sh ships for ${ctx.target.svc}`,
        evidence: {},
      }
    text = readFileSync(ask.path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return {
      verdict: 'failed',
      expected,
      observed: `${ask.shown} cannot be read in the checkout (${code === 'ENOENT' ? 'no such file' : (code ?? 'error')})`,
      where: fileWhere,
      next: `do not deploy: the checkout holds no ${ask.shown}; give --env-file the env file deploy.sh ships for ${ctx.target.svc}`,
      evidence: { code: code ?? null },
    }
  }
  const parsed = parseEnvFile(text)
  if (parsed.problems.length > 0)
    return {
      verdict: 'inconclusive',
      expected,
      observed: `${parsed.problems.length} line${parsed.problems.length === 1 ? '' : 's'} of ${ask.shown} outside what systemd, podman, docker and dotenv all read alike: ${parsed.problems
        .slice(0, 5)
        .map((p) => `line ${p.line}: ${p.why}`)
        .join('; ')}${parsed.problems.length > 5 ? '; …' : ''}`,
      where: fileWhere,
      next: `write each of those lines as NAME=value (no quotes, no export, no spaces around "=", no "#" or backslash in the value): what the engine would see cannot be told otherwise`,
      evidence: { lines: parsed.problems },
    }
  if (!engine)
    return {
      verdict: 'inconclusive',
      expected,
      observed: 'not judged: no engine process was read (step preflight.previous), so its running environment is unknown',
      where: fileWhere,
      next: 'fix what preflight.previous says first',
      evidence: {},
    }
  const q = inContainer(engineQuery(ctx.target), engine.container)
  const pid = engine.process.pid
  const where = `${procPlace(ctx.host.where, q)}: tr '\\0' '\\n' < /proc/${pid}/environ`
  const r = await procRead(ctx.host, q, environScript(pid))
  if (r.failure) return { ...hostTrouble(ctx, r, expected)!, where }
  const bytes = r.exitCode === 0 ? fromOdHex(r.stdout) : undefined
  if (bytes === undefined)
    return {
      verdict: 'inconclusive',
      expected,
      observed: `could not read /proc/${pid}/environ (exit ${r.exitCode}): ${r.stderr.trim().split('\n').at(-1) ?? ''}`,
      where,
      next:
        r.exitCode === 127
          ? `od (POSIX, in coreutils and busybox) is missing where the engine runs: install it there, or check ${spec.env} in ${ctx.target.svc}'s environment by hand`
          : `give armproof the rights to read /proc/${pid}/environ (--sudo always, or run as the engine's user)`,
      evidence: { exitCode: r.exitCode },
    }
  const running = parseEnviron(bytes)
  const secret = (name: string, ...values: Array<string | undefined>) => values.some((v) => secretVariable(name, v, ctx.target.apiKey))
  const shownPair = (name: string, run: string | undefined, file: string | undefined): Pick<EnvDifference, 'running' | 'file'> => {
    const hide = secret(name, run, file)
    const show = (v: string | undefined) => (v === undefined ? null : hide ? REDACTED : v)
    return { running: show(run), file: show(file) }
  }
  const others: EnvDifference[] = []
  for (const [name, entry] of parsed.vars) {
    if (knobVars.includes(name)) continue
    const now = running.get(name)
    if (now !== entry.value) others.push({ name, ...shownPair(name, now, entry.value), line: entry.line })
  }
  // The knob's own variables (its env, and its engine's env twin): each one the file sets means the
  // new value; none set is right only where the new value is the default ("unset means default").
  const knobWrong: string[] = []
  const knobSeen: string[] = []
  const nowText = (name: string): string => {
    const now = running.get(name)
    return now === undefined ? 'unset now' : `${secret(name, now) ? REDACTED : showValue(now, 60)} now`
  }
  for (const name of knobVars) {
    const entry = parsed.vars.get(name)
    if (!entry) continue
    const v = entry.value
    const fits = v === '' || valueProblem(spec, v) === undefined
    const meant = v === '' ? ask.fallback : canonicalValue(spec, v)
    if (!fits || meant !== ask.value)
      knobWrong.push(`${name}=${showValue(v, 60)} in ${ask.shown} (line ${entry.line}), not ${ask.value ?? 'the new value'}`)
    else knobSeen.push(`${name}=${showValue(v, 60)} (${nowText(name)})`)
  }
  if (knobSeen.length === 0 && knobWrong.length === 0 && ask.value !== null && ask.value !== ask.fallback) {
    const which = knobVars.length > 1 ? `neither ${knobVars.join(' nor ')} is set` : `${spec.env} is not set`
    const now = knobVars.length > 1 ? knobVars.map((n) => `${n} ${nowText(n)}`).join(', ') : nowText(spec.env)
    knobWrong.push(`${which} in ${ask.shown} (${now}): the deploy would not arm ${ask.value}`)
  }
  const notInFile = [...running.keys()].filter((n) => !parsed.vars.has(n)).sort()
  const evidence = {
    file: ask.shown,
    set: [...parsed.vars.keys()],
    differences: others,
    knob: knobSeen,
    knobProblems: knobWrong,
    duplicates: parsed.duplicates,
    notInFile,
  }
  const dup = parsed.duplicates.length ? `; set twice (the last wins): ${parsed.duplicates.join(', ')}` : ''
  const unjudged = `${notInFile.length} variable${notInFile.length === 1 ? '' : 's'} of the engine's environment the file does not set (the image's or the runtime's: not judged)`
  if (others.length > 0 || knobWrong.length > 0) {
    const named = others.slice(0, SHOWN).map(differenceText)
    const parts = [
      ...knobWrong,
      ...(others.length
        ? [
            `${others.length} other variable${others.length === 1 ? '' : 's'} would change: ${named.join('; ')}${others.length > SHOWN ? `; … (${others.length - SHOWN} more)` : ''}`,
          ]
        : []),
    ]
    return {
      verdict: 'failed',
      expected,
      observed: `${parts.join('; ')}${dup}`,
      where,
      next:
        others.length > 0
          ? `do not deploy: one change per deploy (the arm could not be credited to ${ctx.target.knob}): ship ${others.map((d) => d.name).join(', ')} in a deploy of its own, or set ${others.length === 1 ? 'it' : 'them'} in ${ask.shown} back to what the engine runs`
          : `do not deploy: set ${spec.env}=${ask.value ?? '<the new value>'} in ${ask.shown}, commit it to main, and run preflight again`,
      evidence,
    }
  }
  return {
    verdict: 'passed',
    expected,
    observed: `${ask.shown}: ${knobSeen.length ? knobSeen.join(', ') : `${spec.env} unset (the default, ${ask.fallback})`}; ${sameText(parsed.vars.size - knobSeen.length)}; ${unjudged}${dup}`,
    where,
    evidence,
  }
}
