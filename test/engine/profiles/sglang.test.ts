// The reference engine speaking SGLang (engine/profiles/sglang*.ts): argparse errors, the
// `server_args=ServerArgs(…)` line of every field (Python reads it back as a call of literals),
// /health while starting, /server_info and the deprecated /get_server_info, /metrics only with
// --enable-metrics and parsed with no error, the radix cache's counters, and each of its faults.
import { afterAll, describe, expect, test } from 'vitest'
import { parsePrometheusText } from '../../../helpers/prom/parse.ts'
import type { ProfileFaultName } from '../../../engine/profiles/faults.ts'
import { faultsOf } from '../../../engine/profiles/faults.ts'
import { complete, exitOf, serveProfile, tokens } from '../../support/profile-in-process.ts'
import { python } from '../../support/python.ts'
import type { InProcessProfile } from '../../support/profile-in-process.ts'

const MODEL = ['--model-path', 'qwen/qwen2.5-0.5b-instruct']
const served: InProcessProfile[] = []
const serve = async (argv: string[], options: Parameters<typeof serveProfile>[2] = {}) => {
  const e = await serveProfile('sglang', [...MODEL, ...argv], options)
  served.push(e)
  return e
}
afterAll(async () => Promise.all(served.map((e) => e.stop())))

const argsLine = (log: readonly string[]): string => log.find((l) => l.includes('server_args=ServerArgs('))!
const info = async (e: InProcessProfile, path = '/server_info') =>
  (await (await fetch(`${e.baseUrl}${path}`)).json()) as Record<string, unknown>
const page = async (e: InProcessProfile) => parsePrometheusText(await (await fetch(`${e.baseUrl}/metrics`)).text())

describe('SGLang command line and log', () => {
  test("a missing --model-path and a bad int exit 2 with argparse's usage; --help exits 0", () => {
    expect(exitOf('sglang', ['--port', '1'])!.stderr).toBe(
      'usage: launch_server.py [-h] --model-path MODEL_PATH [options]\nlaunch_server.py: error: the following arguments are required: --model-path/--model\n',
    )
    expect(exitOf('sglang', [...MODEL, '--chunked-prefill-size', 'big'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("argument --chunked-prefill-size: invalid int value: 'big'"),
    })
    expect(exitOf('sglang', ['--help'])).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('  --max-running-requests MAX_RUNNING_REQUESTS\n'),
    })
  })

  test('server_args=ServerArgs(…) holds every field, defaults included, with the resolved chunk size; Python parses it as a call of literals', async () => {
    const e = await serve(['--max-running-requests', '64'])
    const line = argsLine(e.log)
    expect(line).toMatch(/^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] server_args=ServerArgs\(model_path='qwen\/qwen2\.5-0\.5b-instruct', /)
    for (const part of [
      'chunked_prefill_size=8192',
      'max_running_requests=64',
      'disable_radix_cache=False',
      'enable_metrics=False',
      'decode_log_interval=40',
      'mem_fraction_static=0.88',
    ])
      expect(line).toContain(part)
    const fields = await python(
      'import ast, json, sys\ncall = ast.parse(json.load(sys.stdin).split("server_args=", 1)[1], mode="eval").body\nprint(json.dumps({"name": call.func.id, "fields": {k.arg: ast.literal_eval(k.value) for k in call.keywords}}))',
      line,
    )
    expect(fields.name).toBe('ServerArgs')
    expect(fields.fields).toMatchObject({
      chunked_prefill_size: 8192,
      max_running_requests: 64,
      port: 30000,
      host: '127.0.0.1',
      api_key: null,
    })
    expect(e.log.find((l) => l.includes('INFO server_args.py:'))).toMatch(/^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] INFO server_args\.py:\d+: /)
  })
})

