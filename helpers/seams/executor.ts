// Where host programs are started: in this process (./exec.ts), or from the spawner
// (./spawner.ts), a small process that forks them cheaply and off this process's main thread: once
// a fleet run asks for it (`useSpawner`), and whenever this process is large (LARGE_RSS). The
// spawner is started on first use and never holds this process open when idle; should it end or
// fail to start, the programs start here again. A caller's abort crosses to the spawner as a
// cancel message (the plan stays plain data): the spawner ends that program as ./exec.ts would here.
import { fork, type ChildProcess } from 'node:child_process'
import { getCompileCacheDir } from 'node:module'
import { fileURLToPath } from 'node:url'
import { cancelledExec, execPlan, type Exec, type ExecPlan } from './exec.ts'

/** What the spawner is sent: a program to start under `id`, or the cancel of the one started under `cancel`. */
export type SpawnerAsk = { id: number; plan: ExecPlan } | { cancel: number }

const ENTRY = fileURLToPath(new URL(`./spawner.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`, import.meta.url))

interface Spawner {
  child: ChildProcess
  pending: Map<number, { plan: ExecPlan; signal: AbortSignal | undefined; resolve: (e: Exec) => void }>
  next: number
}

/**
 * From this resident size on, a host program starts from the spawner: a fork copies the forking
 * process's page tables and its child's exec tears them down, so a spawn's CPU grows with the
 * size (measured on 2 cores, parent and child together: 1.8 ms from a 45 MB process, 6 ms at
 * 145 MB, 13 ms at 245 MB, 21 ms at 345 MB), while the spawner costs one small Node start (about
 * 80 ms) and 2 ms a program. A one-target `pnpm verify` stays below it (110 MB at first contact,
 * 176 MB at its last host read); `armproof serve` after many runs, or a process judging many
 * targets side by side, does not.
 */
export const LARGE_RSS = 192 * 2 ** 20

let wanted = false
let broken = false
let spawner: Spawner | null = null

/** `useSpawner(false)` asked for the spawner to end, once it holds no program. */
let releasing = false

/** Ends the spawner once it is let go and holds no program (the last answers of cancelled reads may come after `useSpawner(false)`). */
function letGoIdle(): void {
  if (wanted || !releasing || !spawner || spawner.pending.size > 0) return
  spawner.child.disconnect()
  spawner = null
  releasing = false
}

/**
 * From now on host programs start from the spawner (a fleet run turns it on; `false` turns it off
 * and ends it once idle: a large process starts another at its next program).
 */
export function useSpawner(on = true): void {
  wanted = on
  releasing = !on
  letGoIdle()
}

const hold = (s: Spawner, on: boolean): void => {
  if (on) {
    s.child.ref()
    s.child.channel?.ref()
  } else {
    s.child.unref()
    s.child.channel?.unref()
  }
}

function start(): Spawner | null {
  // A let-go asked before this spawner existed is not this one's.
  releasing = false
  try {
    const cache = getCompileCacheDir()
    const child = fork(ENTRY, [], {
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      execArgv: [],
      env: { ...process.env, ...(cache ? { NODE_COMPILE_CACHE: cache } : {}) },
    })
    const s: Spawner = { child, pending: new Map(), next: 1 }
    child.on('message', (m: { id: number; out: Exec }) => {
      const ask = s.pending.get(m.id)
      if (!ask) return
      s.pending.delete(m.id)
      if (s.pending.size === 0) hold(s, false)
      ask.resolve(m.out)
      if (spawner === s) letGoIdle()
    })
    const gone = (): void => {
      // Let go (`useSpawner(false)`: its run ended) it is no broken one: the next run that asks starts another.
      if (spawner === s) {
        spawner = null
        broken = true
      }
      // What it had not answered runs here: host reads may run twice, never not at all.
      for (const ask of s.pending.values()) void execPlan(ask.plan, ask.signal).then(ask.resolve)
      s.pending.clear()
    }
    child.on('exit', gone)
    child.on('error', gone)
    hold(s, false)
    return s
  } catch {
    broken = true
    return null
  }
}

/** Runs `plan` here or from the spawner; `signal` aborting ends it (or keeps it from starting): the answer says `cancelled`. */
export function runExec(plan: ExecPlan, signal?: AbortSignal): Promise<Exec> {
  if (signal?.aborted) return Promise.resolve(cancelledExec())
  if (broken || (!wanted && process.memoryUsage.rss() < LARGE_RSS)) return execPlan(plan, signal)
  spawner ??= start()
  const s = spawner
  if (!s) return execPlan(plan, signal)
  return new Promise((resolve) => {
    const id = s.next++
    const send = (ask: SpawnerAsk): void => void s.child.send(ask)
    const cancel = (): void => {
      try {
        if (s.pending.has(id)) send({ cancel: id })
      } catch {
        // the spawner is gone: `gone` runs what it held here, with this signal (already aborted)
      }
    }
    const answered = (e: Exec): void => {
      signal?.removeEventListener('abort', cancel)
      resolve(e)
    }
    s.pending.set(id, { plan, signal, resolve: answered })
    if (s.pending.size === 1) hold(s, true)
    try {
      send({ id, plan })
      signal?.addEventListener('abort', cancel, { once: true })
    } catch {
      s.pending.delete(id)
      void execPlan(plan, signal).then(answered)
    }
  })
}
