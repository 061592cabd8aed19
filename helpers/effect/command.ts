// `pnpm effect` / `armproof effect`: what an arm did to latency and cadence, judged later from the
// real traffic in Prometheus. Exit 0 no metric worse, 1 a metric worse, 3 inconclusive, 2 the
// operator's to fix (found before contact, or on it: a name that does not resolve, TLS, 401/403/404,
// a selector that takes several targets), 4 the verdict printed but an output not written.
// Thin, like helpers/cli/verify.ts: argv, env and streams are injectable.
import { readFileSync } from 'node:fs'
import { relative, resolve } from 'node:path'
import pkg from '../../package.json' with { type: 'json' }
import { VERSION_TEXT } from '../config/invocation.ts'
import { colorChoice, paints, underCi } from '../cli/color.ts'
import { userCwd } from '../cli/verify.ts'
import type { OutStream } from '../cli/streams.ts'
import { dotenvProblem, readDotenv } from '../config/load.ts'
import { outputProblem } from '../config/outputs.ts'
import { realClock, type Clock } from '../seams/clock.ts'
import { liveHttp, type HttpClient } from '../seams/http.ts'
import { ReplayMiss } from '../seams/replay.ts'
import { defaultMatch, parseMatch, renderMatchers, type LabelMatcher } from '../prom/query.ts'
import { resolveArm, type Arm } from './arm.ts'
import { parseEffectArgs, type EffectAsk } from './config.ts'
import { askDifferences, readEffectFixtures, recordingHttp, replayHttp, writeEffectFixtures, type JudgedAsk } from './fixtures.ts'
import { selectMetrics } from './metrics.ts'
import { profileOf } from '../profiles/target.ts'
import type { Engine, KnobSpec } from '../profiles/types.ts'
import { effectHelp } from './help.ts'
import { writeOutputs, type OutputPlan } from './outputs.ts'
import { progress } from './progress.ts'
import { EFFECT_EXIT, resultJson } from './result.ts'
import { judgeEffect } from './run.ts'
import { refuseSecondChange, secondChange, secondChangeLines } from './second-change.ts'
import { finalLine, formatTable, headerLines, reasonLines } from './table.ts'
import { vaultPage } from './vault.ts'
import { profileCheck } from '../profiles/verified.ts'

export interface EffectIo {
  rawArgs: readonly string[]
  env: Readonly<Record<string, string | undefined>>
  cwd: string
  out: OutStream
  err: OutStream
  /** How long --vault waits for another writer of the page (default: writeback's). */
  lockWaitMs?: number
}

const refuse = (io: EffectIo, problems: readonly string[]): number => {
  io.err.write(
    `armproof effect: ${problems.length} configuration problem${problems.length === 1 ? '' : 's'}; nothing was contacted.\n${problems.map((p) => `  - ${p}`).join('\n')}\n`,
  )
  return EFFECT_EXIT.config
}

/** What a replay or record run needs that a live one does not. */
interface Prepared {
  arm: Arm
  ask: JudgedAsk
  /** The engine profile that names the series, and the knob's entry in it. */
  engine: Engine
  spec: KnobSpec | undefined
  http: HttpClient
  clock: Clock
  close: () => Promise<void>
  /** --mode record: writes the recording, with the verdict, into this folder. */
  finish?: { folder: string; write: (verdict: string) => void }
  replay?: { leftovers: () => string[]; recordedVerdict: string | null }
}

function judgedAsk(
  ask: EffectAsk,
  arm: Arm,
  prometheusUrl: string,
  matchers: readonly LabelMatcher[],
  metrics: string[],
  reportShown: string | null,
  engineDoc: unknown,
): JudgedAsk {
  return {
    ...(engineDoc !== null ? { engine: engineDoc } : {}),
    named: ask.metrics,
    svc: arm.svc,
    knob: arm.knob,
    value: arm.value,
    previous: arm.previous,
    atMs: arm.atMs,
    from: arm.from,
    report: reportShown,
    endpoint: arm.endpoint,
    prometheusUrl,
    selector: renderMatchers(matchers),
    beforeMs: ask.beforeMs,
    afterMs: ask.afterMs,
    baseline: ask.baseline,
    metrics,
    thresholds: ask.thresholds,
    minCount: ask.minCount,
  }
}

