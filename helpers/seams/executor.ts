// Where host programs are started: in this process (./exec.ts), or from the spawner
// (./spawner.ts), a small process that forks them cheaply and off this process's main thread: once
// a fleet run asks for it (`useSpawner`), and whenever this process is large (LARGE_RSS). The
// spawner is started on first use and never holds this process open when idle; should it end or
// fail to start, the programs start here again.
import { fork, type ChildProcess } from 'node:child_process'
import { getCompileCacheDir } from 'node:module'
import { fileURLToPath } from 'node:url'
import { execPlan, type Exec, type ExecPlan } from './exec.ts'

const ENTRY = fileURLToPath(new URL(`./spawner.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`, import.meta.url))

interface Spawner {
  child: ChildProcess
  pending: Map<number, { plan: ExecPlan; resolve: (e: Exec) => void }>
  next: number
}

/**
 * From this resident size on, a host program starts from the spawner: a fork copies the forking
 * process's page tables and its child's exec tears them down, so a spawn's CPU grows with the
 * size (measured on 2 cores: about 1 ms from a 50 MB process, 5 ms at 150 MB, 25 ms at 350 MB,
 * parent and child together), while the spawner costs one small Node start. A one-target
 * `pnpm verify` stays below it; `armproof serve` after many runs, or a process judging many
 * targets, does not.
 */
export const LARGE_RSS = 256 * 2 ** 20

let wanted = false
let broken = false
let spawner: Spawner | null = null

/** From now on host programs start from the spawner (a fleet run turns it on; `false` turns it off). */
export function useSpawner(on = true): void {
  wanted = on
  if (!on && spawner && spawner.pending.size === 0) {
    spawner.child.disconnect()
    spawner = null
  }
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
    })
    const gone = (): void => {
      // Let go (`useSpawner(false)`: its run ended) it is no broken one: the next run that asks starts another.
      if (spawner === s) {
        spawner = null
        broken = true
      }
      // What it had not answered runs here: host reads may run twice, never not at all.
      for (const ask of s.pending.values()) void execPlan(ask.plan).then(ask.resolve)
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

export function runExec(plan: ExecPlan): Promise<Exec> {
  if (broken || (!wanted && process.memoryUsage.rss() < LARGE_RSS)) return execPlan(plan)
  spawner ??= start()
  const s = spawner
  if (!s) return execPlan(plan)
  return new Promise((resolve) => {
    const id = s.next++
    s.pending.set(id, { plan, resolve })
    if (s.pending.size === 1) hold(s, true)
    try {
      s.child.send({ id, plan })
    } catch {
      s.pending.delete(id)
      void execPlan(plan).then(resolve)
    }
  })
}
