// The meter's one ladder: readings in, judgement out, whichever source read them (the engine's
// /metrics, or Prometheus). The served engine's own series of the knob's counter proves the arm
// in one of two ways, said apart: it rose during this run's traffic, or it was already above zero
// at the first scrape of the very process that step `argv` read (it moved before this run). Where
// the expected value turns the knob's feature off (its `off` list; without one, its default: a
// rollback of radiance's knobs), it stayed at zero while traffic flowed; anywhere else, the default
// included (vLLM turns prefix caching on by default), it moves. Counter
// semantics are Prometheus': finite and never below zero, declared a counter, one series once per
// page, and a value below an earlier one is a reset (a restart): red. A page the Prometheus server
// would refuse whole is red. Absent is not zero; no traffic in the window is inconclusive, not red.
// Pure: no I/O, no clock. Where a conclusion depends on whether the process argv read still runs,
// it asks for that check (`recheck`) and is asked again with its answer.
import { formatDuration } from '../../config/duration.ts'
import type { ProcessCheck } from '../_engine.ts'
import type { MeterReadings, MeterScrape } from './scrape.ts'
import { DECLARED_ZERO, scan, type Found, type LadderView, type Track } from './scan.ts'

export type { Found, LadderView, Track } from './scan.ts'

export type Decision =
  /** Nothing decided yet: watch on. */
  | { kind: 'watch'; latest?: number; traffic?: number }
  /** The conclusion depends on whether the process argv read still runs: check it, then ask again. */
  | { kind: 'recheck' }
  | { kind: 'judged'; verdict: 'passed' | 'failed' | 'inconclusive'; observed: string; next?: string; where: string; found?: Found }

/** Requests (or tokens) that reached the served model between two scrapes; undefined without any traffic counter. */
export function trafficBetween(first: MeterScrape, last: MeterScrape): number | undefined {
  const delta = (k: keyof MeterScrape['traffic']) =>
    first.traffic[k] === undefined || last.traffic[k] === undefined ? undefined : last.traffic[k]! - first.traffic[k]!
  const requests = delta('requests')
  const prompt = delta('prompt')
  const generated = delta('generation')
  if (requests === undefined && prompt === undefined && generated === undefined) return undefined
  return Math.max(requests ?? 0, (prompt ?? 0) + (generated ?? 0) > 0 ? 1 : 0)
}

const restartText = (p: ProcessCheck): string =>
  p.state === 'changed' || p.state === 'unknown'
    ? ` (${p.detail})`
    : p.state === 'same'
      ? ` (${p.detail}: the engine core restarted inside it, or the exporter reset its counters)`
      : ''

/**
 * The judgement of the readings so far. `final`: the window is over. `process`: the re-check of
 * the process argv read, once a conclusion asked for it (`recheck`). A page that carries the meter
 * only under an earlier version's name is read through it, and every judgement says so.
 */
export function decide(view: LadderView, readings: MeterReadings, at: { final: boolean; process?: ProcessCheck }): Decision {
  const d = decideOnce(view, readings, at)
  const used = readings.scrapes.find((s) => s.meterAs !== undefined)?.meterAs
  if (d.kind !== 'judged' || used === undefined || !view.renamed) return d
  return { ...d, observed: `${d.observed}; ${view.renamed(used)}` }
}

