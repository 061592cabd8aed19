// The meter's watch: reads a source (/metrics or Prometheus) once per poll until the ladder
// (./ladder.ts) concludes or the window ends, re-checks the process argv read when the ladder
// asks, shows progress, and writes what was seen into the step's evidence.
import { formatDuration } from '../../config/duration.ts'
import { pollWait } from '../../seams/poll.ts'
import type { RunContext, StepOutputs } from '../context.ts'
import type { Judgement } from '../verdict.ts'
import type { MeterEvidence } from './evidence.ts'
import { decide, type Decision, type Found, type LadderView } from './ladder.ts'
import { recheckProcess, type ProcessCheck } from '../_engine.ts'
import type { MeterReadings } from './scrape.ts'

export function meterPollInterval(windowMs: number): number {
  return Math.min(10_000, Math.max(250, Math.floor(windowMs / 30)))
}

/** One source of the meter's readings: it only reads; the ladder decides. */
export interface MeterSource {
  /** The wait between two reads. */
  intervalMs: number
  /** Reads once. `now`: the clock reading just taken; `remainingMs`: what is left of the window. */
  read(now: number, remainingMs: number): Promise<void>
  /** Everything read so far. */
  readings(): MeterReadings
  /** Evidence only this source has. */
  extras(): Partial<MeterEvidence>
}

export interface Watch {
  view: LadderView
  source: MeterSource
  expected: string
  labels: Readonly<Record<string, string>>
  engineProcess: StepOutputs['engineProcess'] | undefined
  /** Clock reading when the step began. */
  startMs: number
}

type Judged = Extract<Decision, { kind: 'judged' }>

/** The step's evidence from the readings, the series judged and the process re-check. */
function evidenceOf(w: Watch, readings: MeterReadings, d: Judged, process: ProcessCheck | undefined): MeterEvidence {
  const { view } = w
  const found: Found | undefined = d.found
  const track = found?.chosen ?? found?.tracks[0]
  const first = track?.points[0]
  const last = track?.points.at(-1)
  const moved = found?.proof === 'rose' && first ? track!.points.find((p) => p.value > first.value) : undefined
  return {
    meter: {
      name: view.meterName,
      labels: { ...w.labels },
      series: track?.name ?? null,
      first: first?.value ?? null,
      last: last?.value ?? null,
      movedAt: moved ? new Date(moved.at).toISOString() : null,
      movedAfterMs: moved ? Math.max(0, moved.at - view.sinceMs) : null,
      proof: d.verdict === 'passed' ? (found?.proof ?? null) : null,
      model: view.model ?? null,
      selection: found?.selection ?? null,
      judged: (found?.tracks ?? []).map((t) => ({
        series: t.name,
        first: t.points[0]!.value,
        last: t.points.at(-1)!.value,
        fromScrape: t.from + 1,
      })),
      notJudged: found?.notJudged ?? [],
    },
    process: process ? { state: process.state, argvPid: process.argvPid, pidsNow: process.pids, detail: process.detail } : null,
    series: track
      ? readings.scrapes.map((r, i) => ({ t: r.at - view.sinceMs, v: track.points.find((p) => p.i === i)?.value ?? null }))
      : [],
    scrapes: readings.scrapes.length,
    scrapeFailures: readings.failures,
    prefixes: readings.scrapes.at(-1)?.prefixes ?? [],
    ...w.source.extras(),
  }
}

/** Watches until the ladder concludes or the window ends. */
export async function watchMeter(ctx: RunContext, w: Watch): Promise<Judgement<'meter'>> {
  const { view, source } = w
  const deadline = w.startMs + view.windowMs
  let process: ProcessCheck | undefined
  const settle = async (final: boolean): Promise<Decision> => {
    const d = decide(view, source.readings(), { final, ...(process ? { process } : {}) })
    if (d.kind !== 'recheck') return d
    process = await recheckProcess(ctx, w.engineProcess)
    return decide(view, source.readings(), { final, process })
  }
  const conclude = (d: Decision): Judgement<'meter'> => {
    if (d.kind !== 'judged') throw new Error(`meter: the ladder answered ${d.kind} after its process re-check`)
    return {
      verdict: d.verdict,
      expected: w.expected,
      observed: d.observed,
      where: d.where,
      ...(d.next !== undefined ? { next: d.next } : {}),
      evidence: evidenceOf(w, source.readings(), d, process),
    }
  }
  // The baseline alone may settle it (a page Prometheus refuses, another engine's page): no watch then.
  if (source.readings().scrapes.length > 0) {
    const d = await settle(false)
    if (d.kind !== 'watch') return conclude(d)
  }
  for (;;) {
    const before = ctx.clock.now()
    await source.read(before, deadline - before)
    const d = await settle(false)
    if (d.kind !== 'watch') return conclude(d)
    const now = ctx.clock.now()
    if (now >= deadline) break
    if (source.readings().scrapes.length > 0) {
      const n = source.readings().scrapes.length
      ctx.progress(
        `watching ${view.shown}${view.words.in} = ${d.latest ?? '?'} · ${n} scrape(s) · ${formatDuration(now - w.startMs)} of ${formatDuration(view.windowMs)}${d.traffic !== undefined ? ` · ${d.traffic} requests since the start` : ''}`,
      )
    }
    await pollWait(ctx.clock, deadline, source.intervalMs, now)
  }
  return conclude(await settle(true))
}
