// The meter ladder's first pass (./ladder.ts decides from it): each scrape in order, whose page it
// is (./bind.ts), then Prometheus' rules on it: a page the server would refuse whole, the meter
// absent or gone, not a counter, a series twice, another model's only, a value no counter takes, a
// restart (a start time that moves, a counter that goes down). The first thing refused decides;
// the series followed so far come with it. Pure.
import type { EngineProcess } from '../context.ts'
import type { ProcessCheck } from '../_engine.ts'
import { unbound, type Said } from './bind.ts'
import type { MeterProof } from './evidence.ts'
import { seriesKey, seriesName } from './reading.ts'
import type { MeterReadings } from './scrape.ts'
import { select } from './select.ts'
import { RESTART_NEXT, type MeterWords, type Point } from './words.ts'

/** What the ladder knows of the run besides the readings. */
export interface LadderView {
  meterName: string
  /** The meter as shown: its name and the catalog's labels. */
  shown: string
  model: string | undefined
  value: string
  /** The value turns the knob's feature off (its `off` list; without one, its default): the meter must stay at zero while traffic flows. */
  still: boolean
  /** The traffic the knob's proof sent itself (the meter moves only under it), in words; absent when none. */
  traffic?: string
  /** Some of that traffic was not answered (its failures): a flat meter proves nothing either way. */
  trafficShort?: string
  /** The traffic could not fill one whole KV block (why, in words): a flat meter proves nothing either way. */
  trafficWeak?: string
  /** Why, for the message: `at its default 0`, `at false, which turns its feature off`. */
  stillWhy: string
  /** The expected value is the knob's default, yet turns its feature on (vLLM's prefix caching): the meter must move at the default. */
  onByDefault: boolean
  flag: string
  env: string
  svc: string
  /** What a red arm rolls back to (--previous, else the default). */
  rollbackTo: string | undefined
  windowMs: number
  /** What "moved after" counts from. */
  sinceMs: number
  /** The first scrape was taken before the probes' traffic. */
  baseline: boolean
  /** Where the meter is read, when no read says more. */
  where: string
  words: MeterWords
  /** The process step argv read: each scrape must be its (./bind.ts). */
  engine?: EngineProcess
  /** How a page that carries the meter only under an earlier name is said (the profile's renamed:); absent: nothing to say. */
  renamed?: (used: string) => string
  /** The base URL's listening socket, held by that pid, ties this source's pages to it (the engine's own /metrics; never Prometheus' series). */
  listenerBinds: boolean
}

/** One series of the meter followed across the scrapes of this run. */
export interface Track {
  key: string
  labels: Readonly<Record<string, string>>
  name: string
  /** Index of the scrape it first appeared in. */
  from: number
  points: Point[]
}

export interface Found {
  tracks: Track[]
  selection: string | null
  notJudged: string[]
  /** The series the judgement is about. */
  chosen?: Track
  /** Set only on a pass. */
  proof?: MeterProof
}

const isCounterType = (type: string | undefined, name: string): boolean =>
  type === 'counter' || ((type === 'untyped' || type === 'unknown') && name.endsWith('_total'))

export type Bad = {
  verdict: 'failed' | 'inconclusive'
  observed: string
  next: string
  where: string
  restart: boolean
  chosen?: Track
  /** What it is once the process argv read was re-checked (a page of another process: two engines, or a restart). */
  after?: (p: ProcessCheck) => Said
}

export type Scan = {
  bad: Bad | undefined
  tracks: Track[]
  selection: string | null
  notJudged: string[]
  /** Every scrape so far declared the meter a counter and carried no sample of it: zero so far. */
  declaredZero: boolean
}

/** The value a declared counter without a child stands for: zero so far (prometheus_client prints a child only after its first inc()). */
export const DECLARED_ZERO = '0 (declared, no sample yet)'

