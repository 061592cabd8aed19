// Reads shared by the targets of one host (a fleet whose engines run on the same machine): a
// read of a kind that targets ask at about the same moment is made once for all of them
// (HostClient.gather; the engine survey is such a read, helpers/engine/survey-many.ts). A read
// is joined only before it starts, so what each target is answered was read after it asked: a
// target that asks while one is under way waits for the next, which starts as soon as that one
// ends and takes everyone who asked meanwhile. Only live runs share (a fleet turns it on, like
// the spawner): a recording keeps each target's own reads.
import type { Gather, HostResult, HostRun } from './host-result.ts'

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
  run: (req: HostRun) => Promise<HostResult>,
  g: Gather<K>,
  key: K,
  timeoutMs: number,
): Promise<HostResult> {
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
    const keys = [...new Map(askers.map((a) => [g.keyOf(a.key as K), a.key as K])).values()]
    try {
      // Everyone who asked waits on it: it goes before the host's other waiting reads.
      const result = await run({
        script: g.script(keys),
        ...(g.privileged ? { privileged: true } : {}),
        ...(g.asDeployUser ? { asDeployUser: true } : {}),
        timeoutMs: Math.max(...askers.map((a) => a.timeoutMs)),
        urgent: true,
      })
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
    state.waiting.push({ key, timeoutMs, resolve, reject })
    if (!state.busy && state.timer === null) state.timer = setTimeout(() => void flush(), GATHER_MS)
  })
}
