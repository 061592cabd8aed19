// One effect judged, given its seams: the arm's time settled (the engine's restart just before a
// report's proof), the windows planned, the baseline chosen (like hours: a week before when
// Prometheus holds it, else a day before), every family read, every metric judged.
// Prometheus' answers in, the result out; nothing here writes a file.
import pkg from '../../package.json' with { type: 'json' }
import type { Clock } from '../seams/clock.ts'
import type { HttpClient } from '../seams/http.ts'
import { renderMatchers, type LabelMatcher } from '../prom/query.ts'
import type { Arm } from './arm.ts'
import { lastRestart } from './coverage.ts'
import { ALWAYS_REQUIRED, evaluateMetric, SCRAPES_PER_CHUNK } from './evaluate.ts'
import { JUDGE_DEFAULTS } from './judge.ts'
import { familiesOf, type Family, type MetricSpec } from './metrics.ts'
import { queryRange, type RangeQuery } from './query.ts'
import { rangeText, readFamilies, selectorOf, slotsQuery, type ReadProgress } from './read.ts'
import { EFFECT_EXIT, overall, type EffectResult } from './result.ts'
import { labelValues } from './series.ts'
import { iso, likeHours, planWindows, windowOf, type BaselineKind, type BaselineOption, type Window, type WindowRole } from './windows.ts'

export interface RunInput {
  arm: Arm
  http: HttpClient
  clock: Clock
  prometheusUrl: string
  matchers: LabelMatcher[]
  specs: MetricSpec[]
  /** The engine profile's name, and the metrics its engine cannot be judged by. */
  engine: EffectResult['engine']
  /** The metric ids --metrics named (null: none named). */
  named: readonly string[] | null
  beforeMs: number
  afterMs: number
  baseline: BaselineOption
  minCount: number
  mode: EffectResult['mode']
  /** The report's path as shown, for the result. */
  reportShown: string | null
  onProgress?: (p: ReadProgress) => void
}

export type RunOutcome = { ok: true; result: EffectResult } | { ok: false; exitCode: number; lines: string[]; queries: number }

/** How far before a report's proof start the engine's restart is looked for. */
export const RESTART_LOOKBACK_MS = 60 * 60_000

function failed(failure: { what: string; where: string; next: string }, operator: boolean, queries: number): RunOutcome {
  return {
    ok: false,
    exitCode: operator ? EFFECT_EXIT.config : EFFECT_EXIT.inconclusive,
    queries,
    lines: [`${failure.what} (${failure.where.slice(0, 300)}); next: ${failure.next}`],
  }
}

/** Whether Prometheus holds the family over the window: every chunk with at least a few samples. */
async function holds(input: RunInput, f: Family, w: Window): Promise<boolean> {
  const series = selectorOf(input.matchers, f, f.kind === 'histogram' ? '_count' : '')
  const q: RangeQuery = {
    expr: `count_over_time(${series}[${rangeText(w.chunkMs)}])`,
    startMs: w.startMs + w.chunkMs,
    endMs: w.endMs,
    stepMs: w.chunkMs,
  }
  const a = await queryRange(input.http, input.prometheusUrl, q)
  // Not answered is not held: the day before is then tried, and read like every other window.
  if (!a.ok) return false
  const per = new Array<number>(w.chunks).fill(0)
  for (const s of a.data)
    for (const p of s.values) {
      const i = Math.round((p.t - w.startMs) / w.chunkMs) - 1
      if (i >= 0 && i < w.chunks) per[i] = Math.max(per[i]!, p.value)
    }
  return per.every((n) => n >= SCRAPES_PER_CHUNK)
}