/** Each scrape in order; the first thing Prometheus' rules refuse decides. */
export function scan(view: LadderView, readings: MeterReadings): Scan {
  const { words } = view
  const tracks = new Map<string, Track>()
  let selection: string | null = null
  let notJudged: string[] = []
  let start: { value: number; i: number } | undefined
  let missing = 0
  const partial = (readings.warnings?.length ?? 0) > 0
  /** The family was declared without a child at every scrape from 0 up to here: a child appearing now rose from zero. */
  let zeroUntil: number | undefined
  const out = (bad?: Bad): Scan => ({
    bad,
    tracks: [...tracks.values()],
    selection,
    notJudged,
    declaredZero: zeroUntil !== undefined && tracks.size === 0,
  })
  for (const [i, r] of readings.scrapes.entries()) {
    // The page's own name of the meter: an earlier version's, where it carries only that (said by the ladder).
    const meterName = r.meterAs ?? view.meterName
    const bad = (verdict: Bad['verdict'], said: { observed: string; next: string }, restart = false, chosen?: Track) =>
      out({ verdict, ...said, where: r.where, restart, ...(chosen ? { chosen } : {}) })
    // First: whose page this is. What another engine's page says proves nothing about this one.
    const other = unbound(view.engine, r, words.scrape(i, r), view.listenerBinds)
    if (other)
      return 'said' in other
        ? bad(other.said.verdict, other.said)
        : out({ verdict: 'inconclusive', observed: '', next: '', where: r.where, restart: false, after: other.after })
    if (r.refused) return bad('failed', words.refused(r.refused))
    if (r.meter.length === 0) {
      // An answer that may lack series (a partial response) proves no absence: the scrape says nothing of the meter.
      if (partial) continue
      const gone = [...tracks.values()][0]
      if (gone) return bad('failed', words.vanished(gone.name, i, gone.points), true, gone)
      if (r.declared !== undefined && (zeroUntil === i - 1 || i === 0)) {
        if (!isCounterType(r.declared, meterName)) return bad('failed', words.notCounter(r.declared))
        zeroUntil = i
        continue
      }
      zeroUntil = undefined
      missing++
      if (readings.counted && missing >= readings.absentAfter) return bad('failed', words.absent(r, missing))
      continue
    }
    if (r.meterType !== undefined && !isCounterType(r.meterType, meterName)) return bad('failed', words.notCounter(r.meterType))
    if (r.duplicates.length > 0) return bad('failed', words.duplicate(r.duplicates))
    const chosen = select(r.meter, view.model, meterName, (models) => words.otherModelOnly(models, view.model))
    if ('problem' in chosen) return bad(chosen.problem, chosen)
    selection = chosen.how
    notJudged = chosen.notJudged.map((s) => seriesName(meterName, s.labels))
    const odd = chosen.judged.find((s) => !Number.isFinite(s.value) || s.value < 0)
    if (odd) return bad('failed', words.odd(seriesName(meterName, odd.labels), odd, r))
    if (r.processStart !== undefined) {
      if (start && r.processStart !== start.value) {
        return bad(
          'failed',
          {
            observed: `the engine restarted during the proof: process_start_time_seconds went from ${start.value} to ${r.processStart} between ${words.scrape(start.i, readings.scrapes[start.i]!)} and ${words.scrape(i, r)}`,
            next: RESTART_NEXT,
          },
          true,
        )
      }
      start ??= { value: r.processStart, i }
    }
    const present = new Set<string>()
    for (const s of chosen.judged) {
      const key = seriesKey(s.labels)
      present.add(key)
      let t = tracks.get(key)
      if (!t) {
        t = { key, labels: s.labels, name: seriesName(meterName, s.labels), from: i, points: [] }
        // The first child of a family declared without one since the first scrape: it stood at zero until now.
        if (zeroUntil === i - 1)
          Object.assign(t, { from: 0, points: [{ i: 0, at: readings.scrapes[0]!.at, value: 0, raw: DECLARED_ZERO }] })
        tracks.set(key, t)
      }
      const before = t.points.at(-1)
      t.points.push({ i, at: r.at, value: s.value, raw: s.raw })
      if (before && s.value < before.value) return bad('failed', { observed: words.reset(t.name, t.points), next: RESTART_NEXT }, true, t)
    }
    if (!partial)
      for (const t of tracks.values()) if (!present.has(t.key)) return bad('failed', words.vanished(t.name, i, t.points), true, t)
    zeroUntil = undefined
  }
  return out()
}
