// Time, behind a seam: live waits really wait; replay advances a virtual clock instead.
import { setTimeout as delay } from 'node:timers/promises'

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number
  sleep(ms: number): Promise<void>
}

export const realClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => (ms > 0 ? delay(ms) : Promise.resolve()),
}

/** A clock that never waits: sleeping moves it forward, and so can the replayed timeline. */
export class VirtualClock implements Clock {
  #now: number
  constructor(start: number) {
    this.#now = start
  }
  now(): number {
    return this.#now
  }
  async sleep(ms: number): Promise<void> {
    this.#now += Math.max(0, ms)
  }
  /** Moves forward to `t` (never back). */
  advanceTo(t: number): void {
    if (t > this.#now) this.#now = t
  }
}
