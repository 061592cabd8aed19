// Every reader of the vllm profile on what a real vLLM printed and served (fixtures/real/vllm/
// 9aaf83ef5: stock source built for CPU, the reference as no vLLM installs here): the help step on
// its --help=all, the log sources on its startup log (prefix grammar, latest boot), the meter's
// page reading and cache_config_info on its /metrics (helpers/prom), the health step on its empty
// 200, /v1/models' cards, and the probes' reply readers on its chat reply and its 400s. Each
// reader is armproof's own, called as the steps call it; the HTTP seam answers from the corpus.
import { describe, expect, test } from 'vitest'
import { builtinProfile } from '../../helpers/profiles/load.ts'
import { isLogSource } from '../../helpers/profiles/convert.ts'
import { contentTypeFormat, parsePrometheusText } from '../../helpers/prom/parse.ts'
import { modelCards } from '../../helpers/seams/models.ts'
import { createContext, type RunContext } from '../../helpers/steps/context.ts'
import { checkHealth } from '../../helpers/steps/health/judge.ts'
import { checkHelp } from '../../helpers/steps/help/judge.ts'
import { findHelpEntry, listFlags } from '../../helpers/steps/help/parse.ts'
import { endpointSources } from '../../helpers/steps/meter/described.ts'
import { readMetrics } from '../../helpers/steps/meter/metrics.ts'
import { prefixWords, trafficSizing } from '../../helpers/steps/meter/traffic.ts'
import { probeBudget } from '../../helpers/steps/probes/budget.ts'
import { judgeExact } from '../../helpers/steps/probes/exact.ts'
import { replyMeta } from '../../helpers/steps/probes/identity.ts'
import { judgeTools } from '../../helpers/steps/probes/tools.ts'
import { judgeVision } from '../../helpers/steps/probes/vision.ts'
import { readEndpointSources } from '../../helpers/steps/resolved/endpoints.ts'
import { messageOf, readLogSources } from '../../helpers/steps/resolved/log-sources.ts'
import { capturedAnswer, corpusDir, corpusHttp, corpusText } from '../support/corpus.ts'
import { answeringHost, stepTarget } from '../support/step-context.ts'

const DIR = corpusDir('vllm', '9aaf83ef5')
const text = (file: string) => corpusText(DIR, file)
const profile = builtinProfile('vllm')
const { engine } = profile
const spec = (knob: string) => profile.knobs.get(knob)!.spec
const LOG = text('live/startup-and-serve.log')
const HELP_ALL = text('serve-help-all.txt')
const metrics = () => ({ ...capturedAnswer(text('live/metrics.headers')), body: text('live/metrics.txt') })
const ROUTES = {
  '/health': capturedAnswer(text('live/health.txt')),
  '/v1/models': capturedAnswer(text('live/v1-models.txt')),
  '/server_info': capturedAnswer(text('live/server_info.txt')),
  '/metrics': metrics(),
}

/** The run's context for `--knob knob`, its HTTP answered from the corpus and its host printing `help`. */
function corpusContext(args: string[], help = HELP_ALL): RunContext & { asked: string[] } {
  const http = corpusHttp(ROUTES)
  const ctx = createContext({
    target: stepTarget(['--engine', 'vllm', ...args]),
    http,
    host: answeringHost(() => ({ stdout: help })),
    clock: { now: () => 0, sleep: async () => {} },
    choices: { pick: (_n, o) => o[0]! },
  })
  return Object.assign(ctx, { asked: http.asked })
}

/** The knob's log sources, with its key in each, as the ledger step reads them. */
const logSources = (knob: string) =>
  engine.resolved.filter(isLogSource).flatMap((source) => {
    const key = spec(knob).proof.sources?.[source.id]
    return key === undefined ? [] : [{ source, key }]
  })

