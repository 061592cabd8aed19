// One metric judged from the answers read for it: each window's data checked first (absent, gaps,
// broken buckets, chunks too short for the scrape interval, edges that differ between the windows),
// then the judgement of the baseline against the after window. Any doubt is `inconclusive`, with
// what was seen and what to do next; the before window is shown, and judged only when it is the
// baseline.
import { formatDuration } from '../config/duration.ts'
import { coverage, GAP_INTERVALS, type Coverage } from './coverage.ts'
import { judgeHistogram, judgeRatio, type JudgeOptions, type Judgement } from './judge.ts'
import { familiesOf, familyKey, type Family, type MetricSpec, type Term } from './metrics.ts'
import type { Matrix } from './query.ts'
import type { MetricResult, ShiftOut, WindowStats } from './result.ts'
import { counterBlocks, histogramBlocks, type HistogramBlocks } from './series.ts'
import { quantile, total } from './stats.ts'
import { iso, type BaselineKind, type Window, type WindowRole } from './windows.ts'

export interface FamilyData {
  increase: Matrix
  slots: Matrix
}

export interface EvaluateContext {
  windows: Record<WindowRole, Window>
  baselineKind: BaselineKind
  armMs: number
  /** A family's selector as PromQL, for messages. */
  selectorOf: (f: Family) => string
  data: (f: Family, role: WindowRole) => FamilyData
  options: JudgeOptions
  /** Judged even when the engine does not export it: named by --metrics, or TTFT and ITL, which every judgement needs. */
  required: (id: string) => boolean
}

/** The metrics an engine must export to be judged at all, whatever --metrics says. */
export const ALWAYS_REQUIRED: readonly string[] = ['ttft', 'itl']

/** More restarts than this in a window (the arm's own aside) cannot be accounted for. */
export const MAX_RESETS = 2

/** A chunk holds at least this many scrapes, or increase() over it is noise (or nothing at all). */
export const SCRAPES_PER_CHUNK = 4

interface Checked {
  problems: Array<{ reason: string; next: string }>
  notes: string[]
  covs: Coverage[]
}

const clock = (ms: number) => iso(ms).slice(11, 16) + 'Z'
const span = (w: Window) => `${iso(w.startMs)} – ${iso(w.endMs)}`

function check(spec: MetricSpec, role: WindowRole, ctx: EvaluateContext): Checked {
  const w = ctx.windows[role]
  const out: Checked = { problems: [], notes: [], covs: [] }
  const tolerant = role !== 'baseline' || ctx.baselineKind === 'before'
  for (const f of familiesOf([spec])) {
    const d = ctx.data(f, role)
    const name = ctx.selectorOf(f)
    // absent: said once for the metric (evaluateMetric), from both judged windows together
    if (d.increase.length === 0 && d.slots.length === 0) continue
    const cov = coverage(d.slots, w, tolerant ? ctx.armMs : null)
    out.covs.push(cov)
    for (const g of cov.gaps) {
      const text = `no sample of ${name} from ${clock(g.fromMs)} to ${clock(g.toMs)} (${formatDuration(g.toMs - g.fromMs)})`
      if (g.arm)
        out.notes.push(
          `the arm's restart: ${text}${g.reset ? ', the counters came back from zero' : ''}; increase() counts from the first sample after it`,
        )
      else
        out.problems.push({
          reason: `a gap in the ${role} window: ${text}, more than ${GAP_INTERVALS} scrape intervals (${formatDuration(cov.intervalMs ?? 0)}); the window's counts are not whole`,
          next: 'judge windows that Prometheus scraped throughout (move --armed-at, shorten --before/--after), or choose another --baseline',
        })
    }
    if (cov.odd > 0)
      out.problems.push({
        reason: `${cov.odd} sample(s) of ${name} in the ${role} window are not finite (NaN or ±Inf)`,
        next: "a counter is finite: the exporter is broken; report it with the engine's /metrics page",
      })
    if (cov.intervalMs !== null && w.chunkMs < SCRAPES_PER_CHUNK * cov.intervalMs) {
      out.problems.push({
        reason: `the ${role} window's chunks of ${formatDuration(w.chunkMs)} hold fewer than ${SCRAPES_PER_CHUNK} scrapes of ${name} (one every ${formatDuration(cov.intervalMs)}): increase() over them is noise`,
        next: 'pass a longer --before/--after (each window is cut in at least 6 chunks)',
      })
    }
    const resets = cov.restarts
    if (resets > MAX_RESETS)
      out.problems.push({
        reason: `${name} reset ${resets} times in the ${role} window: the engine restarted again and again, and what it counted between its last scrape and each crash is lost`,
        next: 'find why it restarts (journalctl, podman ps -a, the OOM killer); an engine that does not stay up is a finding of its own',
      })
    else if (resets > 0)
      out.notes.push(
        `${resets} restart(s) of the engine in the ${role} window (${name} went down), counted from zero as increase() counts them`,
      )
  }
  return out
}

