// The Prometheus tie for an engine whose series carry no process_start_time_seconds (llama.cpp's
// exporter, vLLM's multiprocess mode): the series Prometheus holds of the target is the pid's when
// its current life was born after the pid started, and its previous life (if any) ended before.
// A life is a run of successful scrapes (`up` == 1) with no failed scrape between two of them, no
// counter going down (a restart's counters restart) and no scrape missing; what ends it is a
// failed scrape (`up` == 0: the port closed, a 503 while loading; Prometheus marks the series
// stale) or a reset. Tied only when all of these hold:
//  - the pid holds the base URL's listening socket (argv's listener tie), and Prometheus' one
//    target under the selector scrapes that host:port (the instance names the endpoint): what
//    the series is of, the pid serves; without it a second process started in the same window
//    (another replica of one deploy) would fit as well;
//  - the current life's first sample F is after the pid's start S, and the last success before it
//    P is before S, each by more than the clock skew bound and the pid's resolution (and F by the
//    second /proc's btime is cut to: the wall-clock start lies up to 1 s after S); between P
//    (or the lookback's first scrape, which must precede S) and F, Prometheus scraped the target
//    at every interval (no hole): the target was seen failing (or reset) across the pid's start;
//  - every sample of the engine's series lies on a successful scrape of that target (no other
//    scrape writes them: honor_labels, a federation).
// A series that ran across S (no break since before it), a break that began after S, a hole, two
// `up` series or two targets, are never tied. The tie's resolution is the scrape interval: the
// life was born between the failed scrape before F and F. Pure.
import type { PromSample } from '../../prom/answer.ts'
import type { ActiveTarget } from '../../prom/targets.ts'
import { scrapeIntervalOf } from './prom-reading.ts'

/** The bound assumed on the clock skew between Prometheus and the engine's host (NTP keeps both within milliseconds). */
export const SKEW_BOUND_S = 1
/**
 * The pid's start as /proc gives it (field 22 / CLK_TCK + btime) is early by up to this much against
 * the wall clock: btime is the boot time cut to a whole second (measured here: 0.86 s early).
 */
export const BTIME_CUT_S = 1
/** How far before the pid's start the tie reads the target's history. */
export const LOOKBACK_BEFORE_S = 300
/** How long after the pid's start the tie still reads the whole history (beyond it, the answer would be too large). */
export const MAX_AGE_S = 6 * 3600
/** Consecutive scrapes further apart than this many intervals leave a hole: not observed. */
export const HOLE_INTERVALS = 2

export interface TieSeries {
  name: string
  labels: Readonly<Record<string, string>>
  samples: readonly PromSample[]
}

export interface TieInput {
  pid: string
  /** The pid's start, seconds since the epoch, and its resolution (1/CLK_TCK). */
  startS: number
  resolutionS: number
  /** The pid holds the base URL's listening socket on the URL's host. */
  listenerTied: boolean
  /** How argv found the pid, in words (for a pid not found by its listener). */
  foundHow: string
  /** The base URL's host:port (the scheme's default port spelled out). */
  endpoint: string
  /** The `up` series under the selector, and the engine's counters under it (meter, traffic). */
  ups: readonly TieSeries[]
  counters: readonly TieSeries[]
  /** Prometheus' active targets whose labels are the `up` series' ones; 'unsupported': the API lists none. */
  targets: readonly ActiveTarget[] | 'unsupported'
  /** Where the history was read from (ms): the pid's start less the lookback. */
  fromMs: number
}

export interface TieEvidence {
  rule: 'series-birth'
  pid: string
  pidStart: string
  scrapeUrl: string
  /** The scrape interval (the series' own median spacing), ms: the tie's resolution. */
  intervalMs: number
  /** The target's scrape interval as Prometheus' targets API says it, ms. */
  targetIntervalMs?: number
  /** The last success before the break, or null: none since the lookback's start. */
  lastBefore: string | null
  /** The break: failed scrapes, or a counter reset. */
  broke: 'failed-scrapes' | 'counter-reset'
  /** The series' life began after this scrape (the last one before its first sample) and at or before `firstSample`. */
  bornAfter: string
  firstSample: string
  skewBoundS: number
}

export type Tie =
  | { tied: true; evidence: TieEvidence; said: string }
  /** `pending`: too few scrapes yet to know the interval; asked again at the next poll (no verdict but inconclusive rests on fewer than two scrapes). */
  | { tied: false; observed: string; next: string; pending?: true }

