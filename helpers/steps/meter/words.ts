// How the meter's ladder (./ladder.ts) says what it found, per source: the same rule reads
// "at scrape 3 of /metrics" on the engine's own page and "in Prometheus" through Prometheus, and
// each next step names the tool that shows it (curl for the page, Prometheus for the TSDB).
// Wording only: no rule is decided here.
import { formatDuration } from '../../config/duration.ts'
import type { MetricType } from '../../prom/types.ts'
import type { SeriesValue } from './reading.ts'
import type { MeterScrape, ReadFailure, Refusal } from './scrape.ts'

type Said = { observed: string; next: string }

/** One point of a judged series: its scrape's index in the readings, time and value. */
export interface Point {
  i: number
  at: number
  value: number
  raw: string
}

export interface MeterWords {
  /** Where the values are held, after a value: '' (the engine's page) or ' in Prometheus'. */
  in: string
  /** The first scrape of the run, as a sentence names it. */
  firstScrape: string
  /** Scrape number `i` (0-based) of the readings. */
  scrape(i: number, s: MeterScrape): string
  refused(r: Refusal): Said
  absent(s: MeterScrape, scrapes: number): Said
  notCounter(type: MetricType | undefined): Said
  duplicate(duplicates: readonly string[]): Said
  otherModelOnly(models: readonly string[], model: string | undefined): Said
  odd(series: string, sample: SeriesValue, s: MeterScrape): Said
  reset(series: string, points: readonly Point[]): string
  vanished(series: string, i: number, points: readonly Point[]): Said
  noneRead(windowMs: number, failures: number, last: ReadFailure | undefined): Said & { where?: string }
  tooFew(scrapes: number, windowMs: number, counted: boolean): Said
  /** Why there is no traffic to judge a flat meter by: no request counter at all. */
  noRequestCounter: string
  noTrafficNext: string
  severalTargets(targets: readonly string[]): Said
}

const RESTART_NEXT =
  'a restarted engine is not the process step argv read: find why it restarted (journalctl, podman ps -a, OOM), then run the proof again on a settled engine'
const like = (s: MeterScrape): string =>
  s.lookalikes.length ? `; a series of the same name exists under another prefix: ${s.lookalikes.join(', ')}` : ''
const PREFIX_HINT = 'the metric prefix (cadence lives under radiance:, latency under vllm:)'

/** What the engine profile knows of the meter: its names in every version it knows. */
export interface KnownNames {
  profile: string
  names: readonly string[]
}

/** The engine's own /metrics page at `url`. */
export function pageWords(url: string, meterName: string, known?: KnownNames): MeterWords {
  const grep = `curl -s ${url} | grep ${meterName}`
  // A name no version the profile knows is on the page: said, with the names the page has under the meter's prefix.
  const unknownBuild = (s: MeterScrape): string => {
    if (!known) return ''
    const has = s.prefixNames ?? []
    const names = known.names.length > 1 ? `${known.names.join(' or ')}` : known.names[0]
    return `; the ${known.profile} profile does not know this build: no name it knows for the meter (${names}) is on the page${has.length ? `, which has ${has.slice(0, 12).join(', ')}${has.length > 12 ? ` and ${has.length - 12} more` : ''}` : ''}`
  }
  return {
    in: '',
    firstScrape: 'the first scrape',
    scrape: (i) => `scrape ${i + 1}`,
    refused: (e) => ({
      observed: `the Prometheus server would refuse this /metrics page whole: line ${e.line} does not parse (${e.message}): ${JSON.stringify(e.text)}${e.count > 1 ? ` (and ${e.count - 1} more malformed line(s))` : ''}`,
      next: `a scrape with one unparsable line is dropped entirely (up = 0), so monitoring never sees ${meterName}: fix the exporter; curl -s ${url} | sed -n '${e.line}p'`,
    }),
    absent: (s) => ({
      observed: `${meterName} is absent from ${s.sampleCount} samples (prefixes seen: ${s.prefixes.join(', ') || 'none'})${like(s)}${unknownBuild(s)}`,
      next: `this build does not export ${meterName}: absent is not zero, so the arm is unproven. Check the image version${like(s) ? ` and ${PREFIX_HINT}` : ''}; curl -s ${url} | grep ${meterName.split(':').pop()}`,
    }),
    notCounter: (type) => ({
      observed: `${meterName} is declared "# TYPE … ${type ?? 'untyped'}", not a counter`,
      next: `only a counter's rise proves the knob acted: this exporter does not export ${meterName} as a counter; report it with the page (curl -s ${url} | grep -B2 ${meterName})`,
    }),
    duplicate: (d) => ({
      observed: `malformed page: the same series appears twice: ${d.slice(0, 3).join('; ')}`,
      next: `Prometheus keeps one of the two and counts an error, so which value monitoring sees is not defined: fix the exporter (two registries or two engines writing one label set); ${grep}`,
    }),
    otherModelOnly: (models, model) => ({
      observed: `${meterName} has no series for the served model "${model}"; the page has it only for ${models.map((m) => `model_name="${m}"`).join(', ')}`,
      next: `another model's counter is not this engine's: check that --base-url reaches the engine serving ${model} (and --model), and that this build labels its meter with model_name`,
    }),
    odd: (series, v) => ({
      observed: `the meter reads ${series} = ${v.raw} (line ${v.line})`,
      next: `a counter is finite and never below zero: the exporter is broken; report it with the /metrics page (${grep})`,
    }),
    reset: (series, ps) => {
      const [a, b] = [ps.at(-2)!, ps.at(-1)!]
      return `counter reset: ${series} read ${a.value} at scrape ${a.i + 1}, then ${b.value} at scrape ${b.i + 1}: a counter only goes down when its process restarts, so the engine restarted during the proof`
    },
    vanished: (series, i, ps) => ({
      observed: `${series} vanished from the page at scrape ${i + 1} after ${ps.length} reading(s): the engine restarted or relabelled its series during the proof`,
      next: `absent is not zero: find why the series went away (restart? ${grep}), then run the proof again`,
    }),
    noneRead: (w, failures, last) => ({
      observed: `no /metrics page could be read in ${formatDuration(w)} (${failures} tries): ${last?.what ?? 'no answer'}`,
      next: `check ${url} is reachable from here, then run again`,
    }),
    tooFew: (n, w) => ({
      observed: `${n} /metrics page(s) in ${formatDuration(w)}: too few to call ${meterName} absent`,
      next: `check ${url} by hand (${grep}), then run again`,
    }),
    noRequestCounter: 'the engine exports no request counter',
    noTrafficNext:
      'a flat meter proves nothing without traffic: run again while the endpoint serves requests, or with a longer --meter-window',
    severalTargets: (t) => ({
      observed: `the page at ${url} carries the series of ${t.length} engines (${t.join(', ')})`,
      next: 'point --base-url at one engine, not at a load balancer in front of several',
    }),
  }
}