function decideOnce(view: LadderView, readings: MeterReadings, at: { final: boolean; process?: ProcessCheck }): Decision {
  const { words, shown: name, value } = view
  const process = at.process
  const RECHECK: Decision = { kind: 'recheck' }
  const last = readings.scrapes.at(-1)
  const whereNow = last?.where ?? readings.lastFailure?.where ?? view.where
  const judged = (
    verdict: 'passed' | 'failed' | 'inconclusive',
    observed: string,
    next: string | undefined,
    found?: Found,
    where = whereNow,
  ): Decision => ({ kind: 'judged', verdict, observed, ...(next !== undefined ? { next } : {}), where, ...(found ? { found } : {}) })
  const halted = readings.halted
  if (halted) return judged(halted.blame === 'engine' ? 'failed' : 'inconclusive', halted.what, halted.next, undefined, halted.where)
  if (readings.targets && readings.targets.length > 1) {
    const said = words.severalTargets(readings.targets)
    return judged('inconclusive', said.observed, said.next)
  }
  const s = scan(view, readings)
  // An answer that may lack series (a partial response) proves no absence: what it lacks is not judged (scan), what it shows is.
  const partial = readings.warnings && readings.warnings.length > 0 ? readings.warnings : undefined
  if (s.bad) {
    if (s.bad.after) {
      if (!process) return RECHECK
      const said = s.bad.after(process)
      return judged(said.verdict, said.observed, said.next, undefined, s.bad.where)
    }
    if (s.bad.restart && !process) return RECHECK
    const found: Found | undefined = s.tracks.length
      ? { tracks: s.tracks, selection: s.selection, notJudged: s.notJudged, ...(s.bad.chosen ? { chosen: s.bad.chosen } : {}) }
      : undefined
    return judged(s.bad.verdict, `${s.bad.observed}${s.bad.restart && process ? restartText(process) : ''}`, s.bad.next, found, s.bad.where)
  }
  const scrapes = readings.scrapes
  const found: Found = { tracks: s.tracks, selection: s.selection, notJudged: s.notJudged }
  const first = (t: Track) => t.points[0]!
  const rose = s.tracks.find((t) => t.points.some((p) => p.value > first(t).value))
  const above = s.tracks.find((t) => t.from === 0 && first(t).value > 0)
  const nonzero = s.tracks.find((t) => t.points.some((p) => p.value > 0))
  // Said whenever more than one series was judged, or the page did not name the served model.
  const others = s.tracks.length > 1 || !(s.selection ?? '').startsWith('judged the served') ? `; ${s.selection}` : ''
  const fromTo = (t: Track) => `${first(t).value} → ${t.points.at(-1)!.value}`
  if (view.still && (rose || nonzero)) {
    const t = (rose ?? nonzero)!
    const didNotTake = view.stillWhy.startsWith('at its default') ? 'the rollback did not take' : `${value} did not take`
    return judged(
      'failed',
      `${t.name} read ${fromTo(t)}${words.in}, not 0, although ${view.env} is ${view.stillWhy}`,
      `the knob still acts: ${didNotTake} (check argv and the ledger), or the engine was not restarted; redeploy --service ${view.svc}`,
      { ...found, chosen: t },
    )
  }
  if (!view.still && rose) {
    if (!process) return RECHECK
    const moved = rose.points.find((p) => p.value > first(rose).value)!
    if (process.state === 'changed') {
      return judged(
        'failed',
        `${rose.name} rose (${fromTo(rose)}), but the engine restarted during the proof: ${process.detail}`,
        'the counter that rose is not proven to be the process step argv read: find why the engine restarted, then run the proof again on a settled engine',
        { ...found, chosen: rose },
        process.where ?? whereNow,
      )
    }
    const proc = process.state === 'same' ? `; ${process.detail}` : `; the process was not re-checked: ${process.detail}`
    return judged(
      'passed',
      `${rose.name} ${fromTo(rose)}${words.in}: rose during this run's traffic${view.traffic ? ` (${view.traffic})` : ''}, moved after ${formatDuration(Math.max(0, moved.at - view.sinceMs))}${proc}${others}`,
      undefined,
      { ...found, chosen: rose, proof: 'rose' },
    )
  }
  if (partial) {
    if (!at.final) return { kind: 'watch', ...(s.tracks[0] ? { latest: s.tracks[0].points.at(-1)!.value } : {}) }
    return judged(
      'inconclusive',
      `${view.words.in ? 'Prometheus' : 'the source'} answered with warnings (${partial.join('; ').slice(0, 300)}): an answer that may lack series proves no absence, and no rise of ${name} showed in it`,
      "a partial answer cannot show that a counter stayed flat or that a series is gone: fix what the warning names (a remote read or store Prometheus could not reach), or read the engine's own /metrics (without --prometheus-url), then run again",
      found,
    )
  }
  if (!view.still && above && scrapes.length >= 2 && readings.counted) {
    // Above zero before this run and flat since: proof only from the very process argv read.
    if (!process) return RECHECK
    const v = first(above).value
    if (process.state === 'changed') {
      return judged(
        'failed',
        `${above.name} read ${v}, but the engine restarted during the proof: ${process.detail}`,
        'a counter of another process proves nothing about the one step argv read: find why the engine restarted, then run the proof again on a settled engine',
        { ...found, chosen: above },
        process.where ?? whereNow,
      )
    }
    if (process.state === 'same' && process.argvHeld) {
      const when = view.baseline
        ? 'it moved before this run'
        : "it moved before that scrape (taken after the probes' traffic, as no earlier one could be read)"
      return judged(
        'passed',
        `${above.name} was already ${v} at ${words.firstScrape} of pid ${process.argvPid}, the process whose argv carries ${view.flag} ${value}: ${when} (it read ${above.points.at(-1)!.value} at the last scrape)${others}`,
        undefined,
        { ...found, chosen: above, proof: 'before-run' },
      )
    }
    const why = process.state === 'same' ? `step argv did not hold for pid ${process.argvPid}` : process.detail
    return judged(
      'inconclusive',
      `${above.name} was already ${v} at ${words.firstScrape} and did not rise during this run, and it cannot be tied to a process that carries ${view.flag} ${value}: ${why}`,
      'a counter that moved before this run proves the arm only for the process argv read: fix what step argv reports, or run again while traffic flows so the counter rises during the run',
      { ...found, chosen: above },
      process.where ?? whereNow,
    )
  }
  if (!at.final) {
    const traffic = scrapes.length > 0 ? trafficBetween(scrapes[0]!, scrapes.at(-1)!) : undefined
    return {
      kind: 'watch',
      ...(s.tracks[0] ? { latest: s.tracks[0].points.at(-1)!.value } : {}),
      ...(traffic !== undefined ? { traffic } : {}),
    }
  }
  return concludeWindow(view, readings, found, s.declaredZero, process)
}

