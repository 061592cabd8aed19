// The endpoints an engine describes itself on (vLLM's cache_config_info, SGLang's /server_info,
// llama.cpp's /props: the profile's resolved sources other than the log), read for the knob and
// set against the expected value: every one must agree (../resolved/). They prove a knob without a
// counter alone (`checkDescribed`), and must agree before a counter's watch (./judge.ts).
import { canonicalValue } from '../../config/knobs.ts'
import { isLogSource } from '../../profiles/convert.ts'
import { agree, type Agreement } from '../resolved/agree.ts'
import { readEndpointSources } from '../resolved/endpoints.ts'
import { sourceEvidence } from '../resolved/evidence.ts'
import { defaultValue, endpointUrl, expectedValue, type InputsOf, type RunContext } from '../context.ts'
import type { Judgement } from '../verdict.ts'

/** The profile's self-describing endpoints this knob is read from, with its key in each. */
export function endpointSources(ctx: RunContext): Array<{ source: RunContext['engine']['resolved'][number]; key: string }> {
  const keys = ctx.spec.proof.sources ?? {}
  return ctx.engine.resolved.filter((s) => !isLogSource(s) && keys[s.id] !== undefined).map((source) => ({ source, key: keys[source.id]! }))
}

/** What the engine's self-describing endpoints say of the knob, against the expected value: every one must agree. */
export async function selfDescription(ctx: RunContext, value: string, atDefault: boolean): Promise<Agreement | undefined> {
  const sources = endpointSources(ctx)
  if (sources.length === 0) return undefined
  return agree(ctx.spec, canonicalValue(ctx.spec, value), atDefault, await readEndpointSources(ctx, sources))
}

/** The meter step of a knob with no counter, proven by the endpoints its engine describes itself on. */
export async function checkDescribed(ctx: RunContext, inputs: InputsOf<'meter'>): Promise<Judgement<'meter'>> {
  const value = expectedValue(ctx, inputs.buildDefault)
  const labels = endpointSources(ctx)
    .map((s) => s.source.label)
    .join(', ')
  const expected = `${labels} say${endpointSources(ctx).length === 1 ? 's' : ''} ${ctx.spec.flag} ${value ?? 'is the build default'}`
  const where = endpointUrl(ctx, '')
  if (value === undefined)
    return {
      verdict: 'inconclusive',
      expected,
      observed: 'the expected value is the build default, which --help did not print',
      where,
      next: 'pass --value',
      evidence: {},
    }
  if (inputs.healthy === false)
    return {
      verdict: 'inconclusive',
      expected,
      observed: `not read: /health never answered 200 (see step health), so ${labels} could not be asked`,
      where,
      next: 'get /health to answer 200 first (step health says what it saw), then run again',
      evidence: {},
    }
  const a = (await selfDescription(ctx, value, value === defaultValue(ctx, inputs.buildDefault)))!
  const evidence = {
    sources: sourceEvidence(
      a.rows.map((r) => r.reading),
      a.rows,
    ),
  }
  const at = a.rows.find((r) => r.reading.where)?.reading.where ?? `GET ${where}`
  if (a.verdict === 'silent') {
    return {
      verdict: 'skipped',
      intendedSkip: true,
      expected,
      observed: `not served: ${a.rows.map((r) => `${r.reading.source.label} ${r.said}`).join('; ')}; no counter exists for ${ctx.spec.flag}: its proof is the ledger's resolved line (step ledger)`,
      where: at,
      evidence,
    }
  }
  return { verdict: a.verdict, expected, observed: a.observed, where: at, ...(a.next ? { next: a.next } : {}), evidence }
}
