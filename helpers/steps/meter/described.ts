// The endpoints an engine describes itself on (vLLM's cache_config_info, SGLang's /server_info,
// llama.cpp's /props: the profile's resolved sources other than the log), read for the knob and
// set against the expected value: every one must agree (../resolved/). They prove a knob without a
// counter alone (`checkDescribed`), and must agree before a counter's watch (./judge.ts). They are
// asked at the base URL, so they speak for the pid step argv read only through the tie argv made
// (engineProcess.tie: its listening socket, its container or pod, --pid-cmd, the page's start
// time): without it they are not asked, and the step is inconclusive.
import { canonicalValue } from '../../config/knobs.ts'
import { isLogSource } from '../../profiles/convert.ts'
import { agree, type Agreement } from '../resolved/agree.ts'
import { readEndpointSources } from '../resolved/endpoints.ts'
import { sourceEvidence } from '../resolved/evidence.ts'
import { defaultValue, endpointUrl, expectedValue, type EngineProcess, type InputsOf, type RunContext } from '../context.ts'
import type { MetricsReading } from './reading.ts'
import type { Judgement } from '../verdict.ts'

/** The profile's self-describing endpoints this knob is read from, with its key in each. */
export function endpointSources(ctx: RunContext): Array<{ source: RunContext['engine']['resolved'][number]; key: string }> {
  const keys = ctx.spec.proof.sources ?? {}
  return ctx.engine.resolved.filter((s) => !isLogSource(s) && keys[s.id] !== undefined).map((source) => ({ source, key: keys[source.id]! }))
}

/** Why the endpoints cannot speak for the pid argv read: nothing tied the base URL to it (undefined: it is tied). */
export function untiedEndpoint(ctx: RunContext, engine: EngineProcess | undefined): string | undefined {
  if (engine?.tie) return undefined
  const labels = endpointSources(ctx)
    .map((s) => s.source.label)
    .join(', ')
  return engine
    ? `not read: nothing ties ${ctx.target.baseUrl ?? 'the endpoint'} to pid ${engine.pid}, whose command line step argv read (see step argv), so what ${labels} say would not be about it`
    : `not read: step argv found no single engine process, so nothing ties what ${labels} say to one`
}

/**
 * What the engine's self-describing endpoints say of the knob, against the expected value: every
 * one must agree. `page`: the /metrics page the meter already read (an info gauge is read from it).
 */
export async function selfDescription(
  ctx: RunContext,
  value: string,
  atDefault: boolean,
  page?: MetricsReading,
): Promise<Agreement | undefined> {
  const sources = endpointSources(ctx)
  if (sources.length === 0) return undefined
  return agree(ctx.spec, canonicalValue(ctx.spec, value), atDefault, await readEndpointSources(ctx, sources, page))
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
  const untied = untiedEndpoint(ctx, inputs.engineProcess)
  if (untied)
    return {
      verdict: 'inconclusive',
      expected,
      observed: untied,
      where,
      next: 'tie the endpoint to the engine first (step argv says what holds the port and what to give), then run again',
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
