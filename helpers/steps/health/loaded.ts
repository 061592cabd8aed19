// Whether the engine has finished loading: GET /health polled until it answers 200 (any body),
// within the health budget. The ledger step waits on it before it calls a missing resolved line
// red: an engine prints what it resolved when loading ends (llama.cpp's n_slots line, a budget
// known only after the memory profile), and verify runs the moment the deploy returns. Refused
// connections and 503s are loading; any other answer ends the wait (the health step judges it).
import { formatDuration } from '../../config/duration.ts'
import { HttpError } from '../../seams/http.ts'
import { pollWait } from '../../seams/poll.ts'
import { endpointUrl, type RunContext } from '../context.ts'

export type Loaded =
  /** /health answered 200 after `waitedMs` (0: at the first ask). */
  | { state: 'loaded'; waitedMs: number; asks: number }
  /** Still loading when the budget ran out: the last answer. */
  | { state: 'loading'; waitedMs: number; asks: number; last: string }
  /** Something else answered (a 401, a 404, a TLS mistake): not loading, and not loaded either. */
  | { state: 'other'; waitedMs: number; asks: number; last: string }

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
      const res = await ctx.http.request({
        method: 'GET',
        url,
        timeoutMs: Math.max(50, Math.min(10_000, remaining)),
        followRedirects: true,
      })
      if (res.status === 200) return { state: 'loaded', waitedMs: ctx.clock.now() - started, asks }
      if (res.status !== 503) return { state: 'other', waitedMs: ctx.clock.now() - started, asks, last: `HTTP ${res.status}` }
      last = '503 (loading)'
    } catch (error) {
      if (!(error instanceof HttpError)) throw error
      if (error.failure !== 'refused' && error.failure !== 'timeout' && error.failure !== 'reset')
        return { state: 'other', waitedMs: ctx.clock.now() - started, asks, last: error.failure }
      last = `${error.failure} (loading)`
    }
    const elapsed = ctx.clock.now() - started
    ctx.progress(`${waiting} (${url}: ${last}) · ${formatDuration(elapsed)} of ${formatDuration(budgetMs)}`)
    await pollWait(ctx.clock, deadline, Math.min(1000, Math.max(100, Math.floor(budgetMs / 30))))
  }
}
