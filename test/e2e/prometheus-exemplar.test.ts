// Issue 20 rule 5 held against the real components: an exemplar on a text/plain; version=0.0.4 page
// (the reference engine's `metrics_exemplar_text`) makes Debian's Prometheus refuse the whole
// scrape (the target goes down with "expected timestamp or new record") and promtool refuse the
// page, just as helpers/prom/parse.ts reports it; the same page without the fault is scraped.
// Needs prometheus and promtool (test/support/prerequisites.ts).
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startEngine, type EngineHandle } from '../../engine/launch.ts'
import { parsePrometheusText } from '../../helpers/prom/parse.ts'
import { check, PROMETHEUS, requires } from '../support/prerequisites.ts'
import { promtool, startPrometheus, type PrometheusHandle } from '../support/prometheus.ts'

const ready = requires(check(PROMETHEUS))
/** How long Prometheus may take to scrape both targets once (it applies new targets on a 5 s tick); not a timing claim. */
const WAIT_MS = 20_000
let prom: PrometheusHandle
let plain: EngineHandle
let exemplar: EngineHandle

const launch = (faults: Array<'metrics_exemplar_text'>): Promise<EngineHandle> =>
  startEngine({
    svc: 'exemplar',
    processName: `rpe-${Math.random().toString(36).slice(2, 8)}`,
    args: ['--prefill-interleave', '1', '--load-closed-ms', '0', '--load-503-ms', '0'],
    faults,
  })

beforeAll(async () => {
  if (!ready) return
  ;[plain, exemplar] = await Promise.all([launch([]), launch(['metrics_exemplar_text'])])
  await Promise.all([plain.waitReady(), exemplar.waitReady()])
  prom = await startPrometheus({ targets: [plain, exemplar].map((e) => new URL(e.baseUrl).host) })
})

afterAll(async () => {
  await Promise.allSettled([prom?.stop(), plain?.stop(), exemplar?.stop()])
})

interface Target {
  scrapeUrl: string
  health: string
  lastError: string
  lastScrape: string
}

/** Both targets once scraped at least once, by scrape URL. */
async function scraped(): Promise<Map<string, Target>> {
  const deadline = Date.now() + WAIT_MS
  for (;;) {
    const { body } = await prom.get('/api/v1/targets')
    const targets = (JSON.parse(body) as { data: { activeTargets: Target[] } }).data.activeTargets
    if (targets.length === 2 && targets.every((t) => !t.lastScrape.startsWith('0001-')))
      return new Map(targets.map((t) => [t.scrapeUrl, t]))
    if (Date.now() > deadline)
      throw new Error(`Prometheus did not scrape both targets within ${WAIT_MS} ms: ${body}\n${prom.log().slice(-2000)}`)
    await new Promise((r) => setTimeout(r, 250))
  }
}

describe('an exemplar on a text-format page, as Prometheus reads it', () => {
  test('Prometheus refuses the whole scrape of that page and scrapes the same page without the exemplar', async () => {
    const targets = await scraped()
    const bad = targets.get(`${exemplar.baseUrl}/metrics`)!
    expect(bad.health, JSON.stringify(bad)).toBe('down')
    expect(bad.lastError).toContain('expected timestamp or new record')
    expect(targets.get(`${plain.baseUrl}/metrics`)!.health).toBe('up')
  })

  test('promtool refuses the page too, and helpers/prom/parse.ts reports the exemplar lines', async () => {
    const res = await fetch(`${exemplar.baseUrl}/metrics`, { signal: AbortSignal.timeout(5000) })
    expect(res.headers.get('content-type')).toContain('version=0.0.4')
    const page = await res.text()
    const r = await promtool(page)
    expect(r.code, r.out).toBe(1)
    expect(r.out).toContain('text format parsing error')
    const parsed = parsePrometheusText(page)
    expect(parsed.errors.length).toBe(4)
    expect(parsed.errors.every((e) => e.message.includes('is OpenMetrics only') && e.text.startsWith('radiance:'))).toBe(true)
  })
})