function histogram(spec: Extract<MetricSpec, { kind: 'histogram' }>, role: WindowRole, ctx: EvaluateContext): HistogramBlocks {
  return histogramBlocks(ctx.data(spec.family, role).increase, ctx.windows[role])
}

function ratioBlocks(
  spec: Extract<MetricSpec, { kind: 'ratio' }>,
  role: WindowRole,
  ctx: EvaluateContext,
): { num: number[]; den: number[]; problems: string[] } {
  const w = ctx.windows[role]
  const problems: string[] = []
  const sum = (terms: readonly Term[]) => {
    const acc = new Array<number>(w.chunks).fill(0)
    for (const t of terms) {
      const c = counterBlocks(ctx.data(t.family, role).increase, w)
      problems.push(...c.problems)
      c.blocks.forEach((v, i) => (acc[i]! += t.sign * v))
    }
    return acc.map((v) => Math.max(0, v))
  }
  const num = sum(spec.numerator)
  const den = spec.denominator === 'seconds' ? new Array<number>(w.chunks).fill(w.chunkMs / 1000) : sum(spec.denominator)
  return { num, den, problems }
}

const resetsOf = (c: Checked) => c.covs.reduce((n, x) => n + x.resets, 0)
const intervalOf = (c: Checked) => ((c.covs[0]?.intervalMs ?? null) === null ? null : c.covs[0]!.intervalMs! / 1000)

function histogramStats(w: Window, hb: HistogramBlocks, c: Checked): WindowStats {
  const counts = hb.blocks.reduce((acc, b) => acc.map((v, k) => v + (b[k] ?? 0)), new Array<number>(hb.edges.length + 1).fill(0))
  const p50 = quantile({ edges: hb.edges, counts }, 0.5)
  const p95 = quantile({ edges: hb.edges, counts }, 0.95)
  const beyond = (
    [
      ['p50', p50],
      ['p95', p95],
    ] as const
  )
    .filter(([, q]) => q?.beyond)
    .map(([n]) => n)
  return {
    from: iso(w.startMs),
    to: iso(w.endMs),
    count: Math.round(total(counts)),
    p50: p50?.value ?? null,
    p95: p95?.value ?? null,
    beyond,
    value: null,
    resets: resetsOf(c),
    intervalS: intervalOf(c),
  }
}

const finite = (x: number): number | null => (Number.isFinite(x) ? x : null)

function shiftOut(j: Judgement): Record<string, ShiftOut> {
  return Object.fromEntries(
    Object.entries(j.shifts).map(([k, s]) => [
      k,
      {
        relative: finite(s.relative),
        fromZero: !Number.isFinite(s.relative),
        absolute: s.absolute,
        low: finite(s.interval.low),
        high: finite(s.interval.high),
        absoluteLow: s.intervalAbsolute.low,
        absoluteHigh: s.intervalAbsolute.high,
        p: s.p,
        df: s.df,
        chunks: s.chunks,
        band: finite(s.band),
        detectable: finite(s.detectable),
        significant: s.significant,
        practical: s.practical,
        state: s.state,
      },
    ]),
  )
}

/** The power said aloud: the smallest shift each statistic could have shown, from how many chunks and observations. */
function powerOf(j: Judgement, stats: Record<WindowRole, WindowStats | null>, chunkMs: number): MetricResult['power'] {
  const shifts = Object.entries(j.shifts)
  if (!shifts.length) return null
  return {
    detectable: Object.fromEntries(shifts.map(([k, s]) => [k, finite(s.detectable)])),
    absolute: Object.fromEntries(shifts.map(([k, s]) => [k, !Number.isFinite(s.band) ? s.detectableAbsolute : null])),
    chunks: Math.min(...shifts.map(([, s]) => s.chunks)),
    chunkS: chunkMs / 1000,
    baseline: stats.baseline?.count ?? 0,
    after: stats.after?.count ?? 0,
  }
}