export async function effect(io: EffectIo): Promise<number> {
  try {
    return await runEffect(io)
  } catch (error) {
    // Never exit 1 (a metric worse) or 0 on a failure of armproof's own: like verify's `error`, exit 2.
    io.err.write(
      `armproof effect: failed unexpectedly: ${error instanceof Error ? error.message : String(error)}; nothing was judged; report this with the command line you ran\n`,
    )
    return EFFECT_EXIT.config
  }
}

async function runEffect(io: EffectIo): Promise<number> {
  const here = userCwd(io)
  let dotenv: string | undefined
  try {
    dotenv = readDotenv(io.cwd, io.env)
  } catch (error) {
    return refuse(io, [dotenvProblem(error)])
  }
  const parsed = parseEffectArgs(io.rawArgs, io.env, dotenv, here)
  if (!parsed.ok) {
    if (parsed.help) io.out.write(`${effectHelp()}\n`)
    else if (parsed.version) io.out.write(`${VERSION_TEXT}\n`)
    else return refuse(io, parsed.problems)
    return EFFECT_EXIT.ok
  }
  const ask = parsed.ask
  const shownReport = ask.report === null ? null : relative(here, ask.report) || ask.report
  const prepared = ask.mode === 'replay' ? prepareReplay(ask, here) : await prepareLive(ask, here, shownReport)
  if ('problems' in prepared) return refuse(io, prepared.problems)
  const { arm, ask: asked } = prepared
  const named = asked.named !== undefined ? asked.named : asked.metrics
  const selected = selectMetrics(prepared.engine, arm.knob, prepared.spec, named, asked.thresholds)
  if ('problem' in selected) return refuse(io, [selected.problem])
  let vault: OutputPlan['vault'] = null
  if (ask.vault !== null && arm.report) {
    const found = await vaultPage(ask.vault, ask.page, arm.report, relative(here, ask.vault) || '.')
    if ('problem' in found) return refuse(io, [found.problem])
    vault = { page: found.page, report: arm.report, ...(io.lockWaitMs !== undefined ? { lockWaitMs: io.lockWaitMs } : {}) }
  }
  // The one-flag law: an arm whose record shows a second change is not credited (./second-change.ts).
  const second = await secondChange(arm.report, vault?.page ?? null)
  const live = io.err.isTTY === true && !underCi(io.env)
  // Under --json stdout holds the JSON result alone; every line for a person goes to stderr.
  const lines = ask.json ? io.err : io.out
  const families = new Set(
    selected.specs.flatMap((m) =>
      m.kind === 'histogram'
        ? [m.family.name]
        : [...m.numerator, ...(m.denominator === 'seconds' ? [] : m.denominator)].map((t) => t.family.name),
    ),
  )
  const shown = progress(
    io.err,
    live,
    `judging ${selected.specs.length} metrics of ${arm.svc} from ${families.size} series families in ${ask.mode === 'replay' ? 'the recording' : asked.prometheusUrl} (2 range queries per family and window)`,
  )
  let outcome
  try {
    outcome = await judgeEffect({
      arm: { ...arm, atMs: asked.atMs },
      http: prepared.http,
      clock: prepared.clock,
      prometheusUrl: asked.prometheusUrl,
      matchers: (parseMatch(asked.selector) as { matchers: LabelMatcher[] }).matchers,
      specs: selected.specs,
      engine: { name: prepared.engine.name, notJudged: selected.notJudged, ...unverifiedOf(prepared.engine) },
      named: asked.named ?? null,
      beforeMs: asked.beforeMs,
      afterMs: asked.afterMs,
      baseline: asked.baseline as EffectAsk['baseline'],
      minCount: asked.minCount,
      mode: ask.mode,
      reportShown: asked.report,
      onProgress: (p) => shown.update(p),
    })
  } catch (error) {
    if (!(error instanceof ReplayMiss)) throw error
    shown.done()
    io.err.write(`armproof effect: ${error.message}\n`)
    return EFFECT_EXIT.config
  } finally {
    shown.done()
    await prepared.close()
  }
  if (!outcome.ok) {
    for (const line of outcome.lines) io.err.write(`armproof effect: ${line}\n`)
    return outcome.exitCode
  }
  const result = refuseSecondChange(outcome.result, second)
  const color = paints(colorChoice(ask.color, io.env), lines, io.env)
  for (const line of headerLines(result)) lines.write(`${line}\n`)
  lines.write(`\n${formatTable(result, color)}\n\n`)
  for (const line of [...reasonLines(result), ...secondChangeLines(result)]) lines.write(`${line}\n`)
  const plan: OutputPlan = { out: ask.out, summary: ask.summary, stepSummary: io.env.GITHUB_STEP_SUMMARY || null, vault }
  const record = prepared.finish
  if (record) plan.extra = [{ what: 'the recording', path: record.folder, write: () => record.write(result.verdict) }]
  const { unwritten, said } = await writeOutputs(result, plan)
  if (ask.json) io.out.write(resultJson(result))
  for (const line of said) lines.write(`armproof effect: ${line}\n`)
  const left = prepared.replay?.leftovers() ?? []
  if (left.length)
    io.err.write(
      `armproof effect: the replay left ${left.length} recorded exchange(s) unused (${left.slice(0, 3).join('; ')}): it did not judge the recorded run again; re-record it\n`,
    )
  const recorded = prepared.replay?.recordedVerdict
  const mismatch = recorded !== undefined && recorded !== null && recorded !== result.verdict
  if (mismatch)
    io.err.write(
      `armproof effect: the replay's verdict (${result.verdict}) differs from the recorded run's (${recorded}): the judgement changed since the recording\n`,
    )
  for (const line of unwritten) io.err.write(`armproof effect: ${line}\n`)
  lines.write(`\n${finalLine(result)}\n`)
  if (unwritten.length) return EFFECT_EXIT.unwritten
  if (left.length) return EFFECT_EXIT.config
  if (mismatch) return EFFECT_EXIT.inconclusive
  return result.exitCode
}

