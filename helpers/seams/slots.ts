// A counting semaphore: `acquire` resolves with the function that gives the slot back (once,
// however often it is called). Used by the host sessions (./host-sessions.ts) and the fleet's gate.
export interface Slots {
  /** `first`: served before every waiter that did not ask so (a read many others wait on). */
  acquire(first?: boolean): Promise<() => void>
  inUse(): number
  /** Waiting for a slot now. */
  waiting(): number
}

export function slots(n: number): Slots {
  let used = 0
  const waiting: Array<() => void> = []
  /** How many of the waiters at the head asked to be first. */
  let firsts = 0
  const release = () => {
    used--
    if (firsts > 0) firsts--
    const next = waiting.shift()
    if (next) {
      used++
      next()
    }
  }
  return {
    acquire: (first = false) =>
      new Promise((resolve) => {
        const grant = () => {
          let done = false
          resolve(() => {
            if (done) return
            done = true
            release()
          })
        }
        if (used < n) {
          used++
          grant()
        } else if (first) waiting.splice(firsts++, 0, grant)
        else waiting.push(grant)
      }),
    inUse: () => used,
    waiting: () => waiting.length,
  }
}