describe('the vllm profile on real vLLM 9aaf83ef5: --help=all', () => {
  test('defines each knob flag with the default and choices the help step reads', () => {
    const seqs = findHelpEntry(HELP_ALL, '--max-num-seqs')
    expect(seqs?.block.split('\n')[0]).toBe('  --max-num-seqs MAX_NUM_SEQS')
    expect([seqs?.default, seqs?.choices]).toEqual(['None', null])
    const prefix = findHelpEntry(HELP_ALL, '--enable-prefix-caching')
    expect(prefix?.block.split('\n')[0]).toBe('  --enable-prefix-caching, --no-enable-prefix-caching')
    expect(prefix?.default).toBe('None')
    // The negation defines the entry too: a server started with --no-enable-prefix-caching is read by it.
    expect(findHelpEntry(HELP_ALL, '--no-enable-prefix-caching')?.block).toBe(prefix?.block)
    const dtype = findHelpEntry(HELP_ALL, '--kv-cache-dtype')
    expect(dtype?.default).toBe('auto')
    expect(dtype?.choices).toEqual(expect.arrayContaining(['auto', 'bfloat16', 'fp8', 'fp8_e4m3', 'fp8_e5m2', 'fp8_inc', 'nvfp4']))
    expect(dtype?.choices).toHaveLength(15)
    // --kv-cache-dtype-skip-layers is another flag, not the knob's entry.
    expect(dtype?.block).not.toContain('skip-layers')
  })

  test('lists every flag with whether it takes a value (what argv reads a prefix or a --no- form against)', () => {
    const flags = new Map(listFlags(HELP_ALL).map((f) => [f.name, f.takesValue]))
    expect(flags.size).toBeGreaterThan(300)
    expect(flags.get('--max-num-seqs')).toBe(true)
    expect(flags.get('--enable-prefix-caching')).toBe(false)
    expect(flags.get('--no-enable-prefix-caching')).toBe(false)
    expect(flags.get('--kv-cache-dtype')).toBe(true)
    expect(flags.get('--block-size')).toBe(true)
    // Two flags share the knob's prefix: --enable-prefix a prefix of one flag only if the other is gone.
    expect([...flags.keys()].filter((f) => f.startsWith('--enable-prefix-caching'))).toEqual(['--enable-prefix-caching'])
  })

  test.each([
    ['MAX_NUM_SEQS', '8', null, '--max-num-seqs MAX_NUM_SEQS Maximum number of sequences'],
    [
      'ENABLE_PREFIX_CACHING',
      'true',
      null,
      '--enable-prefix-caching, --no-enable-prefix-caching Whether to enable prefix caching. (default: None)',
    ],
    ['KV_CACHE_DTYPE', 'auto', 'auto', '--kv-cache-dtype {auto,bfloat16,'],
  ])('the help step is green for %s on it, default %s handed on', async (knob, value, buildDefault, observed) => {
    const j = await checkHelp(corpusContext(['--knob', knob, '--value', value]))
    expect(j.verdict).toBe('passed')
    expect(j.observed).toContain(observed)
    expect(j.gives?.buildDefault ?? null).toBe(buildDefault)
  })

  test('the help step is red for a flag this build does not define', async () => {
    const without = HELP_ALL.replaceAll('--max-num-seqs', '--max-num-sequences')
    const j = await checkHelp(corpusContext(['--knob', 'MAX_NUM_SEQS', '--value', '8'], without))
    expect(j.verdict).toBe('failed')
    expect(j.observed).toMatch(/does not define --max-num-seqs/)
  })
})