async function prepareLive(ask: EffectAsk, here: string, shownReport: string | null): Promise<Prepared | { problems: string[] }> {
  const resolved = await resolveArm(ask, shownReport, new Date())
  if ('problems' in resolved) return resolved
  const arm = resolved.arm
  const problems: string[] = []
  if (arm.prometheusUrl === null)
    problems.push(
      "--prometheus-url (or EFFECT_PROMETHEUS_URL) is required: the report's meter was not read through Prometheus, so it names none",
    )
  let matchers: LabelMatcher[] = []
  if (ask.match !== null) matchers = (parseMatch(ask.match) as { matchers: LabelMatcher[] }).matchers
  else if (arm.endpoint !== null) matchers = defaultMatch(arm.endpoint)
  else
    problems.push(
      "--prometheus-match or --base-url is needed: nothing else says which series are this engine's (e.g. --prometheus-match '{instance=\"gpu-7:8000\"}')",
    )
  const fixtures = ask.fixtures ?? resolve(here, 'fixtures', arm.svc, arm.knob, 'effect')
  if (ask.mode === 'record' && ask.fixtures === null) {
    const why = outputProblem({ option: '--fixtures', path: fixtures, kind: 'folder' }, here)
    if (why) problems.push(why)
  }
  // The engine profile: the report's own (the one its run read the engine by), else --engine's.
  let engine = ask.profile.engine
  let spec = ask.knobSpec ?? undefined
  let engineDoc: unknown = ask.profile.doc
  if (arm.report) {
    const target = arm.report.report.run?.target
    const carried = profileOf({ ...(target ?? {}), knob: arm.knob })
    if (!carried) problems.push(`--report: its knob ${arm.knob} is in no engine profile this armproof reads`)
    else {
      if (ask.engine !== null && carried.engine.name !== ask.profile.engine.name)
        problems.push(
          `--engine ${ask.engine}: the report's run read the engine as ${carried.engine.name}; leave --engine out (the report's profile names the series), or pass that arm's own report`,
        )
      engine = carried.engine
      spec = carried.spec
      engineDoc = target?.engine ?? null
    }
  }
  if (problems.length) return { problems }
  const selected = selectMetrics(engine, arm.knob, spec, ask.metrics, ask.thresholds)
  const metrics = 'specs' in selected ? selected.specs.map((m) => m.id) : (ask.metrics ?? [])
  const judged = judgedAsk(ask, arm, arm.prometheusUrl!, matchers, metrics, shownReport, engineDoc)
  const wire = liveHttp(ask.caFile ? { caPem: readFileSync(ask.caFile, 'utf8') } : {})
  if (ask.mode !== 'record') return { arm, ask: judged, engine, spec, http: wire, clock: realClock, close: () => wire.close() }
  const rec = recordingHttp(wire, realClock)
  return {
    arm,
    ask: judged,
    engine,
    spec,
    http: rec.http,
    clock: rec.clock,
    close: () => wire.close(),
    finish: {
      folder: fixtures,
      write: (verdict) =>
        writeEffectFixtures(
          fixtures,
          {
            ask: judged,
            recordedAt: new Date(rec.recording.startedAtMs).toISOString(),
            tool: { name: pkg.name, version: pkg.version },
            startedAtMs: rec.recording.startedAtMs,
            clock: rec.recording.clock,
            verdict,
          },
          rec.recording.http,
        ),
    },
  }
}