/** Prometheus at `url`, asked for `selector`. */
export function promWords(url: string, selector: string, meterName: string): MeterWords {
  const at = (s: MeterScrape): string => new Date(s.at).toISOString()
  return {
    in: ' in Prometheus',
    firstScrape: "Prometheus' first scrape in this run",
    scrape: (_i, s) => `the scrape at ${at(s)}`,
    refused: (e) => ({
      observed: `Prometheus holds a scrape it could not parse: line ${e.line} (${e.message})`,
      next: 'fix the exporter: Prometheus drops a page with one unparsable line whole',
    }),
    absent: (s, n) => ({
      observed: `${meterName} is absent from Prometheus for ${selector} after ${n} successful scrape(s) of the target (prefixes seen: ${s.prefixes.filter(Boolean).join(', ') || 'none'})${like(s)}`,
      next: `absent is not zero, so the arm is unproven: this build does not export ${meterName}${like(s) ? ` (check ${PREFIX_HINT})` : ''}, or Prometheus drops it (metric_relabel_configs); query ${meterName} in Prometheus by hand`,
    }),
    notCounter: (type) => ({
      observed: `Prometheus' metadata for the target types ${meterName} ${type ?? 'unknown'}, not a counter`,
      next: `only a counter's rise proves the knob acted: this exporter does not export ${meterName} as a counter; report it with the engine's /metrics page`,
    }),
    duplicate: (d) => ({
      observed: `the same series twice in one scrape: ${d.slice(0, 3).join('; ')}`,
      next: 'fix the exporter: Prometheus keeps one of the two',
    }),
    otherModelOnly: (models, model) => ({
      observed: `Prometheus holds ${meterName} for this target only for ${models.map((m) => `model_name="${m}"`).join(', ')}, not for the served model "${model}"`,
      next: `another model's counter is not this engine's: check that --base-url and --prometheus-match reach the engine serving ${model}`,
    }),
    odd: (series, v, s) => ({
      observed: `Prometheus holds ${series} = ${v.raw} at ${at(s)}`,
      next: "a counter is finite and never below zero: the exporter is broken; report it with the engine's /metrics page",
    }),
    reset: (series, ps) =>
      `counter reset: Prometheus holds ${series} going down during the proof (${ps
        .map((p) => p.raw)
        .join(' → ')
        .slice(0, 200)}): a counter only goes down when its process restarts`,
    vanished: (series, _i, ps) => ({
      observed: `${series} went stale in Prometheus during the proof (last sample ${ps.at(-1)?.raw ?? '?'}): the engine stopped exporting it, restarted or stopped being scraped`,
      next: 'absent is not zero: check the target in Prometheus (Status → Targets) and the engine, then run the proof again',
    }),
    noneRead: (w, failures, last) => ({
      observed: `Prometheus could not be read in ${formatDuration(w)} (${failures} tries): ${last?.what ?? 'no answer'}`,
      next: last?.next ?? `check ${url} is reachable from here, then run again`,
      ...(last ? { where: last.where } : {}),
    }),
    tooFew: (n, w, counted) => ({
      observed: `Prometheus scraped ${selector} ${n} time(s) in ${formatDuration(w)}: too few to call ${meterName} absent (absent is said only after two scrapes)${counted ? '' : '; no up series matches the selector, so Prometheus does not scrape this target under these labels'}`,
      next: 'check the target in Prometheus (Status → Targets) and --prometheus-match, or give a --meter-window of at least two scrape intervals',
    }),
    noRequestCounter: 'Prometheus holds no request counter for this target',
    noTrafficNext:
      'a flat meter proves nothing without traffic seen by two scrapes: run again with a --meter-window of several scrape intervals while the endpoint serves requests',
    severalTargets: (t) => ({
      observed: `the selector ${selector} takes the series of ${t.length} targets (${t.join(', ')}); another engine's counter proves nothing about this one`,
      next: 'narrow --prometheus-match to this endpoint, e.g. {instance="<host:port>"} as Prometheus labels it',
    }),
  }
}

export { RESTART_NEXT }
