// What tests read from the Prometheus source's raw answers (helpers/steps/meter/prometheus-source.ts),
// kept out of the product because only tests ask it: whether the meter is present, stale, absent
// or pending in one reading, the resets and rise of a series' raw samples as Prometheus counts
// them, and the scrape interval from Prometheus' own config dump. The product's rules are the
// meter's ladder's (helpers/steps/meter/ladder.ts); these say what a reading holds.
import { promDuration } from '../../helpers/prom/targets.ts'
import type { PromReading, SeriesReading } from '../../helpers/steps/meter/prom-reading.ts'
import type { PromSample } from '../../helpers/prom/answer.ts'

/**
 * present: a sample in the latest successful scrape; unobserved: the latest scrape failed (up ==
 * 0); stale: samples in the window, none in the latest successful scrape; absent: ≥ 2 successful
 * scrapes and none; pending: too few scrapes to say. From the raw samples and `up`, never from an
 * instant query (which sees only what lies within the server's lookback delta).
 */
export type Presence = 'present' | 'unobserved' | 'stale' | 'absent' | 'pending'

/** The last raw sample of a series. */
export const latest = (s: SeriesReading): PromSample | undefined => s.samples.at(-1)

/**
 * The meter under its own name in one reading, for the served model's series when the model is
 * known. Without `up` in the selector, the latest sample time stands for the latest scrape, and
 * time (`scrapeIntervalMs`) for scrapes, only once the selector matches something.
 */
export function presence(
  r: PromReading,
  window: { sinceMs: number; nowMs: number; scrapeIntervalMs?: number } = { sinceMs: 0, nowMs: 0 },
): Presence {
  const meters = r.series.filter((s) => s.role === 'meter' && s.servedModel !== false)
  const ups = r.series.filter((s) => s.role === 'up').flatMap((s) => s.samples)
  const lastUp = ups.reduce<PromSample | undefined>((m, p) => (m === undefined || p.t > m.t ? p : m), undefined)
  if (meters.some((s) => s.samples.length)) {
    if (lastUp && lastUp.value !== 1) return 'unobserved'
    const lastScrape = lastUp?.t ?? Math.max(...r.series.flatMap((s) => s.samples.map((p) => p.t)))
    return meters.some((s) => s.samples.some((p) => p.t === lastScrape)) ? 'present' : 'stale'
  }
  const { sinceMs, nowMs, scrapeIntervalMs } = window
  if (r.scrapes ? r.scrapes.up >= 2 : r.series.length > 0 && scrapeIntervalMs !== undefined && nowMs - sinceMs >= 2 * scrapeIntervalMs)
    return 'absent'
  return 'pending'
}

/** Resets and the rise across raw samples, as Prometheus counts them (a drop restarts from zero). */
export function counterWalk(samples: readonly PromSample[]): { resets: number; increase: number } {
  let resets = 0
  let increase = 0
  for (let k = 1; k < samples.length; k++) {
    const a = samples[k - 1]!.value
    const b = samples[k]!.value
    if (!Number.isFinite(a) || !Number.isFinite(b)) increase = NaN
    else if (b < a) {
      resets++
      increase += b
    } else increase += b - a
  }
  return { resets, increase }
}

/** A series' resets and rise over its raw samples. */
export const walk = (s: SeriesReading): { resets: number; increase: number } => counterWalk(s.samples)

/** Resets seen on the served model's meter series of one reading. */
export const meterResets = (r: PromReading): number =>
  r.series.filter((s) => s.role === 'meter' && s.servedModel !== false).reduce((n, s) => n + walk(s).resets, 0)

/** A Prometheus duration (`1s`, `1m30s`, `250ms`, `1h`) in ms; undefined when not one: the product's own reader. */
export const parsePromDuration = promDuration

/**
 * The scrape interval of `job` (or the global one) from the YAML that /api/v1/status/config
 * returns: Prometheus writes it normalised, every job with its own `scrape_interval:`.
 */
export function scrapeIntervalFromConfig(yaml: string, job?: string): number | undefined {
  const lines = yaml.split('\n')
  let global: number | undefined
  let current: string | undefined
  let section = ''
  for (const line of lines) {
    const top = /^([A-Za-z_][^:]*):/.exec(line)
    if (top) {
      section = top[1]!
      current = undefined
      continue
    }
    const jobLine = /^- job_name: (.*)$/.exec(line) ?? /^ {2}- job_name: (.*)$/.exec(line)
    if (section === 'scrape_configs' && jobLine) {
      current = jobLine[1]!.replace(/^["']|["']$/g, '')
      continue
    }
    const iv = /^ {2}(?: {2})?scrape_interval: (\S+)$/.exec(line)
    if (!iv) continue
    if (section === 'global') global = parsePromDuration(iv[1]!)
    else if (section === 'scrape_configs' && job !== undefined && current === job) return parsePromDuration(iv[1]!)
  }
  return global
}
