// The replies are the engine's (issue 20): a reply's `model` is the model that produced it (every
// real variant accepted, another id red, saying both); a reply a cache served is not behaviour
// observed: one id for distinct requests is red, a `created` older than the request by more than
// clock skew inconclusive, each saying why.
import { describe, expect, test } from 'vitest'
import { loadConfig } from '../../../helpers/config/load.ts'
import type { HostClient } from '../../../helpers/seams/host.ts'
import type { HttpClient, HttpRequest, HttpResponse } from '../../../helpers/seams/http.ts'
import { createContext } from '../../../helpers/steps/context.ts'
import { CLOCK_SKEW_MS, judgeFresh, judgeModel, judgeSharedId, replyMeta, type ReplyMeta } from '../../../helpers/steps/probes/identity.ts'
import { checkExact, checkTools, checkVision } from '../../../helpers/steps/probes/send.ts'
import { servedModel } from '../../../helpers/steps/probes/served.ts'
import type { Judgement } from '../../../helpers/steps/verdict.ts'
import { DEMO_ARM } from '../../support/demo-args.ts'

const meta = (model: unknown, id: string | null = 'chatcmpl-1', created: number | null = 1_800_000_000): ReplyMeta => ({
  model,
  id,
  created,
})
const CARDS = [
  { id: 'llama-8b', root: '/models/llama' },
  { id: 'llama', root: '/models/llama' },
  { id: 'qwen', root: '/models/qwen' },
  { id: 'gw-a', root: null },
  { id: 'gw-b', root: null },
]

describe('the model that produced the reply', () => {
  test.each([
    ['the id asked, echoed (vLLM, SGLang, llama.cpp, a LoRA adapter by its name)', 'llama', 'llama', undefined],
    ['another served name of the same model, both listed with one root (vLLM answers with its first name)', 'llama', 'llama-8b', CARDS],
    ["OpenAI's dated snapshot of the id asked", 'gpt-4o', 'gpt-4o-2024-08-06', undefined],
  ])('accepted: %s', (_what, asked, replied, cards) => {
    expect(judgeModel(asked, meta(replied), cards)).toBeUndefined()
  })
  test.each([
    ["a gateway's fallback", 'llama', 'fallback/gpt-4o-mini', CARDS],
    ['another model the same endpoint lists, with another root', 'llama', 'qwen', CARDS],
    ['two ids listed without a root: nothing ties them', 'gw-a', 'gw-b', CARDS],
    ['a model the cards do not list', 'llama', 'llama-70b', CARDS],
    ['no cards at all', 'llama', 'llama-8b', undefined],
    ['the id asked, with another suffix than a date', 'gpt-4o', 'gpt-4o-mini', undefined],
    ['a dated snapshot of another id', 'gpt-4o', 'gpt-4-2024-08-06', undefined],
    ['a prefix of the id asked (no cards tie them)', 'llama-8b', 'llama', undefined],
    ['another case', 'llama', 'Llama', CARDS],
  ])('red: %s', (_what, asked, replied, cards) => {
    const r = judgeModel(asked, meta(replied), cards)
    expect(r?.verdict).toBe('failed')
    // Both named: what answered and what was asked.
    expect(r?.observed).toContain(`"model": ${JSON.stringify(replied)}, the probe asked for ${JSON.stringify(asked)}`)
    expect(r?.next).toContain("this reply is not the engine's behaviour")
  })
  test('a reply without a model (null, absent, empty, not a string) is red: a chat completion names it', () => {
    for (const m of [undefined, null, '', 7])
      expect(judgeModel('llama', meta(m), CARDS)?.observed).toContain('the reply carries no "model"')
  })
  test("the meta is read from a chat completion only; TGI's empty id is no id", () => {
    expect(replyMeta('{"id":"","created":5,"model":"m","choices":[]}')).toEqual({ model: 'm', id: null, created: 5 })
    expect(replyMeta('<html>')).toBeUndefined()
    expect(replyMeta('{"error":"x"}')).toBeUndefined()
    expect(replyMeta('{"choices":[],"created":"yesterday"}')).toEqual({ model: undefined, id: null, created: null })
  })
})