const iso = (ms: number): string => new Date(ms).toISOString()

const NEXT_HISTORY =
  "let Prometheus keep the target's series across the restart (no scrape missing, the engine's port scraped before it started), or read the engine's own /metrics (without --prometheus-url), or export process_start_time_seconds"

/** The tie of the target's series to the pid, or why not. */
export function seriesTie(x: TieInput): Tie {
  const no = (observed: string, next: string) => ({ tied: false as const, observed, next })
  if (!x.listenerTied)
    return no(
      `pid ${x.pid} was found ${x.foundHow}, not as the holder of the base URL's listening socket: a series born after its start may be another process's started in the same window`,
      'point --base-url at the engine itself on --host, so that the pid holding its port is the one proven; or export process_start_time_seconds',
    )
  if (x.ups.length !== 1)
    return no(
      x.ups.length === 0
        ? 'Prometheus holds no `up` of a target under the selector: no scrape of the endpoint to tie'
        : `${x.ups.length} \`up\` series are under the selector (${x.ups.map((u) => JSON.stringify(u.labels)).join(', ')}): two candidates, neither tied`,
      'narrow --prometheus-match to the one target that scrapes the base URL (its instance, its job)',
    )
  const up = x.ups[0]!
  if (x.targets === 'unsupported')
    return no("Prometheus' API lists no active targets: which host:port the series is scraped from cannot be shown", NEXT_HISTORY)
  const same = x.targets.filter((t) => sameLabels(t.labels, up.labels))
  if (same.length !== 1)
    return no(
      same.length === 0
        ? `no active target of Prometheus carries the labels of the series (${JSON.stringify(up.labels)}): which host:port it is scraped from cannot be shown`
        : `${same.length} active targets carry the series' labels ${JSON.stringify(up.labels)} (${same.map((t) => t.scrapeUrl).join(', ')}): two candidates write one series, neither tied`,
      'give each scrape target labels of its own (the instance of each replica), then run again',
    )
  const target = same[0]!
  const scraped = hostPort(target.scrapeUrl)
  if (scraped !== x.endpoint)
    return no(
      `the target Prometheus scrapes is ${target.scrapeUrl}, not the base URL's ${x.endpoint}: the series is not shown to be the endpoint's`,
      "point --prometheus-match at the target that scrapes the base URL's host:port, or --base-url at the host:port Prometheus scrapes",
    )
  const ups = up.samples
  const interval = scrapeIntervalOf(ups)
  if (interval === null || interval <= 0)
    return { ...no('Prometheus holds fewer than two scrapes of the target: no interval to tie at', NEXT_HISTORY), pending: true }
  const ok = new Set(ups.filter((p) => p.value === 1).map((p) => p.t))
  const stray = x.counters.find((s) => s.samples.some((p) => !ok.has(p.t)))
  if (stray) {
    const p = stray.samples.find((q) => !ok.has(q.t))!
    return no(
      `${stray.name} has a sample at ${iso(p.t)}, when no successful scrape of the target was: another scrape writes series under the selector (honor_labels, a federation), two candidates`,
      "narrow --prometheus-match to the labels only the engine's own target carries, then run again",
    )
  }
  const slack = SKEW_BOUND_S + x.resolutionS / 2
  const startLo = (x.startS - slack) * 1000
  // The wall-clock start lies in [startS, startS + BTIME_CUT_S): /proc's btime is cut to a whole second.
  const startHi = (x.startS + BTIME_CUT_S + slack) * 1000
  const hole = interval * HOLE_INTERVALS
  // The current life: back from the last success while consecutive successes are continuous.
  const successes = ups.flatMap((p, i) => (p.value === 1 ? [i] : []))
  if (successes.length === 0) return no('no scrape of the target has succeeded since the pid started: no series to tie', NEXT_HISTORY)
  const values = x.counters.map((s) => new Map(s.samples.map((p) => [p.t, p.value])))
  const reset = (a: number, b: number) =>
    values.some((m) => {
      const [va, vb] = [m.get(a), m.get(b)]
      return va !== undefined && vb !== undefined && vb < va
    })
  let k = successes.length - 1
  let broke: TieEvidence['broke'] | 'hole' | 'start' = 'start'
  for (; k > 0; k--) {
    const [i, j] = [successes[k - 1]!, successes[k]!]
    if (j - i > 1) {
      broke = 'failed-scrapes'
      break
    }
    if (ups[j]!.t - ups[i]!.t > hole) {
      broke = 'hole'
      break
    }
    if (reset(ups[i]!.t, ups[j]!.t)) {
      broke = 'counter-reset'
      break
    }
  }
  const first = ups[successes[k]!]!
  const before = k > 0 ? ups[successes[k - 1]!]! : undefined
  if (first.t <= startHi)
    return no(
      `the series' current life began at ${iso(first.t)}, not after pid ${x.pid} started (${iso(x.startS * 1000)}, to ${BTIME_CUT_S} s as btime is a whole second, ±${slack.toFixed(2)} s of skew): it ran across the pid's start without a break, so it is not shown to be this process`,
      "a series that existed before the pid started is another process's, or this one's read from before it: run again once the engine was restarted with Prometheus scraping it, or export process_start_time_seconds",
    )
  if (broke === 'hole')
    return no(
      `Prometheus holds no scrape of the target between ${iso(before!.t)} and ${iso(first.t)} (more than ${HOLE_INTERVALS} intervals of ${interval} ms): whether the series ran across that time is not observed`,
      NEXT_HISTORY,
    )
  if (before && before.t >= startLo)
    return no(
      `the series' previous life lasted until ${iso(before.t)}, after pid ${x.pid} started (${iso(x.startS * 1000)}): the break before ${iso(first.t)} is not the pid's start, and which process answers since is not shown`,
      'run again on a settled engine; a series that broke while the pid already ran is not tied by its start',
    )
  // Between the last success before (or the lookback's first scrape) and the first sample: every interval scraped, across the pid's start.
  const span = ups.filter((p) => p.t >= (before?.t ?? -Infinity) && p.t <= first.t)
  const firstSeen = span[0]!
  if (!before && (firstSeen.t > startLo || firstSeen.value === 1)) {
    return no(
      `Prometheus' first scrape of the target since ${iso(x.fromMs)} is at ${iso(firstSeen.t)}${firstSeen.value === 1 ? ', already successful' : ''}, not before pid ${x.pid} started (${iso(x.startS * 1000)}): whether the series ran before the pid started is not observed`,
      NEXT_HISTORY,
    )
  }
  const gap = span.findIndex((p, i) => i > 0 && p.t - span[i - 1]!.t > hole)
  if (gap > 0)
    return no(
      `Prometheus holds no scrape of the target between ${iso(span[gap - 1]!.t)} and ${iso(span[gap]!.t)}, around the pid's start: whether the series ran across it is not observed`,
      NEXT_HISTORY,
    )
  const bornAfter = span.at(-2)!
  const evidence: TieEvidence = {
    rule: 'series-birth',
    pid: x.pid,
    pidStart: iso(x.startS * 1000),
    scrapeUrl: target.scrapeUrl,
    intervalMs: interval,
    ...(target.scrapeIntervalMs !== undefined ? { targetIntervalMs: target.scrapeIntervalMs } : {}),
    lastBefore: before ? iso(before.t) : null,
    broke: broke === 'start' ? 'failed-scrapes' : broke,
    bornAfter: iso(bornAfter.t),
    firstSample: iso(first.t),
    skewBoundS: SKEW_BOUND_S,
  }
  const why = broke === 'counter-reset' ? 'its counters went down (a restart)' : 'its scrapes failed'
  const said = `tied by the series' birth (no process_start_time_seconds): ${target.scrapeUrl}, the base URL's port that pid ${x.pid} listens on, was last scraped successfully ${before ? `at ${iso(before.t)}` : `not at all since ${iso(firstSeen.t)}`}, before the pid started (${iso(x.startS * 1000)}); then ${why}, and its series was born between ${iso(bornAfter.t)} and ${iso(first.t)} (resolution one scrape interval, ${interval} ms; clocks of Prometheus and the host assumed within ${SKEW_BOUND_S} s, the pid's start known to ${BTIME_CUT_S} s as /proc's btime is a whole second)`
  return { tied: true, evidence, said }
}

function sameLabels(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const ka = Object.keys(a)
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k])
}

/** host:port of a URL, the scheme's default port spelled out; '' when not a URL. */
export function hostPort(url: string): string {
  try {
    const u = new URL(url)
    return `${u.hostname}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`
  } catch {
    return ''
  }
}