function prepareReplay(ask: EffectAsk, here: string): Prepared | { problems: string[] } {
  const folder = ask.fixtures ?? (ask.svc !== null && ask.knob !== null ? resolve(here, 'fixtures', ask.svc, ask.knob, 'effect') : null)
  if (folder === null)
    return { problems: ['--mode replay needs --fixtures, or --svc and --knob for the default fixtures/<svc>/<knob>/effect'] }
  if (ask.vault !== null)
    return { problems: ['--vault with --mode replay: a replay judges a recording again; write the vault from the live run'] }
  const read = readEffectFixtures(folder)
  if ('problem' in read) return { problems: [read.problem] }
  const r = read.meta.ask
  const given: Partial<JudgedAsk> = {
    svc: ask.svc ?? undefined,
    knob: ask.knob ?? undefined,
    atMs: ask.armedAtMs ?? undefined,
    ...(ask.metrics ? { metrics: ask.metrics } : {}),
    ...(Object.keys(ask.thresholds).length ? { thresholds: { ...r.thresholds, ...ask.thresholds } } : {}),
    ...(ask.prometheusUrl ? { prometheusUrl: ask.prometheusUrl } : {}),
  }
  const differs = askDifferences(r, given)
  if (differs.length) return { problems: differs }
  const carried = profileOf({ engine: r.engine, knob: r.knob })
  if (!carried) return { problems: [`${folder}: the recording's knob ${r.knob} is in no engine profile it carries; re-record it`] }
  if (ask.engine !== null && carried.engine.name !== ask.profile.engine.name)
    return { problems: [`--engine ${ask.engine}: the recording was judged as ${carried.engine.name}; leave --engine out`] }
  const seams = replayHttp(read, folder)
  const arm: Arm = {
    svc: r.svc,
    knob: r.knob as Arm['knob'],
    value: r.value,
    previous: r.previous,
    atMs: r.atMs,
    from: r.from === 'armed-at' ? 'armed-at' : 'report',
    report: null,
    endpoint: r.endpoint,
    prometheusUrl: r.prometheusUrl,
  }
  return {
    arm,
    ask: r,
    engine: carried.engine,
    spec: carried.spec,
    http: seams.http,
    clock: seams.clock,
    close: async () => {},
    replay: { leftovers: seams.leftovers, recordedVerdict: read.meta.verdict },
  }
}

/** The profile's own word where no real build backs its names, said with the result. */
function unverifiedOf(engine: Engine): { unverified?: string } {
  const check = profileCheck(engine)
  return check.unverified !== undefined ? { unverified: check.unverified } : {}
}
