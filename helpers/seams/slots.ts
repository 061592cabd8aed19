// A counting semaphore: `acquire` resolves with the function that gives the slot back (once,
// however often it is called); `run` holds one around a function. Used by the host sessions
// (./host-sessions.ts) and the fleet's gate.
export interface Slots {
  /**
   * `first`: served before every waiter that did not ask so (a read many others wait on).
   * `signal`: when it aborts before a slot is free, the waiter leaves the queue (it never takes
   * one) and the promise rejects with the signal's reason.
   */
  acquire(first?: boolean, signal?: AbortSignal): Promise<() => void>
  /** Runs `fn` once a slot is free, holding it until what `fn` returns settles (resolved or rejected). */
  run<T>(fn: () => Promise<T>): Promise<T>
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
  const acquire = (first = false, signal?: AbortSignal): Promise<() => void> =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason)
        return
      }
      const leave = (): void => {
        const at = waiting.indexOf(grant)
        if (at < 0) return
        waiting.splice(at, 1)
        if (at < firsts) firsts--
        reject(signal!.reason)
      }
      function grant(): void {
        signal?.removeEventListener('abort', leave)
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
        return
      }
      if (first) waiting.splice(firsts++, 0, grant)
      else waiting.push(grant)
      signal?.addEventListener('abort', leave, { once: true })
    })
  return {
    acquire,
    async run(fn) {
      const give = await acquire()
      try {
        return await fn()
      } finally {
        give()
      }
    },
    inUse: () => used,
    waiting: () => waiting.length,
  }
}