describe('a reply a cache served', () => {
  const sent = Date.parse('2026-11-30T02:00:00Z')
  test('created more than the clock skew before the request was sent: inconclusive, saying why not red', () => {
    const r = judgeFresh(meta('m', 'c', sent / 1000 - 86_400), sent)
    expect(r?.verdict).toBe('inconclusive')
    expect(r?.observed).toContain(
      'the reply was created 2026-11-29T02:00:00.000Z, 1.0 days before this request was sent (2026-11-30T02:00:00.000Z',
    )
    expect(r?.next).toContain('inconclusive, not red: a response cache before the engine answered')
    expect(r?.next).toContain("or the engine host's clock is 1.0 days behind")
  })
  test('within the skew, later, or unknown: not judged', () => {
    for (const created of [sent / 1000, sent / 1000 - CLOCK_SKEW_MS / 1000, sent / 1000 + 3600, null])
      expect(judgeFresh(meta('m', 'c', created), sent)).toBeUndefined()
    expect(judgeFresh(meta('m', 'c', 0), undefined)).toBeUndefined()
    expect(judgeFresh(meta('m', 'c', sent / 1000 - CLOCK_SKEW_MS / 1000 - 1), sent)?.observed).toContain('301 s before')
  })
  test('one id for distinct requests: red, naming the other probe and why red', () => {
    const r = judgeSharedId(meta('m', 'chatcmpl-same'), ['probe.tools'])
    expect(r?.verdict).toBe('failed')
    expect(r?.observed).toBe(
      'the reply\'s id "chatcmpl-same" is also the id of probe.tools\'s reply, to another request: one stored reply answered distinct requests',
    )
    expect(r?.next).toContain('red, not inconclusive')
    expect(judgeSharedId(meta('m', 'chatcmpl-same'), [])).toBeUndefined()
    expect(judgeSharedId(meta('m', null), ['probe.tools'])).toBeUndefined()
  })
})

