// The endpoints an engine describes itself on (helpers/steps/meter/described.ts, read by
// helpers/steps/resolved/endpoints.ts): asked only through the tie step argv made, an endpoint the
// profile does not call optional that answers 200 without the knob's key is inconclusive (never
// skipped as silent), and an info gauge is read from the page the meter's baseline already read.
import { describe, expect, test } from 'vitest'
import { checkDescribed, selfDescription } from '../../../helpers/steps/meter/described.ts'
import type { MetricsReading } from '../../../helpers/steps/meter/reading.ts'
import type { EngineProcess } from '../../../helpers/steps/context.ts'
import { corpusHttp, type CorpusRoute } from '../../support/corpus.ts'
import { engineSeen } from '../../support/fake-proc.ts'
import { answeringHost, stepContext, stepTarget } from '../../support/step-context.ts'

const TIED: EngineProcess = engineSeen('50', true, {
  foundBy: 'listener',
  listenerTied: true,
  tie: { by: 'listener', said: "pid 50 holds the listening socket of port 8000 on the base URL's host" },
})
const json = (body: unknown): CorpusRoute => ({ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

function context(args: string[], routes: Record<string, CorpusRoute>) {
  const http = corpusHttp(routes)
  return {
    ctx: {
      ...stepContext(
        stepTarget(args),
        answeringHost(() => ({})),
      ),
      http,
    },
    http,
  }
}

describe('step meter, a knob proven by the endpoints its engine describes itself on', () => {
  test("llama.cpp's /props answering 200 without total_slots is inconclusive, saying so; with it, green", async () => {
    const args = ['--engine', 'llama.cpp', '--knob', 'PARALLEL', '--value', '2']
    const without = context(args, { '/props': json({ default_generation_settings: { n_ctx: 1024 }, build_info: 'b1-de3ff81' }) })
    const j = await checkDescribed(without.ctx, { healthy: true, engineProcess: TIED })
    expect(j.verdict).toBe('inconclusive')
    expect(j.observed).toContain('/props answered 200 without total_slots')
    expect(j.observed).toContain('not the llama.cpp self-description its profile knows (another build, or another server at the base URL)')
    expect(j.next).toBeDefined()
    const withKey = context(args, { '/props': json({ total_slots: 2 }) })
    const ok = await checkDescribed(withKey.ctx, { healthy: true, engineProcess: TIED })
    expect([ok.verdict, ok.observed]).toEqual(['passed', '/props (what the engine runs): total_slots=2'])
  })

  test("vLLM's /server_info, optional (dev mode only), answering 200 without the key stays silent: the ledger proves it", async () => {
    const { ctx } = context(['--engine', 'vllm', '--knob', 'MAX_NUM_SEQS', '--value', '8'], { '/server_info': json({ vllm_config: {} }) })
    const j = await checkDescribed(ctx, { healthy: true, engineProcess: TIED })
    expect(j.verdict).toBe('skipped')
  })

  test('nothing tying the endpoint to the pid argv read: not asked, inconclusive', async () => {
    const { ctx, http } = context(['--engine', 'llama.cpp', '--knob', 'PARALLEL', '--value', '2'], { '/props': json({ total_slots: 2 }) })
    const j = await checkDescribed(ctx, { healthy: true, engineProcess: engineSeen('50', true) })
    expect(j.verdict).toBe('inconclusive')
    expect(j.observed).toBe(
      'not read: nothing ties http://127.0.0.1:8000 to pid 50, whose command line step argv read (see step argv), so what /props say would not be about it',
    )
    expect(http.asked).toEqual([])
    const none = await checkDescribed(ctx, { healthy: true })
    expect(none.observed).toBe('not read: step argv found no single engine process, so nothing ties what /props say to one')
  })
})

describe("vLLM's cache_config_info, an info gauge on /metrics", () => {
  const args = ['--engine', 'vllm', '--knob', 'ENABLE_PREFIX_CACHING', '--value', 'true']
  const PAGE = '# TYPE vllm:cache_config_info gauge\nvllm:cache_config_info{block_size="128",enable_prefix_caching="True",engine="0"} 1.0\n'
  const routes = {
    '/metrics': { status: 200, headers: { 'content-type': 'text/plain; version=0.0.4' }, body: PAGE },
    '/server_info': { status: 404, body: '' },
  }
  const baseline: MetricsReading = {
    at: 0,
    url: 'http://127.0.0.1:8000/metrics',
    meter: [],
    series: {
      'vllm:cache_config_info': [
        { labels: { block_size: '128', enable_prefix_caching: 'True', engine: '0' }, value: 1, raw: '1.0', line: 2 },
      ],
    },
    duplicates: [],
    lookalikes: [],
    prefixes: ['vllm'],
    sampleCount: 1,
    errors: [],
    errorCount: 0,
  }

  test("read from the meter's baseline page where it read one: no /metrics GET of its own", async () => {
    const { ctx, http } = context(args, routes)
    const a = (await selfDescription(ctx, 'true', true, baseline))!
    expect(a.verdict).toBe('passed')
    expect(a.rows[0]!.reading).toMatchObject({
      state: 'value',
      raw: 'True',
      where: "GET http://127.0.0.1:8000/metrics (the meter's baseline page, before the probes)",
    })
    expect(http.asked).toEqual(['GET /server_info?config_format=json'])
    // Without a baseline page, one GET of its own.
    const own = context(args, routes)
    expect((await selfDescription(own.ctx, 'true', true))!.verdict).toBe('passed')
    expect(own.http.asked).toEqual(['GET /metrics', 'GET /server_info?config_format=json'])
  })

  test("the gauge without the knob's label is inconclusive, not silent", async () => {
    const page: MetricsReading = {
      ...baseline,
      series: { 'vllm:cache_config_info': [{ labels: { block_size: '128', engine: '0' }, value: 1, raw: '1.0', line: 2 }] },
    }
    const { ctx } = context(args, routes)
    const a = (await selfDescription(ctx, 'true', true, page))!
    expect(a.verdict).toBe('inconclusive')
    expect(a.observed).toContain('vllm:cache_config_info carries no enable_prefix_caching label')
  })
})