describe('the vllm profile on real vLLM 9aaf83ef5: the startup log', () => {
  test("every vLLM record's prefix is the profile's grammar: the process tag (APIServer, EngineCore, Worker), the level, the time, the file", () => {
    const prefix = new RegExp(`^(?:${engine.log.prefix})`)
    const records = LOG.split('\n').filter((l) => /^(?:\([A-Za-z]\w* pid=\d+\) )?(?:DEBUG|INFO|WARNING|ERROR) \d/.test(l))
    expect(records.length).toBeGreaterThan(50)
    expect(records.filter((l) => messageOf(l, prefix) === undefined)).toEqual([])
    const tags = new Set(records.map((l) => /^\((\w+) pid=/.exec(l)?.[1] ?? 'none'))
    expect([...tags].sort()).toEqual(['APIServer', 'EngineCore', 'Worker', 'none'])
    // uvicorn's access lines are no vLLM record: never read as one.
    expect(messageOf('(APIServer pid=6683) INFO:     127.0.0.1:36942 - "GET /health HTTP/1.1" 200 OK', prefix)).toBeUndefined()
  })

  test('non-default args and the engine config line say what the server was started with, each at its line', () => {
    const at = (knob: string) =>
      Object.fromEntries(readLogSources(LOG, engine, logSources(knob)).map((r) => [r.source.id, [r.state, r.raw, r.line]]))
    expect(at('MAX_NUM_SEQS')).toEqual({ 'non-default-args': ['value', '8', 8] })
    expect(at('ENABLE_PREFIX_CACHING')).toEqual({ 'non-default-args': ['value', 'True', 8], 'engine-config': ['value', 'True', 15] })
    // --kv-cache-dtype was not given: non-default args leaves it out; the engine config line says what runs.
    expect(at('KV_CACHE_DTYPE')).toEqual({ 'non-default-args': ['no-key', undefined, 8], 'engine-config': ['value', 'auto', 15] })
  })

  test("only the latest boot is read: a log of two boots (journald, docker logs) gives the second one's values", () => {
    const second = LOG.replace("'max_num_seqs': 8}", "'max_num_seqs': 4}").replace(
      'enable_prefix_caching=True',
      'enable_prefix_caching=False',
    )
    const both = `${LOG}${second}`
    const [args, config] = readLogSources(both, engine, logSources('ENABLE_PREFIX_CACHING'))
    expect(readLogSources(both, engine, logSources('MAX_NUM_SEQS'))[0]).toMatchObject({ raw: '4', line: LOG.split('\n').length + 7 })
    expect(args).toMatchObject({ raw: 'True' })
    expect(config).toMatchObject({ raw: 'False', line: LOG.split('\n').length + 14 })
    // The boot marker is the non-default args line, which every boot prints once.
    expect(LOG.split('\n').filter((l) => l.includes('non-default args: '))).toHaveLength(1)
  })
})

describe('the vllm profile on real vLLM 9aaf83ef5: /metrics', () => {
  test("helpers/prom reads the whole page (prometheus_client 0.26's text format, with _created) without an error", () => {
    const m = metrics()
    expect(m.headers['content-type']).toBe('text/plain; version=1.0.0; charset=utf-8')
    const page = parsePrometheusText(m.body, { format: contentTypeFormat(m.headers['content-type']) })
    expect(page.errors).toEqual([])
    const type = (name: string) => page.families.find((f) => f.name === name)?.type
    expect(type('vllm:prefix_cache_hits_total') ?? type('vllm:prefix_cache_hits')).toBe('counter')
    for (const n of [
      spec('ENABLE_PREFIX_CACHING').proof.meter!.name,
      engine.metrics.requests,
      engine.metrics.promptTokens,
      engine.metrics.generationTokens,
    ])
      expect(page.samples(n!), n).toHaveLength(n === engine.metrics.requests ? 5 : 1)
    expect(page.samples('vllm:prefix_cache_hits_total')[0]?.labels).toEqual({ engine: '0', model_name: 'tiny' })
  })

  test("the meter's page reading finds the knob's counter, its evidence and the traffic counters of the served model", async () => {
    const ctx = corpusContext(['--knob', 'ENABLE_PREFIX_CACHING', '--value', 'true'])
    const r = await readMetrics(ctx, 5000)
    expect(r.errorCount).toBe(0)
    expect(r.meter).toEqual([expect.objectContaining({ value: 0, labels: { engine: '0', model_name: 'tiny' } })])
    expect(r.meterType).toBe('counter')
    expect(r.series['vllm:prefix_cache_queries_total']?.map((s) => s.value)).toEqual([227])
    expect(r.series['vllm:request_success_total']?.map((s) => s.labels.finished_reason).sort()).toEqual([
      'abort',
      'error',
      'length',
      'repetition',
      'stop',
    ])
    expect(r.processStart).toBeCloseTo(1796185015.61, 1)
    expect(r.prefixes).toEqual(['vllm'])
  })

  test('cache_config_info says enable_prefix_caching True, cache_dtype auto and block_size 128', async () => {
    const said = async (knob: string, value: string) => {
      const ctx = corpusContext(['--knob', knob, '--value', value])
      return (await readEndpointSources(ctx, endpointSources(ctx))).map((r) => [r.source.id, r.state, r.raw ?? null])
    }
    expect(await said('ENABLE_PREFIX_CACHING', 'true')).toEqual([
      ['cache-config-info', 'value', 'True'],
      // Not served without VLLM_SERVER_DEV_MODE=1: said, never a failure.
      ['server-info', 'silent', null],
    ])
    expect(await said('KV_CACHE_DTYPE', 'auto')).toEqual([
      ['cache-config-info', 'value', 'auto'],
      ['server-info', 'silent', null],
    ])
    const info = parsePrometheusText(metrics().body).samples('vllm:cache_config_info')
    expect(info.map((s) => [s.labels.block_size, s.value])).toEqual([['128', 1]])
  })
})

describe('the vllm profile on real vLLM 9aaf83ef5: the traffic and budgets sized from what it says', () => {
  test("the meter's shared prefix is sized from this page's block_size 128: 256 words, two whole blocks, within max_model_len 1024", async () => {
    const ctx = corpusContext(['--knob', 'ENABLE_PREFIX_CACHING', '--value', 'true'])
    const maxModelLen = modelCards(ROUTES['/v1/models'].body)![0]!.maxModelLen
    const sizing = trafficSizing(engine, await readMetrics(ctx, 5000), maxModelLen)
    expect(sizing).toEqual({ blockSize: 128, blockSizeFrom: 'vllm:cache_config_info{block_size="128"}', maxModelLen: 1024 })
    // The old 64 words (sized for 16-token blocks) never filled one of this build's blocks: its hits stayed 0.
    expect(prefixWords(sizing)).toBe(256)
  })

  test("the probes' max_tokens at this build's max_model_len 1024: 768 for text, 512 beside an image (1024 was answered 400)", () => {
    const maxModelLen = modelCards(ROUTES['/v1/models'].body)![0]!.maxModelLen
    expect([probeBudget(maxModelLen, 'text').maxTokens, probeBudget(maxModelLen, 'vision').maxTokens]).toEqual([768, 512])
    expect(LOG).toContain("This model's maximum context length is 1024 tokens. However, you requested 1024 output tokens")
  })
})

describe('the vllm profile on real vLLM 9aaf83ef5: the endpoints and the replies', () => {
  test('the health step is green on its empty 200', async () => {
    const ctx = corpusContext(['--knob', 'MAX_NUM_SEQS', '--value', '8'])
    const j = await checkHealth(ctx)
    expect(ROUTES['/health']).toMatchObject({ status: 200, body: '' })
    expect([j.verdict, j.gives?.healthy]).toEqual(['passed', true])
  })

  test('/v1/models: the card the probes read, with the served context max_model_len', () => {
    const { status, body } = ROUTES['/v1/models']
    expect(status).toBe(200)
    expect(modelCards(body)).toEqual([{ id: 'tiny', root: '/srv/real/tiny', maxModelLen: 1024 }])
  })

  test("/server_info is 404 without VLLM_SERVER_DEV_MODE=1 (the profile's optional source)", () => {
    expect(ROUTES['/server_info']).toMatchObject({ status: 404, body: '{"detail":"Not Found"}' })
    expect(engine.resolved.find((s) => s.id === 'server-info')?.optional).toBe(true)
  })

  test("the chat reply reads as this engine's answer (id, model, created) and its content is judged: a random-weight model cannot say the word", () => {
    const body = text('live/chat.json')
    expect(replyMeta(body)).toEqual({ id: 'chatcmpl-ba9d4d5ba9dcfdd9', model: 'tiny', created: 1796185090 })
    const j = judgeExact(200, body, 'kestrel')
    expect(j.verdict).toBe('failed')
    expect(j.observed).toBe('content "began form we came we came we came" does not contain "kestrel"')
  })

  test("every flag the probes' next steps name (the profile's probes: words) is one the real --help=all lists", () => {
    const named = Object.values(profile.engine.probes).flatMap((w) => [...w.matchAll(/--[a-z][a-z0-9-]*/g)].map((m) => m[0]))
    expect(named).toEqual(expect.arrayContaining(['--enable-auto-tool-choice', '--tool-call-parser', '--limit-mm-per-prompt']))
    for (const flag of named) expect(HELP_ALL, flag).toMatch(new RegExp(`^\\s+${flag}(?![\\w-])`, 'm'))
  })

  test('the tools 400 (no --enable-auto-tool-choice) is red with the flags that serve tool calls', () => {
    const j = judgeTools(400, text('live/chat-tools.json'), 'kestrel', builtinProfile('vllm').engine.probes)
    expect(j.verdict).toBe('failed')
    expect(j.observed).toBe('HTTP 400: "auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set')
    expect(j.next).toMatch(/^tool calls misconfigured: start the engine with --enable-auto-tool-choice --tool-call-parser/)
  })

  test('the image 400 (a text-only model) is red as a model that takes no images, with the way to skip the probe', () => {
    const j = judgeVision(400, text('live/chat-image.json'), 'red', 'blue')
    expect(j.verdict).toBe('failed')
    expect(j.observed).toContain('tiny is not a multimodal model')
    expect(j.next).toMatch(/^the served model takes no images: .*--skip probe\.vision/)
  })
})
