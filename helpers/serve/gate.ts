// Who may run now: one run per target at a time (a second request for a target whose run is under
// way or waiting is refused at once, never queued behind it: the controller asks again), at most
// `maxRuns` runs at once, and at most `queueMax` waiting for a slot, in the order they came, each
// for at most `queueWaitMs` (0: none waits; a request that finds no free slot is refused at once).
// Once closed (serve stopping) nothing new starts: every waiter is told so, and every new entry.

export type Release = () => void

/** Why a waiter got no slot. */
export type NoSlot = 'gone' | 'expired' | 'shutdown'

export type Entry =
  | { refused: 'busy'; since: number; state: 'running' | 'queued' }
  | { refused: 'full' }
  | { refused: 'shutdown' }
  /** Resolves to the release once a slot is free, or to why none came. */
  | { slot: Promise<Release | { none: NoSlot }> }

interface Waiter {
  svc: string
  resolve: (release: Release | { none: NoSlot }) => void
  timer: NodeJS.Timeout | undefined
  drop: () => void
}

export class RunGate {
  private readonly held = new Map<string, { since: number; state: 'running' | 'queued' }>()
  private readonly waiting: Waiter[] = []
  private running = 0
  private closed = false

  readonly maxRuns: number
  readonly queueMax: number
  readonly queueWaitMs: number

  constructor(maxRuns: number, queueMax: number, queueWaitMs = 60_000) {
    this.maxRuns = maxRuns
    this.queueMax = queueMax
    this.queueWaitMs = queueWaitMs
  }

  get runningCount(): number {
    return this.running
  }

  get queuedCount(): number {
    return this.waiting.length
  }

  /** No run starts from now on: every waiter is answered `shutdown`, every later entry refused. */
  close(): void {
    this.closed = true
    for (const w of this.waiting.splice(0)) {
      clearTimeout(w.timer)
      w.drop()
      this.held.delete(w.svc)
      w.resolve({ none: 'shutdown' })
    }
  }

  enter(svc: string, signal: AbortSignal): Entry {
    if (this.closed) return { refused: 'shutdown' }
    const held = this.held.get(svc)
    if (held) return { refused: 'busy', since: held.since, state: held.state }
    if (this.running < this.maxRuns) {
      this.running++
      this.held.set(svc, { since: Date.now(), state: 'running' })
      return { slot: Promise.resolve(this.releaser(svc)) }
    }
    if (this.queueWaitMs === 0 || this.waiting.length >= this.queueMax) return { refused: 'full' }
    this.held.set(svc, { since: Date.now(), state: 'queued' })
    return {
      slot: new Promise((resolve) => {
        const leave = (why: NoSlot): void => {
          const i = this.waiting.indexOf(waiter)
          if (i < 0) return
          this.waiting.splice(i, 1)
          clearTimeout(waiter.timer)
          waiter.drop()
          this.held.delete(svc)
          resolve({ none: why })
        }
        const onAbort = (): void => leave('gone')
        const waiter: Waiter = {
          svc,
          resolve,
          timer: setTimeout(() => leave('expired'), this.queueWaitMs),
          drop: () => signal.removeEventListener('abort', onAbort),
        }
        this.waiting.push(waiter)
        signal.addEventListener('abort', onAbort, { once: true })
      }),
    }
  }

  private releaser(svc: string): Release {
    let released = false
    return () => {
      if (released) return
      released = true
      this.held.delete(svc)
      this.running--
      if (this.closed) return
      const next = this.waiting.shift()
      if (!next) return
      clearTimeout(next.timer)
      next.drop()
      this.running++
      this.held.set(next.svc, { since: Date.now(), state: 'running' })
      next.resolve(this.releaser(next.svc))
    }
  }
}
