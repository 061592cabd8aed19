// Reads shared by the targets of one host (a fleet whose engines run on the same machine): a
// read of a kind that targets ask at about the same moment is made once for all of them
// (HostClient.gather; the engine survey is such a read, helpers/engine/survey-many.ts). A read
// is joined only before it starts, so what each target is answered was read after it asked: a
// target that asks while one is under way waits for the next, which starts as soon as that one
// ends and takes everyone who asked meanwhile. Only live runs share (a fleet turns it on, like
// the spawner): a recording keeps each target's own reads.
//
// A target that lets go of its part (its signal aborts: its run ended before its steps took it,
// ./read-ahead.ts) is answered `cancelled` at once. Not yet started, it leaves the gathering (the
// read never starts if it was alone); under way, the read is ended only once every target it
// answers has let go: another target's part is never cut short.
import { cancelledResult, type Gather, type HostResult, type HostRun } from './host-result.ts'

/** How long the first asker waits for others before the read starts. */
const GATHER_MS = 2

let shared = false

/** From now on clients of one host share their gatherable reads (a fleet run turns it on, `false` off). */
export function useSharedReads(on = true): void {
  shared = on
}

export function sharedReadsOn(): boolean {
  return shared
}

interface Asker {
  key: unknown
  timeoutMs: number
  resolve(r: HostResult): void
  reject(error: unknown): void
  /** It let go of its part (its signal aborted). */
  gone: boolean
  /** The read under way that answers it, once started: ended when all its askers are gone. */
  read?: { askers: readonly Asker[]; controller: AbortController }
}

interface Gathering {
  waiting: Asker[]
  busy: boolean
  timer: NodeJS.Timeout | null
}

const gatherings = new Map<string, Gathering>()

/**
 * `host`'s part of the next shared read of kind `g` among the clients whose `shareKey` is the
 * same (they reach the same host as the same user, in the same way); `run` makes the read.
 */
export function gatherRead<K>(
  shareKey: string,
  run: (req: HostRun, signal: AbortSignal) => Promise<HostResult>,
  g: Gather<K>,
  key: K,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<HostResult> {
  if (signal?.aborted) return Promise.resolve(cancelledResult(g.script([key])))
  const id = `${g.kind}\n${shareKey}`
  let gathering = gatherings.get(id)
  if (!gathering) {
    gathering = { waiting: [], busy: false, timer: null }
    gatherings.set(id, gathering)
  }
  const state = gathering
  const flush = async (): Promise<void> => {
    state.timer = null
    if (state.busy || state.waiting.length === 0) return
    const askers = state.waiting.splice(0)
    state.busy = true
    const read = { askers, controller: new AbortController() }
    for (const a of askers) a.read = read
    const keys = [...new Map(askers.map((a) => [g.keyOf(a.key as K), a.key as K])).values()]
    try {
      // Everyone who asked waits on it: it goes before the host's other waiting reads.
      const result = await run(
        {
          script: g.script(keys),
          ...(g.privileged ? { privileged: true } : {}),
          ...(g.asDeployUser ? { asDeployUser: true } : {}),
          timeoutMs: Math.max(...askers.map((a) => a.timeoutMs)),
          urgent: true,
        },
        read.controller.signal,
      )
      for (const a of askers) a.resolve(g.view(result, keys, a.key as K))
    } catch (error) {
      for (const a of askers) a.reject(error)
    } finally {
      state.busy = false
      if (state.waiting.length > 0) state.timer = setTimeout(() => void flush(), 0)
      else gatherings.delete(id)
    }
  }
  return new Promise((resolve, reject) => {
    const asker: Asker = { key, timeoutMs, resolve, reject, gone: false }
    const letGo = (): void => {
      asker.gone = true
      resolve(cancelledResult(g.script([key])))
      const at = state.waiting.indexOf(asker)
      if (at >= 0) {
        state.waiting.splice(at, 1)
        // Nobody else asked: the read never starts.
        if (state.waiting.length === 0 && !state.busy) {
          if (state.timer) clearTimeout(state.timer)
          state.timer = null
          if (gatherings.get(id) === state) gatherings.delete(id)
        }
      } else if (asker.read?.askers.every((a) => a.gone)) asker.read.controller.abort()
    }
    // Answered (or let go): the signal is no longer listened to.
    const settle =
      <T>(f: (v: T) => void) =>
      (v: T) => {
        signal?.removeEventListener('abort', letGo)
        f(v)
      }
    asker.resolve = settle(resolve)
    asker.reject = settle(reject)
    signal?.addEventListener('abort', letGo, { once: true })
    state.waiting.push(asker)
    if (!state.busy && state.timer === null) state.timer = setTimeout(() => void flush(), GATHER_MS)
  })
}