/** The window is over and nothing concluded before: flat, late, too few, or no traffic. */
function concludeWindow(
  view: LadderView,
  readings: MeterReadings,
  found: Found,
  declaredZero: boolean,
  process: ProcessCheck | undefined,
): Decision {
  const { words, shown: name } = view
  const scrapes = readings.scrapes
  const whereNow = scrapes.at(-1)?.where ?? readings.lastFailure?.where ?? view.where
  const judged = (
    verdict: 'passed' | 'failed' | 'inconclusive',
    observed: string,
    next: string | undefined,
    f: Found | undefined = found,
    where = whereNow,
  ): Decision => ({ kind: 'judged', verdict, observed, ...(next !== undefined ? { next } : {}), where, ...(f ? { found: f } : {}) })
  const window = formatDuration(view.windowMs)
  if (readings.reads === 0) {
    const said = words.noneRead(view.windowMs, readings.failures, readings.lastFailure)
    return judged('inconclusive', said.observed, said.next, undefined, said.where ?? whereNow)
  }
  // Scrapes Prometheus lost (up == 0) were not observed: said, never read as an absence.
  const lost = readings.unobserved ? `; ${readings.unobserved} scrape(s) of the target in the window failed (up == 0): not observed` : ''
  if (found.tracks.length === 0 && !declaredZero) {
    const said = words.tooFew(scrapes.length, view.windowMs, readings.counted)
    return judged('inconclusive', `${said.observed}${lost}`, said.next, undefined)
  }
  if (declaredZero) {
    // No child yet: the family stood at zero at every scrape, and the evidence says so.
    const zero: Track = {
      key: '',
      labels: {},
      name: `${view.meterName} (declared, no sample yet)`,
      from: 0,
      points: scrapes.map((r, i) => ({ i, at: r.at, value: 0, raw: DECLARED_ZERO })),
    }
    found = {
      ...found,
      tracks: [zero],
      chosen: zero,
      selection: `the page declares ${view.meterName} a counter and has no child of it yet`,
    }
  }
  const judgedText = declaredZero
    ? ` (${view.meterName} is declared a counter and carries no sample yet: zero so far, as prometheus_client prints a labelled counter's child only after its first inc())`
    : found.tracks.length > 1 || found.notJudged.length > 0 || !(found.selection ?? '').startsWith('judged the served')
      ? ` (${found.selection}${found.notJudged.length ? `; not judged: ${found.notJudged.join(', ')}` : ''})`
      : ''
  const late = found.tracks.find((t) => t.points.some((p) => p.value > 0))
  if (late) {
    // Only a series that appeared after the first scrape can be above zero here without having risen.
    return judged(
      'inconclusive',
      late.from === 0
        ? `${late.name} read ${late.points[0]!.value} at the only scrape of the window: neither a rise nor the process behind it could be established${judgedText}`
        : `${late.name} first appeared at ${words.scrape(late.from, scrapes[late.from]!)} already at ${late.points[0]!.value} and did not rise; it is not the series ${words.firstScrape} saw${judgedText}`,
      'a series that appears mid-run already above zero is neither a rise during this run nor proven to belong to the process step argv read (a restart or relabel?): run again on a settled engine while traffic flows',
    )
  }
  const traffic = trafficBetween(scrapes[0]!, scrapes.at(-1)!)
  if (traffic === undefined || traffic === 0 || scrapes.length < 2 || !readings.counted) {
    const why =
      traffic === undefined
        ? words.noRequestCounter
        : scrapes.length < 2 || !readings.counted
          ? 'fewer than two scrapes fell inside the window'
          : 'no traffic reached the engine'
    return judged('inconclusive', `${name} stayed at 0${words.in}, but ${why} in ${window}${judgedText}${lost}`, words.noTrafficNext)
  }
  const flat = `${name} stayed at 0${words.in} for ${window} while ${traffic} request(s) reached the engine${view.traffic ? `, ${view.traffic}` : ''}${judgedText}`
  // The meter moves only under the knob's own traffic: with part of it unanswered, a flat meter is
  // neither the feature off (green at its off value) nor the engine ignoring the flag (red).
  if (view.trafficShort !== undefined)
    return judged(
      'inconclusive',
      `${flat}: not all of the traffic it moves only under was answered`,
      `the knob's own requests failed (${view.trafficShort}), so a flat ${name} proves nothing either way: check what refused them (rate limit, queue, a proxy's timeout), then run again`,
    )
  // Traffic that could not fill one whole block moves no hit even when the feature is on: a flat meter is neither green nor red.
  if (view.trafficWeak !== undefined)
    return judged(
      'inconclusive',
      `${flat}: ${view.trafficWeak}`,
      `the knob's own traffic could not show the feature either way: serve the model with a context that holds a prompt of two KV blocks (--max-model-len), or send such traffic yourself, then run again`,
    )
  if (view.still) {
    if (!process) return { kind: 'recheck' }
    if (process.state === 'changed') {
      return judged(
        'failed',
        `${flat}, but the engine restarted during the proof: ${process.detail}`,
        'a flat counter of a restarted engine proves nothing about the process step argv read: find why it restarted, then run the proof again',
        found,
        process.where ?? whereNow,
      )
    }
    return judged('passed', `${flat}${process.state === 'same' ? `; ${process.detail}` : ''}`, undefined, {
      ...found,
      proof: 'stayed-at-zero',
    })
  }
  return judged(
    'failed',
    flat,
    view.onByDefault
      ? `${view.env}=${view.value} (its default) turns the feature on, yet its meter did not move${view.traffic ? ` under the traffic it needs (${view.traffic})` : ''}: the engine ignores ${view.flag} or the flag did not reach it (see argv and ledger); find why before promising the feature`
      : `the arm did nothing: the engine ignores ${view.flag} or the flag did not reach it (see argv and ledger). Say so in the vault page; roll back with ${view.env}=${view.rollbackTo} and redeploy --service ${view.svc}`,
  )
}
