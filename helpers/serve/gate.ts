// Who may run now: one run per target at a time (a second request for a target whose run is under
// way or waiting is refused at once, never queued behind it: the controller asks again), at most
// `maxRuns` runs at once, and at most `queueMax` waiting for a slot, in the order they came.

export type Release = () => void

export type Entry =
  | { refused: 'busy'; since: number; state: 'running' | 'queued' }
  | { refused: 'full' }
  /** Resolves to the release once a slot is free, or to null when the request went away while it waited. */
  | { slot: Promise<Release | null> }

interface Waiter {
  svc: string
  signal: AbortSignal
  resolve: (release: Release | null) => void
}

export class RunGate {
  private readonly held = new Map<string, { since: number; state: 'running' | 'queued' }>()
  private readonly waiting: Waiter[] = []
  private running = 0

  private readonly maxRuns: number
  private readonly queueMax: number

  constructor(maxRuns: number, queueMax: number) {
    this.maxRuns = maxRuns
    this.queueMax = queueMax
  }

  get runningCount(): number {
    return this.running
  }

  get queuedCount(): number {
    return this.waiting.length
  }

  enter(svc: string, signal: AbortSignal): Entry {
    const held = this.held.get(svc)
    if (held) return { refused: 'busy', since: held.since, state: held.state }
    if (this.running < this.maxRuns) {
      this.running++
      this.held.set(svc, { since: Date.now(), state: 'running' })
      return { slot: Promise.resolve(this.releaser(svc)) }
    }
    if (this.waiting.length >= this.queueMax) return { refused: 'full' }
    this.held.set(svc, { since: Date.now(), state: 'queued' })
    return {
      slot: new Promise<Release | null>((resolve) => {
        const waiter: Waiter = { svc, signal, resolve }
        this.waiting.push(waiter)
        signal.addEventListener(
          'abort',
          () => {
            const i = this.waiting.indexOf(waiter)
            if (i < 0) return
            this.waiting.splice(i, 1)
            this.held.delete(svc)
            resolve(null)
          },
          { once: true },
        )
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
      const next = this.waiting.shift()
      if (!next) return
      this.running++
      this.held.set(next.svc, { since: Date.now(), state: 'running' })
      next.resolve(this.releaser(next.svc))
    }
  }
}
