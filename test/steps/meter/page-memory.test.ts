// What a meter reading keeps of its /metrics page (helpers/steps/meter/metrics.ts): its samples'
// labels and tokens as strings of their own, never slices that keep the page alive. A fleet keeps
// each target's baseline until its watch and every page of the watch: with pages of megabytes,
// readings that held their pages would hold them all.
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, test } from 'vitest'
import { loadConfig } from '../../../helpers/config/load.ts'
import { createContext } from '../../../helpers/steps/context.ts'
import { ownCopy, readMetrics, type MetricsReading } from '../../../helpers/steps/meter/metrics.ts'
import type { HttpClient } from '../../../helpers/seams/http.ts'
import type { HostClient } from '../../../helpers/seams/host.ts'
import { realClock } from '../../../helpers/seams/clock.ts'
import { DEMO_ARM } from '../../support/demo-args.ts'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** A vLLM-sized page: the knob's meter and the traffic counters among many other series with long label values. */
function bigPage(tag: number): string {
  const lines = [
    '# TYPE radiance:engine_steps_held_total counter',
    `radiance:engine_steps_held_total{engine="0",model_name="radiance-ref-8b-${tag}-served-model"} ${tag}`,
  ]
  lines.push(
    '# TYPE vllm:request_success_total counter',
    `vllm:request_success_total{engine="0",finished_reason="stop",model_name="radiance-ref-8b-${tag}-served-model"} 3`,
  )
  for (let i = 0; i < 40_000; i++)
    lines.push(`vllm:filler_metric_${i % 50}{engine="${i % 8}",model_name="a-long-model-name-that-fills-the-page-${tag}-${i}"} ${i}.5`)
  return `${lines.join('\n')}\n`
}

describe('a meter reading keeps nothing of its page', () => {
  test('twenty readings of 3 MB pages hold their samples, not their pages', async () => {
    const config = loadConfig({
      argv: [...DEMO_ARM, '--base-url', 'http://engine.test:8000'],
      env: { VERIFY_NO_DOTENV: '1' },
    })
    if (!config.ok) throw new Error('config')
    let tag = 0
    const http: HttpClient = {
      async request(req) {
        return {
          status: 200,
          headers: { 'content-type': 'text/plain; version=0.0.4' },
          body: bigPage(++tag),
          url: req.url,
          redirects: [],
          durationMs: 1,
        }
      },
    }
    const host = {} as HostClient
    const ctx = createContext({ target: config.target, http, host, clock: realClock, choices: { pick: (_n, o) => o[0]! } })
    const pageBytes = bigPage(0).length * 2
    gc()
    const before = process.memoryUsage().heapUsed
    const kept: MetricsReading[] = []
    for (let i = 0; i < 20; i++) kept.push(await readMetrics(ctx, 5000))
    gc()
    const held = process.memoryUsage().heapUsed - before
    expect(kept.map((r) => r.meter[0]!.value)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
    expect(kept[3]!.meter[0]!.labels.model_name).toBe('radiance-ref-8b-4-served-model')
    // Twenty pages held would be twenty times a page's size; the samples are a few KB.
    expect(held).toBeLessThan(2 * pageBytes)
  })

  test('ownCopy is the same text', () => {
    for (const t of ['', 'short', 'a'.repeat(13), 'ünïcødé-\u{1F600}-and-more', '\ud800 lone surrogate kept']) expect(ownCopy(t)).toBe(t)
  })
})
