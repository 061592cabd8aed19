// One /v1 request of the probes, retried while the endpoint says "later" (429, 503), and the
// judgement that blocks a probe before its own request (the served model could not be learned).
import { formatDuration } from '../../config/duration.ts'
import type { HttpRequest, HttpResponse } from '../../seams/http.ts'
import type { RunContext } from '../context.ts'
import type { Judgement } from '../verdict.ts'
import type { ProbeRetry } from './evidence.ts'

/** A probe cannot send its request: the judgement it returns instead. */
export class ProbeBlocked extends Error {
  readonly judgement: Judgement
  constructor(judgement: Judgement) {
    super(judgement.observed)
    this.judgement = judgement
  }
}

/** Statuses a gateway or a busy engine answers to say "later": retried, never counted as a completion. */
const RETRY_STATUSES = new Set([429, 503])

/** Seconds (or an HTTP date) of a Retry-After header, in ms; undefined when absent or unreadable. */
export function retryAfterMs(header: string | undefined, nowMs: number): number | undefined {
  if (header === undefined || header.trim() === '') return undefined
  const t = header.trim()
  if (/^\d+(\.\d+)?$/.test(t)) return Math.round(Number(t) * 1000)
  const date = Date.parse(t)
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs)
}

/**
 * One /v1 request, retried on 429 and 503 while the probe's timeout allows: each wait is the
 * Retry-After the endpoint asked for (1 s when it names none), and every retry is kept for the evidence.
 * The time spent is counted from the exchanges' own durations and the waits, never by reading the
 * run's clock: a replay takes exactly the recorded path.
 */
export async function withRetries(ctx: RunContext, req: HttpRequest): Promise<{ res: HttpResponse; retries: ProbeRetry[] }> {
  const retries: ProbeRetry[] = []
  let spent = 0
  for (;;) {
    const res = await ctx.http.request({ ...req, timeoutMs: Math.max(50, req.timeoutMs - spent) })
    spent += res.durationMs
    if (!RETRY_STATUSES.has(res.status)) return { res, retries }
    const header = res.headers['retry-after']
    const wait = retryAfterMs(header, Date.parse(res.headers.date ?? '') || Date.now()) ?? 1000
    // Only a wait that leaves time for the request itself is taken; else the last answer stands.
    if (wait >= req.timeoutMs - spent) return { res, retries }
    spent += wait
    retries.push({ status: res.status, retryAfter: header ?? null, waitedMs: wait })
    ctx.progress(`${req.method} ${req.url}: HTTP ${res.status}, retrying after ${formatDuration(wait)} (Retry-After ${header ?? 'absent'})`)
    await ctx.clock.sleep(wait)
  }
}
