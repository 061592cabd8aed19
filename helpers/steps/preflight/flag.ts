// Checks `preflight.help` and `preflight.value`: verify's `help` step read once (the running
// build's --help, through the runtime), split into what it says of the flag (listed or not) and
// what the value must be: the knob's type and the catalog's bounds, the choices --help prints, and
// another value than --previous.
import { checkHelp } from '../help/judge.ts'
import { canonicalValue, valueProblem } from '../../config/knobs.ts'
import { showValue } from '../../config/shell.ts'
import type { KnobSpec } from '../../config/knobs.ts'
import type { Outcome, RunContext } from '../context.ts'
import type { PreflightJudgement } from './registry.ts'

/** The value as the operator gave it (null: none, the default), and where it came from (`--value`, `VERIFY_VALUE`). */
export interface AskedValue {
  raw: string | null
  from: string
}

/** What the help read hands on: the build's default, the flags for argv, and the flag's entry. */
export interface HelpRead {
  outcome: Outcome<'help'>
  listed: boolean
}

/** The flag's --help, read as verify's help step reads it (with the target's value unset: the value is judged here). */
export async function readHelp(ctx: RunContext): Promise<HelpRead> {
  const outcome = await checkHelp({ ...ctx, target: { ...ctx.target, value: null } })
  return { outcome, listed: outcome.evidence.entry !== undefined }
}

/** `preflight.help`: the flag is listed; else the help step's own verdict, next and evidence. */
export function judgeListed(ctx: RunContext, read: HelpRead): PreflightJudgement {
  const { outcome } = read
  const { gives: _gives, ...j } = outcome
  const expected = `${ctx.spec.flag} is listed by the running engine's --help`
  if (!read.listed) {
    return {
      ...j,
      expected,
      next: j.verdict === 'failed' ? `do not deploy: ${j.next ?? ''}` : (j.next ?? ''),
      evidence: { ...j.evidence },
    }
  }
  const entry = (outcome.evidence.entry ?? '').trim().replace(/\s+/g, ' ')
  return { verdict: 'passed', expected, observed: `listed: ${entry}`, where: j.where, evidence: { ...j.evidence } }
}

/** How the type and bounds read, for `expected`. */
export function typeText(spec: Pick<KnobSpec, 'type'>): string {
  const t = spec.type
  if (t.kind === 'bool') return 'true or false'
  if (t.kind === 'enum') return "one of the choices the build's --help prints"
  if (t.kind === 'int-or-auto') return `"auto" or a whole number ≥ ${t.min}`
  return `a whole number ≥ ${t.min}${t.unit ? ` (${t.unit})` : ''}`
}

/** The knob's default: the catalog's, else the build's --help's. */
function defaultOf(spec: KnobSpec, buildDefault: string | null | undefined): string | null {
  return spec.default ?? buildDefault ?? null
}

/**
 * `preflight.value`: the new value fits the knob's type and the catalog's bounds, is one of the
 * enum's printed choices, and is not what --previous says the engine runs (nothing to arm).
 */
export function judgeValue(ctx: RunContext, read: HelpRead, asked: AskedValue): PreflightJudgement {
  const { spec } = ctx
  const { flag, env } = spec
  const where = read.outcome.where
  const buildDefault = read.outcome.gives?.buildDefault ?? null
  const fallback = defaultOf(spec, buildDefault)
  const expected = `${asked.from} is ${typeText(spec)}, and differs from --previous`
  const shownRaw = asked.raw === null ? `unset (the default${fallback !== null ? `, ${fallback}` : ''})` : showValue(asked.raw)
  if (asked.raw !== null) {
    const why = valueProblem(spec, asked.raw)
    if (why)
      return {
        verdict: 'failed',
        expected,
        observed: `${asked.from} ${showValue(asked.raw)}: ${why}`,
        where: `the knob's catalog entry (${ctx.target.knob}: ${flag})`,
        next: `do not deploy: the engine would refuse ${showValue(asked.raw)} for ${flag} (or read it as another value); give ${asked.from} and ${env} in the env file ${typeText(spec)}`,
        evidence: { value: asked.raw, problem: why },
      }
  }
  const value = asked.raw === null ? fallback : canonicalValue(spec, asked.raw)
  if (spec.type.kind === 'enum') {
    if (!read.listed)
      return {
        verdict: 'skipped',
        expected,
        observed: `not judged: the flag's choices are not known (step preflight.help: ${read.outcome.observed})`,
        where,
        next: 'fix what preflight.help says first',
        evidence: {},
      }
    const choices = read.outcome.evidence.choices ?? null
    if (!choices || choices.length === 0)
      return {
        verdict: 'inconclusive',
        expected,
        observed: `${flag} is listed but --help prints no choices for it`,
        where,
        next: `read the build's source or docs for the legal values of ${flag} before arming ${value ?? 'it'}`,
        evidence: { value },
      }
    if (value !== null && !choices.includes(value))
      return {
        verdict: 'failed',
        expected: `${value} is one of ${flag}'s choices`,
        observed: `${asked.from} ${shownRaw} is not a choice; the running build lists {${choices.join(',')}}`,
        where,
        next: `do not deploy: config_parse refuses ${value} at boot (a crash loop right after the deploy); pick one of ${choices.join(', ')} for ${asked.from} and ${env} in the env file`,
        evidence: { value, choices },
      }
  }
  if (value === null)
    return {
      verdict: 'inconclusive',
      expected,
      observed: `${asked.from} is unset and neither the catalog nor --help gives ${flag} a default`,
      where,
      next: `give ${asked.from} the value to arm`,
      evidence: {},
    }
  const previous = ctx.target.previous ?? fallback
  if (previous === null)
    return {
      verdict: 'inconclusive',
      expected,
      observed: `--previous is unset and neither the catalog nor --help gives ${flag} a default to compare ${value} with`,
      where,
      next: 'give --previous the value the engine runs now',
      evidence: { value },
    }
  if (canonicalValue(spec, previous) === value)
    return {
      verdict: 'failed',
      expected,
      observed: `${asked.from} ${shownRaw} is --previous ${previous}: the deploy would change nothing`,
      where,
      next: `nothing to arm: give ${asked.from} the new value, or --previous the value the engine runs now (preflight.previous reads it)`,
      evidence: { value, previous },
    }
  const choices = read.outcome.evidence.choices
  return {
    verdict: 'passed',
    expected,
    observed: `${flag} ${value}${asked.raw === null ? ' (the default)' : ''}: ${typeText(spec)}${choices?.length ? ` {${choices.join(',')}}` : ''}; --previous ${previous}`,
    where,
    evidence: { value, previous, ...(choices ? { choices } : {}) },
  }
}
