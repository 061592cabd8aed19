// A counting semaphore: `acquire` resolves with the function that gives the slot back (once,
// however often it is called). Used by the host sessions (./host-sessions.ts) and the fleet's gate.
export interface Slots {
  acquire(): Promise<() => void>
  inUse(): number
  /** Waiting for a slot now. */
  waiting(): number
}

export function slots(n: number): Slots {
  let used = 0
  const waiting: Array<() => void> = []
  const release = () => {
    used--
    const next = waiting.shift()
    if (next) {
      used++
      next()
    }
  }
  return {
    acquire: () =>
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
        } else waiting.push(grant)
      }),
    inUse: () => used,
    waiting: () => waiting.length,
  }
}
