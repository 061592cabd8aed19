// The wait between two polls, shared by the steps that poll (health: /health until 200; meter:
// /metrics until the counter moves): one interval, never past the deadline. The clock is the
// run's seam, so replay does not sleep.
import type { Clock } from './clock.ts'

/** Sleeps `intervalMs`, or only what is left until `deadline` (nothing when it has passed). `now`: a reading already taken. */
export function pollWait(clock: Clock, deadline: number, intervalMs: number, now: number = clock.now()): Promise<void> {
  return clock.sleep(Math.min(intervalMs, Math.max(0, deadline - now)))
}