export function evaluateMetric(spec: MetricSpec, ctx: EvaluateContext): MetricResult {
  const roles: WindowRole[] = ['baseline', 'before', 'after']
  const checked = Object.fromEntries(roles.map((r) => [r, check(spec, r, ctx)])) as Record<WindowRole, Checked>
  const judged: WindowRole[] = ['baseline', 'after']
  const problems = judged.flatMap((r) => checked[r].problems)
  const notes = [...new Set(judged.flatMap((r) => checked[r].notes))]
  const series = familiesOf([spec]).map((f) => ctx.selectorOf(f))
  const present = (r: WindowRole) =>
    familiesOf([spec]).every((f) => {
      const d = ctx.data(f, r)
      return d.increase.length > 0 || d.slots.length > 0
    })
  const base: Omit<
    MetricResult,
    'verdict' | 'reason' | 'next' | 'baseline' | 'before' | 'after' | 'shifts' | 'test' | 'distribution' | 'power'
  > = {
    id: spec.id,
    title: spec.title,
    kind: spec.kind,
    unit: spec.unit,
    direction: spec.direction,
    threshold: spec.threshold,
    floor: spec.floor,
    series,
    notes,
    picture: null,
  }
  const paired = ctx.baselineKind !== 'before'
  // What the engine does not export is not a verdict; what it stopped (or started) exporting at the arm is a change.
  const families = familiesOf([spec])
  const held = (f: Family, r: WindowRole) => {
    const d = ctx.data(f, r)
    return d.increase.length > 0 || d.slots.length > 0
  }
  const inOne = families.filter((f) => held(f, 'baseline') !== held(f, 'after'))
  const inNone = families.filter((f) => !held(f, 'baseline') && !held(f, 'after'))
  if (inOne.length || inNone.length) {
    const f = inOne[0] ?? inNone[0]!
    const name = ctx.selectorOf(f)
    const empty = { baseline: null, before: null, after: null, shifts: {}, test: null, distribution: null, power: null }
    if (inOne.length) {
      const [has, lacks] = held(f, 'baseline') ? ['baseline', 'after'] : ['after', 'baseline']
      return {
        ...base,
        ...empty,
        verdict: 'inconclusive',
        reason: `${name} is present in the ${has} window (${span(ctx.windows[has as WindowRole])}) and absent in the ${lacks} window (${span(ctx.windows[lacks as WindowRole])}): the engine ${has === 'after' ? 'started' : 'stopped'} exporting it, which is a change of its own (another build?), and a series absent is not zero`,
        next:
          has === 'baseline'
            ? 'check that the engine after the arm is the build it was (its /metrics page), and --prometheus-match; compare again with windows of one build'
            : 'the engine before the arm did not export it (an older build?): compare again once a baseline with it exists, or choose another --baseline',
      }
    }
    const required = ctx.required(spec.id)
    return {
      ...base,
      ...empty,
      verdict: required ? 'inconclusive' : 'not exported',
      reason: `not exported by this engine: Prometheus holds no sample of ${name} in the baseline (${span(ctx.windows.baseline)}) or after the arm (${span(ctx.windows.after)})${required ? (ALWAYS_REQUIRED.includes(spec.id) ? `; ${spec.title} is judged on every engine that has it, and absent is not zero` : '; --metrics named it') : ''}`,
      next: required
        ? `check the name and --prometheus-match in Prometheus (latency lives under vllm: or sglang:, cadence under radiance:), and --engine: the profile names the series read${
            spec.kind === 'histogram' && spec.earlier?.length
              ? `; an older build serves it as ${spec.earlier.map((e) => `${e.name}${e.before ? ` (before ${e.before})` : ''}`).join(', ')}, which this judgement does not compare with the new name`
              : ''
          }`
        : null,
    }
  }
  let judgement: Judgement | null = null
  let stats: Record<WindowRole, WindowStats | null>
  let distribution: MetricResult['distribution'] = null
  if (spec.kind === 'histogram') {
    const hb = Object.fromEntries(roles.map((r) => [r, histogram(spec, r, ctx)])) as Record<WindowRole, HistogramBlocks>
    stats = Object.fromEntries(
      roles.map((r) => [r, present(r) && hb[r].les.length ? histogramStats(ctx.windows[r], hb[r], checked[r]) : null]),
    ) as Record<WindowRole, WindowStats | null>
    for (const r of judged)
      for (const p of hb[r].problems)
        problems.push({
          reason: `${series[0]} in the ${r} window: ${p}`,
          next: 'judge windows in which the engine ran one build with one bucket layout',
        })
    const [b, a] = [hb.baseline, hb.after]
    if (problems.length === 0 && b.les.length && a.les.length && b.edges.join(',') !== a.edges.join(',')) {
      problems.push({
        reason: `the bucket edges of ${series[0]} differ between the baseline (le ${b.les.join(', ')}) and the after window (le ${a.les.join(', ')}): quantiles from different buckets are not comparable`,
        next: 'judge an after window against a baseline with the same edges (the engine changed its buckets: a new build or --custom-histogram-buckets); compare again once a baseline with the new edges exists',
      })
    }
    const sum = (h: HistogramBlocks) =>
      h.blocks.reduce((acc, x) => acc.map((v, k) => v + (x[k] ?? 0)), new Array<number>(h.edges.length + 1).fill(0))
    distribution = {
      edges: a.edges.length ? a.edges : b.edges,
      baseline: stats.baseline ? sum(b) : null,
      before: stats.before ? sum(hb.before) : null,
      after: stats.after ? sum(a) : null,
    }
    if (problems.length === 0) judgement = judgeHistogram(spec, b.edges, b.blocks, a.blocks, paired, ctx.options)
  } else {
    const rb = Object.fromEntries(roles.map((r) => [r, ratioBlocks(spec, r, ctx)])) as Record<WindowRole, ReturnType<typeof ratioBlocks>>
    const counted = (r: WindowRole) => total(spec.denominator === 'seconds' ? rb[r].num : rb[r].den)
    stats = Object.fromEntries(
      roles.map((r) => {
        const w = ctx.windows[r]
        const den = total(rb[r].den)
        return [
          r,
          present(r)
            ? {
                from: iso(w.startMs),
                to: iso(w.endMs),
                count: Math.round(counted(r)),
                p50: null,
                p95: null,
                beyond: [],
                value: den > 0 ? total(rb[r].num) / den : null,
                resets: resetsOf(checked[r]),
                intervalS: intervalOf(checked[r]),
              }
            : null,
        ]
      }),
    ) as Record<WindowRole, WindowStats | null>
    for (const r of judged)
      for (const p of new Set(rb[r].problems))
        problems.push({ reason: `${series.join(', ')} in the ${r} window: ${p}`, next: "report it with the engine's /metrics page" })
    const short = (terms: readonly Term[]) => terms.map((t) => t.family.name.replace(/^[a-z]+:|_total$/g, '')).join(' − ')
    const what = short(spec.denominator === 'seconds' ? spec.numerator : spec.denominator)
    if (problems.length === 0)
      judgement = judgeRatio(
        spec,
        rb.baseline,
        rb.after,
        { baseline: counted('baseline'), after: counted('after'), what },
        paired,
        ctx.options,
      )
  }
  if (!judgement) {
    return {
      ...base,
      verdict: 'inconclusive',
      reason: problems[0]!.reason,
      next: problems[0]!.next,
      notes: [...notes, ...problems.slice(1).map((p) => p.reason)],
      baseline: stats.baseline,
      before: stats.before,
      after: stats.after,
      shifts: {},
      test: null,
      distribution,
      power: null,
    }
  }
  const next =
    judgement.next ??
    (judgement.verdict === 'inconclusive'
      ? 'judge longer windows, or windows in busier hours, so each holds enough traffic'
      : judgement.verdict === 'worse'
        ? `the arm made ${spec.title} worse: roll it back (the rollback line of the arm's vault entry) or explain why it is worth it`
        : null)
  const test = judgement.test
  return {
    ...base,
    verdict: judgement.verdict,
    reason: judgement.reason,
    next,
    baseline: stats.baseline,
    before: stats.before,
    after: stats.after,
    shifts: shiftOut(judgement),
    test,
    distribution,
    power: powerOf(judgement, stats, ctx.windows.after.chunkMs),
  }
}

export { familyKey }
