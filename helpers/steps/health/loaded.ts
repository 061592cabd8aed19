// Whether the engine has finished loading: GET /health polled until it answers 200 (any body),
// within the health budget. The ledger step waits on it before it calls a missing resolved line
// red: an engine prints what it resolved when loading ends (llama.cpp's n_slots line, a budget
// known only after the memory profile), and verify runs the moment the deploy returns. Its
// answers are read as the health step reads them: 200 is loaded; what first contact calls an
// operator's mistake (../first-contact/answers.ts: a key, a path, the scheme, TLS, a broken
// redirect) ends the wait, and the health step names it; anything else, a refused connection or a
// 503 above all, is loading, waited out within the budget.
import { formatDuration } from '../../config/duration.ts'
import { HttpError, type HttpResponse } from '../../seams/http.ts'
import { pollWait } from '../../seams/poll.ts'
import { endpointUrl, type RunContext } from '../context.ts'
import { fromError, fromHealth } from '../first-contact/answers.ts'

export type Loaded =
  /** /health answered 200 after `waitedMs` (0: at the first ask). */
  | { state: 'loaded'; waitedMs: number; asks: number }
  /** Still loading when the budget ran out: the last answer. */
  | { state: 'loading'; waitedMs: number; asks: number; last: string }
  /** Something else answered (a 401, a 404, a TLS mistake): not loading, and not loaded either. */
  | { state: 'other'; waitedMs: number; asks: number; last: string }

/** One GET /health as every wait for it asks: redirects followed, its timeout within what is left of the budget. */
export function askHealth(ctx: RunContext, url: string, remainingMs: number): Promise<HttpResponse> {
  return ctx.http.request({ method: 'GET', url, timeoutMs: Math.max(50, Math.min(10_000, remainingMs)), followRedirects: true })
}

/** `waiting`: the progress line's head (which step waits, and why). */
export async function untilLoaded(
  ctx: RunContext,
  budgetMs: number = ctx.target.healthBudgetMs,
  waiting = 'ledger: waiting for loading to end before judging the log',
): Promise<Loaded> {
  const url = endpointUrl(ctx, '/health')
  const started = ctx.clock.now()
  const deadline = started + budgetMs
  let asks = 0
  let last = 'nothing yet'
  for (;;) {
    const remaining = deadline - ctx.clock.now()
    if (remaining <= 0) return { state: 'loading', waitedMs: ctx.clock.now() - started, asks, last }
    asks++
    try {
      const res = await askHealth(ctx, url, remaining)
      if (res.status === 200) return { state: 'loaded', waitedMs: ctx.clock.now() - started, asks }
      // As the health step reads them (first contact's rule): an operator's mistake is no loading.
      if (fromHealth(res, ctx.target, `GET ${url}`))
        return { state: 'other', waitedMs: ctx.clock.now() - started, asks, last: `HTTP ${res.status}` }
      last = res.status === 503 ? '503 (loading)' : `HTTP ${res.status}`
    } catch (error) {
      if (!(error instanceof HttpError)) throw error
      if (error.failure !== 'dns' && fromError(error, ctx.target, `GET ${url}`))
        return { state: 'other', waitedMs: ctx.clock.now() - started, asks, last: error.failure }
      last = `${error.failure} (loading)`
    }
    const elapsed = ctx.clock.now() - started
    ctx.progress(`${waiting} (${url}: ${last}) · ${formatDuration(elapsed)} of ${formatDuration(budgetMs)}`)
    await pollWait(ctx.clock, deadline, Math.min(1000, Math.max(100, Math.floor(budgetMs / 30))))
  }
}
