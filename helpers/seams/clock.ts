// Time, behind a seam: live waits really wait; replay reads the recorded clock instead.
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