describe('the three probes side by side, against a fake endpoint', () => {
  const NOW = Date.parse('2026-11-30T02:00:00Z')
  /** Each chat completion answers as `shape` says; /v1/models lists CARDS. */
  function run(shape: (req: HttpRequest, n: number) => Record<string, unknown>, argv: string[] = []) {
    const r = loadConfig({
      argv: [...DEMO_ARM, '--base-url', 'http://gpu-7:8000', ...argv],
      env: {},
    })
    if (!r.ok) throw new Error(JSON.stringify(r.problems))
    const asked: string[] = []
    let n = 0
    const http: HttpClient = {
      async request(req): Promise<HttpResponse> {
        const path = new URL(req.url).pathname
        asked.push(path)
        const body = path === '/v1/models' ? { object: 'list', data: CARDS } : replyFor(req, shape(req, n++))
        return { status: 200, headers: {}, body: JSON.stringify(body), url: req.url, redirects: [], durationMs: 40, receivedAtMs: NOW + 40 }
      },
    }
    const host: HostClient = { where: 'local', run: () => Promise.reject(new Error('no host in this test')) }
    const ctx = createContext({
      target: r.target,
      http,
      host,
      clock: { now: () => NOW, sleep: async () => {} },
      choices: { pick: (_n, o) => o[0]! },
    })
    const model = servedModel(ctx)
    const inputs = { healthy: true, model }
    return { asked, judged: Promise.all([checkExact(ctx, inputs), checkTools(ctx, inputs), checkVision(ctx, inputs)]) }
  }
  /** The right answer for each probe, with what `over` puts at the top level. */
  function replyFor(req: HttpRequest, over: Record<string, unknown>): unknown {
    const body = JSON.parse(req.body!) as { model: string; tools?: unknown; messages: Array<{ content: unknown }> }
    const text = JSON.stringify(body.messages)
    const message = body.tools
      ? {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 't', type: 'function', function: { name: 'record_probe_token', arguments: '{"token":"kestrel"}' } }],
        }
      : { role: 'assistant', content: text.includes('image_url') ? 'It is not green; it is red.' : 'kestrel' }
    return {
      id: `chatcmpl-${Math.random().toString(16).slice(2)}`,
      object: 'chat.completion',
      created: Math.floor(NOW / 1000),
      model: body.model,
      choices: [{ index: 0, message, finish_reason: 'stop' }],
      ...over,
    }
  }
  const verdicts = (js: Judgement[]) => js.map((j) => j.verdict)

  test('right answers from the model asked, made now: all three green, the reply kept in the evidence', async () => {
    const { judged } = run(() => ({}))
    const js = await judged
    expect(verdicts(js), JSON.stringify(js.map((j) => j.observed))).toEqual(['passed', 'passed', 'passed'])
    expect(js[0]!.evidence).toMatchObject({ reply: { model: 'llama-8b', created: Math.floor(NOW / 1000) } })
  })
  test("a gateway's fallback model: all three red, whatever they answered, both models named", async () => {
    const js = await run(() => ({ model: 'fallback/gpt-4o-mini' })).judged
    expect(verdicts(js)).toEqual(['failed', 'failed', 'failed'])
    for (const j of js)
      expect(j.observed).toContain(
        'another model answered: the reply says "model": "fallback/gpt-4o-mini", the probe asked for "llama-8b" (/v1/models lists "llama-8b", "llama", "qwen", "gw-a", "gw-b")',
      )
  })
  test('--model names an alias, the replies the first served name: green (the cards tie them; /v1/models is asked once, shared with the budget)', async () => {
    const { judged, asked } = run(() => ({ model: 'llama-8b' }), ['--model', 'llama'])
    expect(verdicts(await judged)).toEqual(['passed', 'passed', 'passed'])
    expect(asked.filter((p) => p === '/v1/models')).toHaveLength(1)
    // With --model too, the cards are asked once: the served context bounds max_tokens (./budget.ts).
    const echoed = run(() => ({}), ['--model', 'llama'])
    expect(verdicts(await echoed.judged)).toEqual(['passed', 'passed', 'passed'])
    expect(echoed.asked.filter((p) => p === '/v1/models')).toHaveLength(1)
  })
  test('one id for all three replies: every probe that got it is red, each naming the others', async () => {
    const js = await run(() => ({ id: 'chatcmpl-cached' })).judged
    expect(verdicts(js)).toEqual(['failed', 'failed', 'failed'])
    expect(js[0]!.observed).toContain("is also the id of probe.tools and probe.vision's reply")
    expect(js[2]!.observed).toContain("is also the id of probe.exact and probe.tools's reply")
  })
  test('two of three share an id: those two red, the third green; distinct empty ids (TGI) are no sharing', async () => {
    const js = await run((req) => (req.body!.includes('"tools"') ? {} : { id: 'chatcmpl-twice' })).judged
    expect(verdicts(js)).toEqual(['failed', 'passed', 'failed'])
    expect(verdicts(await run(() => ({ id: '' })).judged)).toEqual(['passed', 'passed', 'passed'])
  })
  test('replies created a day before the request: inconclusive, not red', async () => {
    const js = await run(() => ({ created: Math.floor(NOW / 1000) - 86_400 })).judged
    expect(verdicts(js)).toEqual(['inconclusive', 'inconclusive', 'inconclusive'])
    expect(js[1]!.next).toContain('inconclusive, not red')
  })
  test('a probe that got no reply never holds the others up', async () => {
    const r = loadConfig({
      argv: [...DEMO_ARM, '--base-url', 'http://gpu-7:8000'],
      env: {},
    })
    if (!r.ok) throw new Error('config')
    const http: HttpClient = {
      async request(req) {
        if (new URL(req.url).pathname === '/v1/models')
          return { status: 200, headers: {}, body: JSON.stringify({ data: CARDS }), url: req.url, redirects: [], durationMs: 1 }
        return { status: 500, headers: {}, body: '{"error":{"message":"boom"}}', url: req.url, redirects: [], durationMs: 1 }
      },
    }
    const ctx = createContext({
      target: { ...r.target, probeTimeoutMs: 3_600_000 },
      http,
      host: { where: 'local', run: () => Promise.reject(new Error('no')) },
      clock: { now: () => NOW, sleep: async () => {} },
      choices: { pick: (_n, o) => o[0]! },
    })
    const model = servedModel(ctx)
    // Only vision gets a 200 (its own fake): the other two fail at once and settle without an id.
    const vision = checkVision(
      {
        ...ctx,
        http: {
          request: async (req) =>
            req.body
              ? {
                  status: 200,
                  headers: {},
                  body: JSON.stringify({
                    id: 'x',
                    created: NOW / 1000,
                    model: 'llama-8b',
                    object: 'chat.completion',
                    choices: [{ index: 0, message: { content: 'Red.' }, finish_reason: 'stop' }],
                  }),
                  url: req.url,
                  redirects: [],
                  durationMs: 1,
                }
              : http.request(req),
        },
      },
      { healthy: true, model },
    )
    const js = await Promise.all([checkExact(ctx, { healthy: true, model }), checkTools(ctx, { healthy: true, model }), vision])
    expect(verdicts(js)).toEqual(['failed', 'failed', 'passed'])
  })
})
