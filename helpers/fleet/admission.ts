// How many targets of a fleet run at once: as many as the run can afford, under `--concurrency N`
// when one is given. A target is let in when one more fits:
// - sockets: its connections (the probes side by side, /health, /metrics) and the host programs'
//   pipes, FDS_PER_TARGET in all, within the file descriptors this process may still open;
// - memory: the resident memory one target in flight has cost so far (at least MIN_TARGET_BYTES)
//   within MEMORY_SHARE of the memory the machine has available and of V8's heap limit;
// - time: the event loop answers within MAX_LAG_MS, so no target's waits (a probe's timeout, the
//   meter's polls) are stretched by the others' work.
// A target waiting for its slot opens nothing: its budgets start with its own steps. The host's
// own capacity (programs per core, ssh sessions per destination) is the host seam's gate
// (helpers/seams/host-sessions.ts). The first target always starts.
import { readdirSync, readFileSync } from 'node:fs'
import { freemem } from 'node:os'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { getHeapStatistics } from 'node:v8'

export const FDS_PER_TARGET = 12
/** File descriptors kept for everything else (reports, vitest, the spawner, stdio). */
export const FDS_RESERVE = 128
export const MIN_TARGET_BYTES = 1 << 20
export const MEMORY_SHARE = 0.5
export const MAX_LAG_MS = 100
/** How often a waiting target looks again when memory or the event loop held it. */
const RECHECK_MS = 50

/** What the run has now; a test gives its own. */
export interface Resources {
  /** File descriptors this process may still open. */
  fdsFree(): number
  rss(): number
  heapUsed(): number
  heapLimit(): number
  /** Memory the machine has available to this process (MemAvailable). */
  available(): number
  /** The event loop's recent delay, ms (mean over the last RECHECK_MS or so). */
  lagMs(): number
  close(): void
}

function softFdLimit(): number {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'))
    const soft = line?.split(/\s{2,}/)[1]
    return soft === undefined || soft === 'unlimited' ? 1 << 20 : Number(soft)
  } catch {
    return 1024
  }
}

function openFds(): number {
  try {
    return readdirSync('/proc/self/fd').length
  } catch {
    return 64
  }
}

function memAvailable(): number {
  try {
    const kb = /^MemAvailable:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1]
    if (kb !== undefined) return Number(kb) * 1024
  } catch {
    // not Linux: what Node says is free
  }
  return freemem()
}

export function processResources(): Resources {
  const limit = softFdLimit()
  let lag: ReturnType<typeof monitorEventLoopDelay> | undefined
  try {
    lag = monitorEventLoopDelay({ resolution: 10 })
    lag.enable()
  } catch {
    lag = undefined
  }
  let lastMean = 0
  let lastRead = 0
  return {
    fdsFree: () => limit - openFds(),
    rss: () => process.memoryUsage.rss(),
    heapUsed: () => process.memoryUsage().heapUsed,
    heapLimit: () => getHeapStatistics().heap_size_limit,
    available: memAvailable,
    lagMs() {
      if (!lag) return 0
      const now = performance.now()
      if (now - lastRead >= RECHECK_MS) {
        lastMean = lag.count > 0 ? lag.mean / 1e6 : 0
        lag.reset()
        lastRead = now
      }
      return lastMean
    },
    close: () => lag?.disable(),
  }
}

export interface Admission {
  acquire(): Promise<() => void>
  inUse(): number
  /** The most targets in flight at once so far. */
  peak(): number
  /** The most the sockets allow (and the cap, and the fleet's size): what this run could have at once. */
  ceiling(): number
  close(): void
}

export function admission(options: { cap: number | null; targets: number; resources?: Resources }): Admission {
  const res = options.resources ?? processResources()
  const bySockets = Math.max(1, Math.floor((res.fdsFree() - FDS_RESERVE) / FDS_PER_TARGET))
  const ceiling = Math.max(1, Math.min(options.cap ?? Number.POSITIVE_INFINITY, options.targets, bySockets))
  const rss0 = res.rss()
  const heap0 = res.heapUsed()
  const budget = rss0 + MEMORY_SHARE * res.available()
  let used = 0
  let peak = 0
  const waiting: Array<() => void> = []
  let timer: NodeJS.Timeout | null = null

  /** One more target fits: its share of memory so far, within the budgets, and an event loop that keeps up. */
  const fits = (): boolean => {
    if (used >= ceiling) return false
    if (used === 0) return true
    // What the targets in flight hold, or will once they are under way (a burst of them has not grown memory yet).
    const rss = res.rss()
    const heap = res.heapUsed()
    const perTarget = Math.max(MIN_TARGET_BYTES, (rss - rss0) / used)
    const perHeap = Math.max(MIN_TARGET_BYTES / 2, (heap - heap0) / used)
    if (Math.max(rss, rss0 + used * perTarget) + perTarget > budget) return false
    if (Math.max(heap, heap0 + used * perHeap) + perHeap > MEMORY_SHARE * res.heapLimit()) return false
    return res.lagMs() <= MAX_LAG_MS
  }
  const admitWaiting = (): void => {
    while (waiting.length > 0 && fits()) {
      used++
      peak = Math.max(peak, used)
      waiting.shift()!()
    }
    // Held by memory or the event loop, not by a slot: look again soon, a release may never come.
    if (waiting.length > 0 && used < ceiling && timer === null) {
      timer = setTimeout(() => {
        timer = null
        admitWaiting()
      }, RECHECK_MS)
    }
  }
  return {
    acquire: () =>
      new Promise((resolve) => {
        waiting.push(() => {
          let done = false
          resolve(() => {
            if (done) return
            done = true
            used--
            admitWaiting()
          })
        })
        admitWaiting()
      }),
    inUse: () => used,
    peak: () => peak,
    ceiling: () => ceiling,
    close() {
      if (timer) clearTimeout(timer)
      res.close()
    },
  }
}

/**
 * The last fleet suite's gate in this process: how many targets it let in at once (the report says
 * it). Kept here, not beside the suite, so that the CLI reads it without loading vitest's runtime.
 * Forgotten when its fleet run ends: a later run in the same process (one whose every target was
 * refused at first contact runs no suite) must not report the gate of the one before.
 */
let lastGate: Admission | undefined
export function rememberGate(gate: Admission): void {
  lastGate = gate
}
export function forgetGate(): void {
  lastGate = undefined
}
export function fleetAdmission(): { peak: number; ceiling: number } | undefined {
  return lastGate ? { peak: lastGate.peak(), ceiling: lastGate.ceiling() } : undefined
}
