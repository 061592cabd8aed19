// The asynchronous runs of `armproof serve` (POST /runs/<svc> → 202 and Location: /runs/<id>;
// GET /runs/<id> → its state, and when done its verdict and report), kept in memory: a run in
// progress until it ends, a finished one for `keepMs` after it ended, at most `max` in all (the
// oldest finished go first). A restart of serve forgets them: GET answers 404 for an id it never
// gave or no longer keeps, and the controller starts the run again.
import { randomBytes } from 'node:crypto'

export type RunState = 'queued' | 'running' | 'done'

export interface AsyncRun {
  id: string
  svc: string
  state: RunState
  createdAt: number
  /** While queued: when it stops waiting for a slot (--queue-wait). */
  waitUntil?: number
  startedAt?: number
  finishedAt?: number
  verdict?: string
  /** The report as verify wrote it (parsed), or serve's report-shaped error. */
  report?: unknown
  controller: AbortController
}

/** A run id serve gives: `r-` and 24 hex digits (96 random bits). */
export const newRunId = (): string => `r-${randomBytes(12).toString('hex')}`

export class RunBook {
  private readonly runs = new Map<string, AsyncRun>()
  private readonly keepMs: number
  private readonly max: number

  constructor(keepMs: number, max = 1000) {
    this.keepMs = keepMs
    this.max = max
  }

  get(id: string): AsyncRun | undefined {
    this.prune()
    return this.runs.get(id)
  }

  add(run: AsyncRun): void {
    this.runs.delete(run.id)
    this.runs.set(run.id, run)
    this.prune()
  }

  delete(id: string): void {
    this.runs.delete(id)
  }

  inProgress(): AsyncRun[] {
    return [...this.runs.values()].filter((r) => r.state !== 'done')
  }

  private prune(): void {
    const now = Date.now()
    for (const [id, r] of this.runs) if (r.state === 'done' && now - r.finishedAt! > this.keepMs) this.runs.delete(id)
    if (this.runs.size <= this.max) return
    for (const [id, r] of this.runs) {
      if (this.runs.size <= this.max) break
      if (r.state === 'done') this.runs.delete(id)
    }
  }

  /** What GET /runs/<id> answers. */
  static view(run: AsyncRun): Record<string, unknown> {
    return {
      id: run.id,
      svc: run.svc,
      state: run.state,
      ...(run.verdict !== undefined ? { verdict: run.verdict } : {}),
      createdAt: new Date(run.createdAt).toISOString(),
      ...(run.waitUntil !== undefined && run.state === 'queued' ? { waitUntil: new Date(run.waitUntil).toISOString() } : {}),
      ...(run.startedAt !== undefined ? { startedAt: new Date(run.startedAt).toISOString() } : {}),
      ...(run.finishedAt !== undefined ? { finishedAt: new Date(run.finishedAt).toISOString() } : {}),
      ...(run.report !== undefined ? { report: run.report } : {}),
    }
  }
}
