// Step `health`: GET /health polled until 200 within the health budget. Connection refused and
// 503 are "loading" (stock vLLM binds only after the model loads); the 200 body must be what the
// engine profile's health semantics say: radiance's carries numeric `in_flight` and `queue_cap`,
// llama.cpp's says `"status": "ok"`, vLLM's and SGLang's are an empty 200 (`body: empty`). A spent
// budget is inconclusive, never red. An operator's mistake (the key, the path, the scheme, TLS) is
// first contact's, found here when the engine was still loading then (../mistake.ts): never red;
// so is a 200 that is not the engine at all (an HTML page, a body where the engine answers none: a
// gateway's page; evidence failureKind `not-the-engine`): the base URL is the operator's to fix.
import { pollWait } from '../../seams/poll.ts'
import { formatDuration } from '../../config/duration.ts'
import { HttpError } from '../../seams/http.ts'
import { endpointUrl, type InputsOf, type LoadWait, type Outcome, type RunContext } from '../context.ts'
import { fromError, fromHealth } from '../first-contact/answers.ts'
import { mistaken } from '../mistake.ts'
import { askHealth } from './loaded.ts'
import type { Judgement } from '../verdict.ts'

function pollInterval(budgetMs: number): number {
  return Math.min(2000, Math.max(100, Math.floor(budgetMs / 30)))
}

/** Hands on `healthy` once /health answered 200: the probes are not attempted without it. */
export async function checkHealth(ctx: RunContext, inputs: InputsOf<'health'> = {}): Promise<Outcome<'health'>> {
  let healthy = false
  // What step ledger already waited for loading to end counts against the same budget.
  const judgement = await judgeHealth(ctx, () => (healthy = true), inputs.loadWait)
  return { ...judgement, gives: { healthy } }
}

