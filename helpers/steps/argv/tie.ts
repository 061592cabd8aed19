// The endpoint tied to the pid step argv read, before any proof: every proof read at the base URL
// (the probes, the meter's page, /server_info, /props) and the ledger read on the host are about
// one engine only where the base URL is tied to that pid. Tied at once by the pid's listening
// socket on the URL's host, by the container (or pod) the target names (unless another process,
// not the runtime's port forwarder, holds the port here), or by --pid-cmd's word. Otherwise (found
// by its name, or another process holds the port) the tie is settled once loading has ended
// (/health 200, within the health budget): the pid now holds the listening socket, or the /metrics
// page's process_start_time_seconds is the pid's start (a proxy in front of this very engine).
// Anything else is untied: step argv is then not green, naming who holds the port.
import { formatDuration } from '../../config/duration.ts'
import { describeHolders, type PortHolder } from '../../engine/describe.ts'
import { findEngine, type EngineFound, type EngineQuery } from '../../engine/find.ts'
import { untilLoaded } from '../health/loaded.ts'
import { MetricsUnavailable, readMetrics } from '../meter/metrics.ts'
import { sameStart } from '../meter/bind.ts'
import type { EndpointTie, LoadWait, RunContext } from '../context.ts'

export type Tied =
  | { tie: EndpointTie }
  /** Nothing ties it (`other`: the page proves another process serves the endpoint). */
  | { untied: { observed: string; next: string; holders: PortHolder[]; other: boolean } }

const at = (s: number): string => new Date(s * 1000).toISOString()

/** The tie the lookup itself gives, or undefined where it must be settled once the engine has loaded. */
export function tieAtLookup(lookup: EngineFound, q: EngineQuery): EndpointTie | undefined {
  const { pid } = lookup
  if (lookup.listenerTied) return { by: 'listener', said: `pid ${pid} holds the listening socket of port ${q.port} on the base URL's host` }
  // A pod's sockets are its own namespace's: the pod --host names, and the container in it declaring the port, stand for the endpoint.
  if (q.pod) return { by: 'pod', said: `pid ${pid} runs in pod ${q.pod.name}, the one --host names` }
  if (lookup.foundBy === 'pid-cmd') {
    const held = lookup.portHolders.filter((h) => h.pid !== pid)
    return {
      by: 'pid-cmd',
      said: `--pid-cmd names pid ${pid} as the one serving the endpoint${held.length ? ` (port ${q.port} is held by ${describeHolders(held)}: taken as in front of it, on --pid-cmd's word)` : ''}`,
    }
  }
  if (lookup.foundBy === 'container' && lookup.servedByOthers.length === 0)
    return { by: 'container', said: `pid ${pid} is the engine of container ${q.svc}, which publishes the endpoint` }
  return undefined
}

/** Why the lookup did not tie it, in words. */
function notTied(lookup: EngineFound, q: EngineQuery, holders: readonly PortHolder[]): string {
  if (holders.length > 0) return `port ${q.port} is served by ${describeHolders(holders)}, not by pid ${lookup.pid}`
  if (lookup.foundBy === 'pidof' && lookup.portHolders.length === 0 && q.urlHost !== null && lookup.servedByOthers.length === 0)
    return `pid ${lookup.pid} was found by its name, and no process listened on port ${q.port} when argv read it`
  return `pid ${lookup.pid} was found ${lookup.foundBy === 'pidof' ? 'by its name' : lookup.foundBy === 'container' ? "as the container's process" : 'by its listening socket'}, and the base URL's host (${q.urlHost ?? 'none'}) is not the host inspected, so no listening socket here ties it`
}

/** Settles the tie once loading has ended: the listening socket now, else the page's start time. */
export async function settleTie(ctx: RunContext, lookup: EngineFound, q: EngineQuery, onWait?: (w: LoadWait) => void): Promise<Tied> {
  const { pid } = lookup
  const fix = `point --base-url at the engine's own port (where pid ${pid} listens once loaded), or give --pid-cmd naming the process that serves it; then run again`
  const budget = ctx.target.healthBudgetMs
  const loaded = await untilLoaded(ctx, budget, `argv: waiting for loading to end to tie the endpoint to pid ${pid}`)
  // The later steps' waits for loading (ledger, health) count this one against the same budget.
  onWait?.({ state: loaded.state, waitedMs: loaded.waitedMs, ...(loaded.state !== 'loaded' ? { last: loaded.last } : {}) })
  if (loaded.state !== 'loaded') {
    const holders = lookup.servedByOthers
    return {
      untied: {
        observed: `${notTied(lookup, q, holders)}, and /health did not answer 200 within ${formatDuration(budget)} (${loaded.last}), so nothing could tie the endpoint to it once loaded`,
        next:
          loaded.state === 'loading'
            ? `the engine is still loading (or the port is another process's): wait until /health answers 200 and run again, with a larger --health-budget if the model is big; or ${fix}`
            : `step health says what /health answered; ${fix}`,
        holders,
        other: false,
      },
    }
  }
  const waited = loaded.waitedMs > 0 ? ` (after ${formatDuration(loaded.waitedMs)} of loading)` : ''
  const now = await findEngine(ctx.host, q)
  if (
    now.kind === 'found' &&
    now.pid === pid &&
    now.listenerTied &&
    (lookup.startTimeSeconds === null || now.startTimeSeconds === lookup.startTimeSeconds)
  )
    return { tie: { by: 'listener', said: `pid ${pid} holds the listening socket of port ${q.port} once loaded${waited}` } }
  const holders =
    now.kind === 'found' && now.pid === pid
      ? now.servedByOthers
      : lookup.servedByOthers.length > 0 || now.kind === 'trouble'
        ? lookup.servedByOthers
        : now.portHolders.filter((h) => h.pid !== null && h.pid !== pid)
  const held = notTied(lookup, q, holders)
  const untied = (observed: string, next = fix, other = false): Tied => ({ untied: { observed, next, holders, other } })
  let page
  try {
    page = await readMetrics(ctx, 15_000)
  } catch (error) {
    if (!(error instanceof MetricsUnavailable)) throw error
    return untied(
      `${held}, and ${error.url} served no page whose process_start_time_seconds could tie the endpoint to it (${error.detail})`,
    )
  }
  if (page.processStart === undefined)
    return untied(`${held}, and ${page.url} carries no (single) process_start_time_seconds that could tie the endpoint to it`)
  if (lookup.startTimeSeconds === null)
    return untied(
      `${held}, and the start time of pid ${pid} could not be read to compare with ${page.url}'s process_start_time_seconds`,
      `let armproof read /proc/${pid}/stat and /proc/stat on --host (the deploy user, or sudo without a password); or ${fix}`,
    )
  if (!sameStart(page.processStart, lookup.startTimeSeconds, lookup.startTimeResolution))
    return untied(
      `${held}: the endpoint is served by a process started at ${at(page.processStart)} (process_start_time_seconds at ${page.url}), pid ${pid} started at ${at(lookup.startTimeSeconds)}: another engine answers there`,
      `point --base-url at the engine step argv read, not at a load balancer or proxy in front of another, or tell armproof which process serves the URL (--process, --pid-cmd); then run again`,
      true,
    )
  return {
    tie: {
      by: 'start-time',
      said: `${holders.length > 0 ? `port ${q.port} is served by ${describeHolders(holders)} in front of it: ` : ''}${page.url}'s process_start_time_seconds is pid ${pid}'s start (${at(lookup.startTimeSeconds)})${waited}`,
    },
  }
}
