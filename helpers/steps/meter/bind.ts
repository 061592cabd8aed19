// Is a scrape the engine's that step argv read? A page (or a Prometheus series set) is bound to
// that pid by its process_start_time_seconds, equal to the pid's start time to the pid's own
// resolution, or, on the engine's own page, by the pid holding the base URL's listening socket.
// A page started at another time is another process: the run is about two engines, which is
// never green (inconclusive: neither engine's arm is proven, and the fix is where armproof was
// pointed) unless the pid argv read is gone, which is a restart (red, as a restart is). A page
// that nothing ties to the pid is inconclusive, naming what is missing. Pure.
import type { EngineProcess } from '../context.ts'
import type { ProcessCheck } from '../_engine.ts'
import type { MeterScrape } from './scrape.ts'

export type Said = { verdict: 'failed' | 'inconclusive'; observed: string; next: string }

/** Why a scrape is not bound to the pid: said at once, or only once the process was re-checked. */
export type Unbound = { said: Said } | { after: (p: ProcessCheck) => Said }

const at = (s: number): string => new Date(s * 1000).toISOString()

/**
 * The page's start time and the pid's are one: equal to the pid's own resolution (1/CLK_TCK, as
 * prometheus_client and Go's process collector compute the value from the same /proc fields). The
 * digits a page prints never widen it: exporters print the shortest form that reads back, so a
 * start on a whole second is `1.764597643e+09` (trailing zeros dropped), which says nothing of a
 * coarser clock; read as ±0.5 s it let another engine started within half a second pass as this
 * one (a false green). A page that truly keeps fewer digits can only fail to match (inconclusive).
 */
export function sameStart(page: number, pid: number, resolution: number): boolean {
  return Math.abs(page - pid) <= resolution / 2 + 1e-6
}

export const HOW: Readonly<Record<EngineProcess['foundBy'], string>> = {
  listener: 'by its listening socket',
  container: "as the container's process",
  'pid-cmd': 'by --pid-cmd',
  pidof: 'by pidof --process',
}

/**
 * `scrapeName`: the scrape as a sentence names it; `listenerBinds`: the listening socket ties this
 * source's pages (the engine's own /metrics; never a series Prometheus holds).
 */
export function unbound(
  engine: EngineProcess | undefined,
  r: MeterScrape,
  scrapeName: string,
  listenerBinds: boolean,
): Unbound | undefined {
  if (!engine) return undefined // argv read no single process: its own verdict says so, and the run is not green
  const pid = engine.pid
  if (r.processStart !== undefined && engine.startTimeSeconds !== null) {
    if (sameStart(r.processStart, engine.startTimeSeconds, engine.startTimeResolution)) return undefined
    const page = r.processStart
    const theirs = `the endpoint is served by a process started at ${at(page)} (process_start_time_seconds ${r.processStartRaw ?? page} at ${scrapeName}), the pid argv read (${pid}) started at ${at(engine.startTimeSeconds)}`
    return {
      after: (p) =>
        p.state === 'changed'
          ? {
              verdict: 'failed',
              observed: `the engine restarted during the proof: ${theirs}; ${p.detail}`,
              next: 'a restarted engine is not the process step argv read: find why it restarted (journalctl, podman ps -a, OOM), then run the proof again on a settled engine',
            }
          : {
              verdict: 'inconclusive',
              observed: `${theirs}: this run is about two engines, and armproof proves one${p.state === 'same' ? ` (${p.detail})` : ''}`,
              next: 'point --base-url at the engine step argv read, not at a load balancer or proxy in front of several, or tell armproof which process serves the URL (--process, --pid-cmd); then run again',
            },
    }
  }
  if (listenerBinds && engine.listenerTied) return undefined
  // No start time in Prometheus: the series' birth may tie it (./prom-tie.ts), or says why it does not.
  if (r.processStart === undefined && r.seriesTie) {
    if (r.seriesTie.tied) return undefined
    // Fewer than two scrapes so far: the tie is judged again at the next poll, over every scrape (a
    // rise, a flat window or a value before the run all need two scrapes, so nothing is green on this).
    if (r.seriesTie.pending) return undefined
    return {
      said: {
        verdict: 'inconclusive',
        observed: `nothing ties ${r.where} to the pid step argv read (${pid}): ${scrapeName} carries no process_start_time_seconds, and the series' birth does not tie it: ${r.seriesTie.observed}`,
        next: r.seriesTie.next,
      },
    }
  }
  const missing =
    r.processStart === undefined
      ? `${scrapeName} carries no process_start_time_seconds${listenerBinds ? `, and the base URL's listening socket was not tied to pid ${pid} (found ${HOW[engine.foundBy]})` : ''}`
      : `the start time of pid ${pid} could not be read${listenerBinds ? `, and the base URL's listening socket was not tied to it (found ${HOW[engine.foundBy]})` : ''}`
  return {
    said: {
      verdict: 'inconclusive',
      observed: `nothing ties ${r.where} to the pid step argv read (${pid}): ${missing}`,
      next: !listenerBinds
        ? r.processStart === undefined
          ? "through Prometheus only the series' process_start_time_seconds binds it to the pid: let Prometheus keep the engine's process_start_time_seconds (prometheus_client exports it; check metric_relabel_configs), or read the engine's own /metrics (without --prometheus-url)"
          : `let armproof read /proc/${pid}/stat and /proc/stat on --host (the deploy user, or sudo without a password); then run again`
        : r.processStart === undefined
          ? "give armproof the pid that serves the URL (--pid-cmd), or point --base-url at the engine itself on --host so its listening socket ties it, or export process_start_time_seconds (prometheus_client's process collector does)"
          : `let armproof read /proc/${pid}/stat and /proc/stat on --host (the deploy user, or sudo without a password), or point --base-url at the engine itself on --host so its listening socket ties it; then run again`,
    },
  }
}
