// Prometheus' active scrape targets (`/api/v1/targets?state=active`), validated: each one's labels
// (after relabelling: what its series carry), the URL it scrapes, and its scrape interval where the
// API says it (2.x since about 2.30). Read by the series tie (helpers/steps/meter/prom-tie.ts): which
// host:port the series under the selector are scraped from. An API without the endpoint (a
// Prometheus-compatible store that does not scrape) answers 404: `unsupported`, no failure.
import { badShape, envelope, type PromFailure } from './answer.ts'
import { LABEL_NAME } from './query.ts'

/** One active scrape target: its labels after relabelling, the URL it scrapes, its interval where the API says it. */
export interface ActiveTarget {
  labels: Readonly<Record<string, string>>
  scrapeUrl: string
  /** ms */
  scrapeIntervalMs?: number
}

const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
  y: 31_536_000_000,
}

/** A Prometheus duration (`1m30s`, `500ms`, `15s`) in ms; undefined for any other text. */
export function promDuration(text: string): number | undefined {
  if (!/^(\d+(ms|s|m|h|d|w|y))+$/.test(text)) return undefined
  let total = 0
  for (const m of text.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)) total += Number(m[1]) * UNIT_MS[m[2]!]!
  return total
}

export function parseActiveTargets(
  res: { status: number; body: string },
  where: string,
): { ok: true; targets: ActiveTarget[] | 'unsupported' } | { ok: false; failure: PromFailure } {
  if (res.status === 404) return { ok: true, targets: 'unsupported' }
  const env = envelope(res, where)
  if (!env.ok) return env
  const active = (env.data as { activeTargets?: unknown } | null)?.activeTargets
  if (!Array.isArray(active)) return badShape('the targets answer has no activeTargets list', where)
  const targets: ActiveTarget[] = []
  for (const [n, t] of (active as unknown[]).entries()) {
    const x = t as { labels?: unknown; scrapeUrl?: unknown; scrapeInterval?: unknown } | null
    const labels = x?.labels
    if (
      !labels ||
      typeof labels !== 'object' ||
      Array.isArray(labels) ||
      !Object.entries(labels).every(([k, v]) => LABEL_NAME.test(k) && typeof v === 'string')
    )
      return badShape(`activeTargets[${n}]: labels is not label name → string`, where)
    if (typeof x.scrapeUrl !== 'string') return badShape(`activeTargets[${n}]: no scrapeUrl`, where)
    const interval = typeof x.scrapeInterval === 'string' ? promDuration(x.scrapeInterval) : undefined
    targets.push({
      labels: labels as Record<string, string>,
      scrapeUrl: x.scrapeUrl,
      ...(interval !== undefined ? { scrapeIntervalMs: interval } : {}),
    })
  }
  return { ok: true, targets }
}