export async function judgeEffect(input: RunInput): Promise<RunOutcome> {
  const startedMs = input.clock.now()
  const families = familiesOf(input.specs)
  const first = families[0]!
  let queries = 0
  let { atMs } = input.arm
  let from: EffectResult['arm']['from'] = input.arm.from
  if (from === 'report') {
    // The report says when the proof began; the engine came up (with the new value) a little earlier.
    const w = windowOf('before', atMs - RESTART_LOOKBACK_MS, RESTART_LOOKBACK_MS)
    queries++
    const a = await queryRange(input.http, input.prometheusUrl, slotsQuery(input.matchers, first, w))
    if (!a.ok) return failed(a.failure, a.operator, queries)
    const restart = lastRestart(a.data, w)
    if (restart !== null && restart < atMs) {
      atMs = restart
      from = 'restart'
    }
  }
  const armedAt = from === 'armed-at' ? `--armed-at ${iso(atMs)}` : null
  if (armedAt && atMs > startedMs)
    return {
      ok: false,
      exitCode: EFFECT_EXIT.config,
      queries,
      lines: [
        `${armedAt} is in the future (now is ${iso(Math.floor(startedMs / 1000) * 1000)}): the arm cannot have taken effect yet; give --armed-at the time the engine came up with the new value (nothing was judged)`,
      ],
    }
  const report = input.arm.report
  if (armedAt && report && atMs > report.finishedMs)
    return {
      ok: false,
      exitCode: EFFECT_EXIT.config,
      queries,
      lines: [
        `${armedAt} is after the report's own time (its proof finished ${iso(report.finishedMs)}): that report proved an arm already in effect then; give --armed-at the time the engine came up with the new value, at or before the proof`,
      ],
    }
  const planned = planWindows({ armMs: atMs, beforeMs: input.beforeMs, afterMs: input.afterMs, baseline: input.baseline, nowMs: startedMs })
  if ('problem' in planned) return { ok: false, exitCode: EFFECT_EXIT.config, lines: [planned.problem], queries }
  const plan = planned.plan
  let kind: BaselineKind = plan.candidates[0]!
  let why = `--baseline ${input.baseline}`
  if (input.baseline === 'like-hours') {
    const lastWeek = likeHours(plan.after, 'last-week')
    queries++
    const held = await holds(input, first, lastWeek)
    kind = held || !plan.candidates.includes('yesterday') ? 'last-week' : 'yesterday'
    why = held
      ? 'like hours: Prometheus holds the same hours a week before'
      : `like hours: Prometheus does not hold ${first.name} through the same hours a week before (${iso(lastWeek.startMs)} – ${iso(lastWeek.endMs)})${kind === 'yesterday' ? ', so a day before' : ''}`
  }
  const windows: Record<WindowRole, Window> = {
    before: plan.before,
    after: plan.after,
    baseline: kind === 'before' ? plan.before : likeHours(plan.after, kind),
  }
  const read = await readFamilies(
    {
      http: input.http,
      base: input.prometheusUrl,
      matchers: input.matchers,
      ...(input.onProgress ? { onProgress: input.onProgress } : {}),
    },
    families,
    windows,
  )
  queries += read.queries
  if (!read.ok) return failed(read.failure, read.operator, queries)
  // Series are summed across the engine's own (DP ranks, models): another target's, or the same
  // engine scraped by two jobs, would be counted in, or twice.
  for (const [label, what] of [
    ['instance', 'targets'],
    ['job', 'scrape jobs'],
  ] as const) {
    const values = labelValues(read.matrices, label)
    if (values.length > 1) {
      return {
        ok: false,
        exitCode: EFFECT_EXIT.config,
        queries,
        lines: [
          `--prometheus-match ${renderMatchers(input.matchers)} takes the series of ${values.length} ${what} (${label} ${values.slice(0, 5).join(', ')}${values.length > 5 ? ', …' : ''}): another engine's traffic, or this one's counted twice, says nothing about this arm; narrow it to this endpoint, e.g. {${label}="${values[0]}",instance="<host:port>"} as Prometheus labels it`,
        ],
      }
    }
  }
  const metrics = input.specs.map((spec) =>
    evaluateMetric(spec, {
      windows,
      baselineKind: kind,
      armMs: atMs,
      data: read.data,
      selectorOf: (f) => selectorOf(input.matchers, f, f.kind === 'histogram' ? '_bucket' : ''),
      options: { ...JUDGE_DEFAULTS, minCount: input.minCount },
      required: (id) => ALWAYS_REQUIRED.includes(id) || (input.named?.includes(id) ?? false),
    }),
  )
  const { verdict, exitCode } = overall(metrics)
  const out = (w: Window) => ({ from: iso(w.startMs), to: iso(w.endMs), chunkS: w.chunkMs / 1000 })
  const a = input.arm
  return {
    ok: true,
    result: {
      tool: { name: 'armproof', version: pkg.version },
      mode: input.mode,
      arm: {
        svc: a.svc,
        knob: a.knob,
        value: a.value,
        previous: a.previous,
        at: iso(atMs),
        from,
        report: input.reportShown,
        endpoint: a.endpoint,
      },
      prometheus: { url: input.prometheusUrl, selector: renderMatchers(input.matchers) },
      windows: { before: out(windows.before), after: out(windows.after), baseline: { ...out(windows.baseline), kind, why } },
      metrics,
      engine: input.engine,
      verdict,
      exitCode,
      queries,
      startedAt: iso(startedMs),
      finishedAt: iso(input.clock.now()),
    },
  }
}
