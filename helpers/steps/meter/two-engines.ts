// Before the probes: is the baseline page (./from-metrics.ts `takeBaseline`) the engine's that
// step argv read? A page started at another time than that pid proves the run is about two
// engines; ./bind.ts decides what that is once the process is re-checked (inconclusive while the
// pid still runs: the endpoint is another engine; red when it is gone: a restart), exactly as the
// ladder says it for any later page. The runner then ends the run (StepOutputs.wrongEngine): no
// probe is sent to the other engine and no meter window is waited out.
import { endpointUrl, type EngineProcess, type RunContext, type WrongEngine } from '../context.ts'
import { recheckProcess } from '../_engine.ts'
import { unbound } from './bind.ts'
import { pageScrape } from './from-metrics.ts'
import { PROCESS_START } from './metrics.ts'
import { trafficNames } from './names.ts'
import type { MeterBaseline } from './reading.ts'
import { pageWords } from './words.ts'

export async function wrongEngineAtBaseline(
  ctx: RunContext,
  baseline: MeterBaseline | undefined,
  engine: EngineProcess | undefined,
): Promise<WrongEngine | undefined> {
  const meter = ctx.spec.proof.meter
  if (!meter || baseline?.source !== 'metrics' || !engine) return undefined
  const url = endpointUrl(ctx, '/metrics')
  const scrape = pageScrape(baseline.reading, undefined, trafficNames(ctx.engine))
  const other = unbound(engine, scrape, `${pageWords(url, meter.name).scrape(0, scrape)} (the baseline, before the probes)`, true)
  // Only a page proven to be another process's ends the run; a page nothing ties is the meter's to say.
  if (!other || !('after' in other)) return undefined
  const said = other.after(await recheckProcess(ctx, engine))
  return {
    step: 'meter',
    verdict: said.verdict,
    expected: `${url} is served by the engine step argv read: its ${PROCESS_START} is the start time of pid ${engine.pid}`,
    observed: said.observed,
    where: scrape.where,
    next: said.next,
  }
}
