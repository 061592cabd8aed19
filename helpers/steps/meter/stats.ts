// The meter step of a knob without a counter whose engine reports it on /stats (radiance's
// knobs that export no metric): the field read, against the expected value.
import { HttpError } from '../../seams/http.ts'
import { endpointUrl, expectedValue, type RunContext } from '../context.ts'
import type { Judgement } from '../verdict.ts'

export async function checkStats(ctx: RunContext, buildDefault: string | null | undefined): Promise<Judgement<'meter'>> {
  const path = ctx.spec.proof.stats!
  const url = endpointUrl(ctx, '/stats')
  const value = expectedValue(ctx, buildDefault)
  const expected = `/stats ${path} = ${value}`
  try {
    const res = await ctx.http.request({ method: 'GET', url, timeoutMs: 15_000 })
    let found: unknown
    try {
      found = path
        .split('.')
        .reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), JSON.parse(res.body))
    } catch {
      found = undefined
    }
    const evidence = { status: res.status, field: path, value: found ?? null }
    if (res.status !== 200 || found === undefined || found === null) {
      return {
        verdict: 'failed',
        expected,
        observed: res.status !== 200 ? `HTTP ${res.status}` : `no field ${path} in /stats`,
        where: `GET ${url}`,
        next: `this build's /stats does not report ${path}: the knob has no metric, so prove it from the ledger line and a build that reports ${path}`,
        evidence,
      }
    }
    if (String(found) !== value) {
      return {
        verdict: 'failed',
        expected,
        observed: `${path} = ${JSON.stringify(found)}`,
        where: `GET ${url}`,
        next: `the engine runs with ${ctx.spec.flag} ${String(found)}: check ${ctx.spec.env} and redeploy --service ${ctx.target.svc}`,
        evidence,
      }
    }
    return { verdict: 'passed', expected, observed: `${path} = ${JSON.stringify(found)}`, where: `GET ${url}`, evidence }
  } catch (error) {
    if (!(error instanceof HttpError)) throw error
    return {
      verdict: 'inconclusive',
      expected,
      observed: error.message,
      where: `GET ${url}`,
      next: 'the endpoint did not answer /stats: check it is up, then run again',
      evidence: {},
    }
  }
}