describe('SGLang endpoints and meters', () => {
  test("/health is 503 while starting then an empty 200; /server_info merges ServerArgs with the scheduler's; /get_server_info logs its deprecation", async () => {
    const starting = await serve([], { unavailableMs: 60_000 })
    expect((await fetch(`${starting.baseUrl}/health`)).status).toBe(503)
    const e = await serve(['--chunked-prefill-size', '4096'])
    const health = await fetch(`${e.baseUrl}/health_generate`)
    expect([health.status, await health.text()]).toEqual([200, ''])
    const body = await info(e)
    expect(body).toMatchObject({
      chunked_prefill_size: 4096,
      max_running_requests: 128,
      disable_radix_cache: false,
      enable_metrics: false,
      status: 'ready',
      max_total_num_tokens: 20480,
      max_req_input_len: 20474,
      version: '0.5.9',
    })
    expect(await info(e, '/get_server_info')).toEqual(body)
    expect(e.log.at(-1)).toMatch(
      /WARNING http_server\.py:\d+: Endpoint '\/get_server_info' is deprecated and will be removed in a future version\. Please use '\/server_info' instead\.$/,
    )
    expect((await fetch(`${e.baseUrl}/metrics`)).status).toBe(404)
    expect(((await (await fetch(`${e.baseUrl}/v1/models`)).json()) as { data: Array<{ owned_by: string }> }).data[0]!.owned_by).toBe(
      'sglang',
    )
  })

  test('with --enable-metrics: scheduler and tokenizer labels, counters named with _total, radix hits in realtime_tokens and cached_tokens', async () => {
    const e = await serve(['--enable-metrics'])
    const idle = await page(e)
    expect(idle.errors).toEqual([])
    expect(idle.family('sglang:realtime_tokens_total')).toBeUndefined()
    await complete(e.baseUrl, tokens(30))
    await complete(e.baseUrl, `${tokens(20)} tail`)
    const p = await page(e)
    expect(p.errors).toEqual([])
    const realtime = Object.fromEntries(p.samples('sglang:realtime_tokens_total').map((s) => [s.labels.mode, s.value]))
    expect(realtime).toMatchObject({ prefill_compute: 31, prefill_cache: 20 })
    expect(p.samples('sglang:realtime_tokens_total')[0]!.labels).toMatchObject({
      engine_type: 'unified',
      tp_rank: '0',
      pp_rank: '0',
      moe_ep_rank: '0',
      model_name: 'qwen/qwen2.5-0.5b-instruct',
    })
    expect(p.samples('sglang:cached_tokens_total').find((s) => s.labels.cache_source === 'total')!.value).toBe(20)
    expect(p.samples('sglang:num_requests_total')[0]!.value).toBe(2)
    expect(p.samples('sglang:cache_config_info')[0]!.labels).toEqual({ num_pages: '20480', page_size: '1' })
    expect(e.log.filter((l) => l.includes('] Prefill batch, #new-seq: 1, '))).toHaveLength(2)
    const off = await serve(['--enable-metrics', '--disable-radix-cache'])
    await complete(off.baseUrl, tokens(30))
    await complete(off.baseUrl, tokens(30))
    expect((await page(off)).samples('sglang:cached_tokens_total')).toEqual([])
  })

  test('a chunked prefill logs one Prefill batch line per chunk, each #new-token at most the chunk size', async () => {
    const e = await serve(['--chunked-prefill-size', '8'])
    await complete(e.baseUrl, tokens(20))
    expect(e.log.filter((l) => l.includes('Prefill batch')).map((l) => /#new-token: (\d+)/.exec(l)![1])).toEqual(['8', '8', '4'])
  })
})

const CHECKS: Record<Extract<ProfileFaultName, `sglang_${string}`>, { args: string[]; check(e: InProcessProfile): Promise<void> }> = {
  sglang_args_line_differs: {
    args: ['--chunked-prefill-size', '4096', '--max-running-requests', '64'],
    async check(e) {
      expect(argsLine(e.log)).toContain('chunked_prefill_size=4097')
      expect(argsLine(e.log)).toContain('max_running_requests=65')
      expect(await info(e)).toMatchObject({ chunked_prefill_size: 4096, max_running_requests: 64 })
    },
  },
  sglang_server_info_differs: {
    args: ['--chunked-prefill-size', '4096', '--max-running-requests', '64'],
    async check(e) {
      expect(await info(e)).toMatchObject({ chunked_prefill_size: 4097, max_running_requests: 65 })
      expect(argsLine(e.log)).toContain('chunked_prefill_size=4096')
    },
  },
  sglang_old_server_info: {
    args: ['--chunked-prefill-size', '4096'],
    async check(e) {
      expect((await fetch(`${e.baseUrl}/server_info`)).status).toBe(404)
      expect(await info(e, '/get_server_info')).toMatchObject({ chunked_prefill_size: 4096 })
      expect(e.log.join('\n')).not.toContain('is deprecated')
    },
  },
  sglang_meter_still: {
    args: ['--enable-metrics'],
    async check(e) {
      await complete(e.baseUrl, tokens(30))
      await complete(e.baseUrl, tokens(30))
      const p = await page(e)
      expect(p.samples('sglang:realtime_tokens_total').map((s) => s.value)).toEqual([0, 0, 0])
      expect(p.samples('sglang:cached_tokens_total')).toEqual([])
      expect(p.samples('sglang:num_requests_total')[0]!.value).toBe(2)
    },
  },
  sglang_old_metric_names: {
    args: ['--enable-metrics'],
    async check(e) {
      await complete(e.baseUrl, tokens(30))
      const p = await page(e)
      expect(p.errors).toEqual([])
      expect(p.samples('sglang:num_requests_running')[0]!.labels).toEqual({ model_name: 'qwen/qwen2.5-0.5b-instruct' })
      expect(p.samples('sglang:request_success_total')[0]!.value).toBe(1)
      expect(p.family('sglang:num_running_reqs')).toBeUndefined()
    },
  },
}

describe('SGLang faults', () => {
  test('every sglang fault has its check here', () => {
    expect(Object.keys(CHECKS).sort()).toEqual(faultsOf('sglang').sort())
  })
  test.each(Object.entries(CHECKS))('%s', async (name, { args, check }) => {
    await check(await serve(args, { faults: [name as ProfileFaultName] }))
  })
})
