// A target's host reads taken ahead, in one host call: the steps that read the host (drop-ins,
// --help, the engine lookup, the ledger) each ask for their own read, one after another; the
// reads they will ask for are known from the target's options, so they run all at once
// (HostClient.runAll: one process, one ssh session) and each step is then answered its own part,
// with its own output, status and duration. Where the targets of a host share the engine survey
// (./host-gather.ts) it is asked ahead too. A read asked that was not planned, or asked a second
// time, runs as it always did. Underneath the recording (./record.ts), so a recording keeps each
// read apart, in the order the steps asked for them.
//
// They start when the first of them is asked, or earlier with `startReadsAhead` (a run starts
// them right after its first contact, so they run while vitest starts); reads started earlier
// than AHEAD_MAX_AGE_MS before a target's steps (it waited for its fleet slot) are not used.
// Reads started for a run that ends before its steps take them (refused at first contact, its
// suites' setup failed, interrupted) are dropped when it ends (`startReadsAhead`'s answer): in a
// process that serves many runs, a later run of the same target must never be answered them.
// Dropping cancels them (the host call is ended with its process group, or never starts if it
// still waits for a host session; a shared read only when no other target waits on it): no host
// program of a run outlives it. Reads a run's steps took are theirs: a drop never touches them;
// reads too old to be taken are cancelled when found so.
import type { Gather, HostClient, HostResult, HostRun } from './host-result.ts'

export const AHEAD_MAX_AGE_MS = 20_000

/** What a target's steps will read: its own reads (one call), and its part of shared reads. */
export interface Ahead {
  reads: readonly HostRun[]
  gathers: ReadonlyArray<{ g: Gather<unknown>; key: unknown; timeoutMs: number }>
}

interface Started {
  at: number
  reads: Promise<HostResult[]> | undefined
  gathers: Array<Promise<HostResult> | undefined>
  /** A run's steps took them: they are never cancelled. */
  taken: boolean
  cancel(): void
}

const keyOf = (req: HostRun): string => JSON.stringify([req.script, req.asDeployUser === true, req.privileged === true, req.timeoutMs])
const gatherKey = (g: Gather<unknown>, key: unknown, timeoutMs: number): string => JSON.stringify([g.kind, g.keyOf(key), timeoutMs])
const aheadKey = (where: string, ahead: Ahead): string =>
  JSON.stringify([where, ahead.reads.map(keyOf), ahead.gathers.map((x) => gatherKey(x.g, x.key, x.timeoutMs))])

const early = new Map<string, Started>()

function start(host: HostClient, ahead: Ahead, taken: boolean): Started {
  const controller = new AbortController()
  const { signal } = controller
  const reads = host.runAll && ahead.reads.length > 1 ? host.runAll(ahead.reads, signal) : undefined
  const gathers = host.gather ? ahead.gathers.map((x) => host.gather!(x.g, x.key, x.timeoutMs, signal)) : []
  // Nobody may ever ask (the run ends first): an early read's failure is its step's to report, never an unhandled rejection.
  void reads?.catch(() => {})
  for (const p of gathers) void p.catch(() => {})
  return { at: Date.now(), reads, gathers, taken, cancel: () => controller.abort() }
}

/**
 * Starts `ahead` on `host` now; the client `readAhead` opens later for the same host and reads takes
 * them. `where` names the host and its access. The answer drops them if still not taken (the run ends).
 */
export function startReadsAhead(where: string, host: HostClient, ahead: Ahead): () => void {
  const id = aheadKey(where, ahead)
  const started = start(host, ahead, false)
  early.set(id, started)
  return () => {
    if (early.get(id) === started) early.delete(id)
    if (!started.taken) started.cancel()
  }
}

export function readAhead(host: HostClient, ahead: Ahead, where: string): HostClient {
  const id = aheadKey(where, ahead)
  const found = early.get(id)
  early.delete(id)
  let started = found && Date.now() - found.at <= AHEAD_MAX_AGE_MS ? found : undefined
  // Taken now, before any await: a drop from here on leaves them to these steps.
  if (started) started.taken = true
  else found?.cancel()
  const reads = new Map<string, number[]>()
  for (const [i, req] of ahead.reads.entries()) reads.set(keyOf(req), [...(reads.get(keyOf(req)) ?? []), i])
  const gathers = new Map<string, number[]>()
  for (const [i, x] of ahead.gathers.entries())
    gathers.set(gatherKey(x.g, x.key, x.timeoutMs), [...(gathers.get(gatherKey(x.g, x.key, x.timeoutMs)) ?? []), i])
  const now = (): Started => (started ??= start(host, ahead, true))
  return {
    where: host.where,
    ...(host.target !== undefined ? { target: host.target } : {}),
    async run(req, signal) {
      const batch = now().reads
      const index = batch ? reads.get(keyOf(req))?.shift() : undefined
      if (index === undefined) return host.run(req, signal)
      // Each part is handed once: the batch does not keep it past its step.
      const parts: Array<HostResult | undefined> = await batch!
      const part = parts[index]!
      parts[index] = undefined
      return part
    },
    ...(host.runAll ? { runAll: host.runAll.bind(host) } : {}),
    ...(host.gather
      ? {
          gather<K>(g: Gather<K>, key: K, timeoutMs: number): Promise<HostResult> {
            const shared = now().gathers
            const index = gathers.get(gatherKey(g as Gather<unknown>, key, timeoutMs))?.shift()
            const part = index === undefined ? undefined : shared[index]
            if (part === undefined) return host.gather!(g, key, timeoutMs)
            shared[index!] = undefined
            return part
          },
        }
      : {}),
  }
}
