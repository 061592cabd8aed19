// Prometheus' active targets answer (helpers/prom/targets.ts), as Prometheus 2.42 answers
// /api/v1/targets?state=active: labels after relabelling, scrape URL, scrape interval.
import { describe, expect, test } from 'vitest'
import { parseActiveTargets, promDuration } from '../../helpers/prom/targets.ts'

/** One target as Debian's prometheus 2.42 listed it in this project's e2e test (port and times as there; its host name replaced). */
const ANSWER = {
  status: 'success',
  data: {
    activeTargets: [
      {
        discoveredLabels: { __address__: '127.0.0.1:20837', __metrics_path__: '/metrics', __scheme__: 'http', job: 'radiance' },
        labels: { instance: '127.0.0.1:20837', job: 'radiance' },
        scrapePool: 'radiance',
        scrapeUrl: 'http://127.0.0.1:20837/metrics',
        globalUrl: 'http://prom-host:20837/metrics',
        lastError: '',
        lastScrape: '2026-12-02T06:25:10.442596689Z',
        lastScrapeDuration: 0.000946921,
        health: 'up',
        scrapeInterval: '1s',
        scrapeTimeout: '1s',
      },
    ],
    droppedTargets: [],
  },
}

describe('parseActiveTargets', () => {
  test("reads each target's labels, scrape URL and interval", () => {
    const r = parseActiveTargets({ status: 200, body: JSON.stringify(ANSWER) }, 'GET /api/v1/targets')
    expect(r).toEqual({
      ok: true,
      targets: [
        { labels: { instance: '127.0.0.1:20837', job: 'radiance' }, scrapeUrl: 'http://127.0.0.1:20837/metrics', scrapeIntervalMs: 1000 },
      ],
    })
  })

  test('an API without the endpoint (404) is unsupported, not a failure; a target without scrapeUrl is the wrong shape', () => {
    expect(parseActiveTargets({ status: 404, body: '404 page not found' }, 'w')).toEqual({ ok: true, targets: 'unsupported' })
    const bad = structuredClone(ANSWER) as { data: { activeTargets: Array<Record<string, unknown>> } }
    delete bad.data.activeTargets[0]!.scrapeUrl
    expect(parseActiveTargets({ status: 200, body: JSON.stringify(bad) }, 'w')).toMatchObject({ ok: false, failure: { kind: 'bad-shape' } })
  })

  test('promDuration reads Prometheus durations and nothing else', () => {
    expect([promDuration('1m30s'), promDuration('500ms'), promDuration('15s'), promDuration('1h'), promDuration('1.5s')]).toEqual([
      90_000,
      500,
      15_000,
      3_600_000,
      undefined,
    ])
  })
})