/** What the profile asks of a 200's body, in the words of `expected`. */
function bodyClause(ctx: RunContext): string {
  const { numeric, equal, body } = ctx.engine.health
  if (body === 'empty') return ' with an empty body'
  const parts = [
    ...(numeric.length ? [`numeric ${numeric.join(' and ')}`] : []),
    ...Object.entries(equal).map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`),
  ]
  return parts.length ? ` with ${parts.join(' and ')}` : ''
}

/** An HTML page (by its content type or its first tag): a gateway's or web server's, never an engine's /health. */
function htmlPage(res: { headers: Record<string, string>; body: string }): string | undefined {
  const head = res.body.trimStart().slice(0, 200).toLowerCase()
  if (!/^text\/html\b/i.test(res.headers['content-type'] ?? '') && !/^<(!doctype html|html|head|body)\b/.test(head)) return undefined
  const title = /<title[^>]*>([^<]{0,120})/i.exec(res.body)?.[1]?.trim()
  return title ? `an HTML page titled ${JSON.stringify(title)}` : 'an HTML page'
}

/**
 * A 200 that is not this engine's health answer at all (an HTML page; a body where the profile
 * says the engine answers none): the base URL answers from something else. A failure of its own
 * kind (evidence `failureKind: 'not-the-engine'`): the operator's to fix, not the engine's.
 */
function notTheEngine(ctx: RunContext, res: { headers: Record<string, string>; body: string }): string | undefined {
  const html = htmlPage(res)
  if (html) return html
  if (ctx.engine.health.body === 'empty' && res.body.trim() !== '')
    return `a body (${JSON.stringify(res.body.trim().slice(0, 80))}${res.headers['content-type'] ? `, ${res.headers['content-type']}` : ''}) where ${ctx.engine.name} answers an empty 200`
  return undefined
}

/** The one ask the health step still makes when step ledger's wait spent the budget: long enough to be an answer. */
const LAST_ASK_MS = 2000

async function judgeHealth(ctx: RunContext, answered: () => void, before: LoadWait | undefined): Promise<Judgement<'health'>> {
  const waitedBefore = before?.waitedMs ?? 0
  const url = endpointUrl(ctx, '/health')
  const budget = ctx.target.healthBudgetMs
  const expected = `200${bodyClause(ctx)} within ${formatDuration(budget)}`
  const started = ctx.clock.now()
  // At least one ask, even when step ledger's wait spent the budget.
  const deadline = started + Math.max(LAST_ASK_MS, budget - waitedBefore)
  const seen = new Map<string, number>()
  let last = 'nothing yet'
  let attempts = 0
  for (;;) {
    const remaining = deadline - ctx.clock.now()
    if (remaining <= 0) break
    attempts++
    try {
      const res = await askHealth(ctx, url, remaining)
      if (res.status === 200) {
        answered()
        const waited = ctx.clock.now() - started
        let body: unknown
        try {
          body = JSON.parse(res.body)
        } catch {
          body = undefined
        }
        const fields = body && typeof body === 'object' ? (body as Record<string, unknown>) : {}
        const isNumber = (k: string) => typeof fields[k] === 'number' && Number.isFinite(fields[k])
        const evidence = { status: 200, body: res.body.slice(0, 500), attempts, waitedMs: waited }
        const other = notTheEngine(ctx, res)
        if (other)
          return mistaken(
            {
              where: `GET ${res.url}`,
              message: `the base URL, not the engine: ${ctx.target.baseUrl ?? 'it'} answers from a gateway or another server (curl -si ${url}); point --base-url at the engine itself, its root where /health, /metrics and /v1 live${ctx.engine.health.body === 'empty' ? `, or check that --engine names the engine that serves it` : ''}`,
            },
            {
              expected,
              observed: `200 with ${other}: not ${ctx.engine.name}'s /health answer, so the base URL does not reach the engine${waited > 0 ? ` (after ${formatDuration(waited)})` : ''}`,
              evidence: { ...evidence, failureKind: 'not-the-engine' as const },
            },
          )
        const { numeric, equal } = ctx.engine.health
        const missing = numeric.filter((k) => !isNumber(k))
        const unequal = Object.entries(equal).filter(([k, v]) => fields[k] !== v)
        if (missing.length === 0 && unequal.length === 0) {
          const shown = [...numeric, ...Object.keys(equal)]
          const said = shown.length
            ? JSON.stringify(Object.fromEntries(shown.map((k) => [k, fields[k]])))
            : res.body.trim() === ''
              ? '(an empty body, as this engine answers)'
              : JSON.stringify(res.body.trim().slice(0, 80))
          return { verdict: 'passed', expected, observed: `200 ${said} after ${formatDuration(waited)}`, where: `GET ${url}`, evidence }
        }
        const body200 = res.body.trim() === '' ? '(empty)' : res.body.slice(0, 200)
        return {
          verdict: 'failed',
          expected,
          observed: missing.length
            ? `200 but ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not numeric in the body ${body200}`
            : `200 but ${unequal.map(([k, v]) => `${JSON.stringify(k)} is ${JSON.stringify(fields[k] ?? null)}, not ${JSON.stringify(v)}`).join(' and ')} in the body ${body200}`,
          where: `GET ${url}`,
          next:
            ctx.engine.name === 'radiance'
              ? 'this build does not report its queue on /health: check the image is a radiance build (stock vLLM answers an empty 200); the gate reads in_flight/queue_cap from this body'
              : `this is not the ${ctx.engine.name} health answer its profile knows: check that --engine names the engine that serves ${ctx.target.baseUrl ?? 'the endpoint'} (curl -s ${url})`,
          evidence,
        }
      }
      // 401/403/404 (and plain HTTP sent to a TLS port) are not "loading": the path, a gateway's key
      // or the scheme is the operator's, and waiting will not change it. First contact's rule
      // (../first-contact/answers.ts) judges it: here the engine came up after first contact.
      const problem = fromHealth(res, ctx.target, `GET ${url}`)
      if (problem) {
        return mistaken(problem, {
          expected,
          observed: `HTTP ${res.status} ${res.body.slice(0, 120).trim()}`.trim(),
          evidence: { status: res.status, attempts },
        })
      }
      last = res.status === 503 ? '503 (loading)' : `${res.status} ${res.body.slice(0, 80)}`
    } catch (error) {
      if (!(error instanceof HttpError)) throw error
      // https:// against a plain-HTTP port, a certificate not trusted, a redirect whose Location is
      // no URL: no wait changes any (first contact ends the run on these; here they began after it,
      // the port refused then). A name that resolved at first contact and no longer does is not
      // --base-url's name being wrong: waited for, as a refused port is.
      const problem = error.failure === 'dns' ? undefined : fromError(error, ctx.target, `GET ${url}`)
      if (problem) return mistaken(problem, { expected, observed: error.message, evidence: { attempts, failure: error.failure } })
      last = error.failure === 'refused' ? 'connection refused (loading)' : `${error.failure} (${error.message})`
    }
    seen.set(last, (seen.get(last) ?? 0) + 1)
    const elapsed = ctx.clock.now() - started
    ctx.progress(`waiting for ${url}: ${last} · ${formatDuration(elapsed)} of ${formatDuration(budget)}`)
    await pollWait(ctx.clock, deadline, pollInterval(budget))
  }
  const summary = [...seen].map(([what, n]) => `${what} ×${n}`).join(', ')
  return {
    verdict: 'inconclusive',
    expected,
    observed: `no 200 within ${formatDuration(budget)} (${attempts} tries${waitedBefore > 0 ? `, after step ledger's ${formatDuration(waitedBefore)} of waiting for it${before?.last ? `: ${before.last}` : ''}` : ''}): ${summary || last}`,
    where: `GET ${url}`,
    next: `the engine is still loading or is down: watch the ledger (${ctx.target.ledgerCmd.replaceAll('{svc}', ctx.target.svc)}), then run again, with a larger --health-budget if the model is big`,
    evidence: { attempts, seen: Object.fromEntries(seen) },
  }
}
