// A clock for judges tested in-process: it never waits; sleeping moves it forward.
import type { Clock } from '../../helpers/seams/clock.ts'

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
}
