// Step `health` (helpers/steps/health/judge.ts) called directly, its HTTP scripted: started while
// the engine still loads (refused, then 503), the 200 it ends with judged by the profile's health
// semantics. vLLM's and SGLang's /health is an empty 200 (fixtures/real/vllm/9aaf83ef5/live/health.txt),
// llama.cpp's {"status":"ok"} (fixtures/real/llama.cpp/de3ff81/health.txt); an HTML page (a
// gateway's) or a body where the engine answers none is not the engine: red, of its own kind.
import { describe, expect, test } from 'vitest'
import { checkHealth } from '../../../helpers/steps/health/judge.ts'
import { HttpError, type HttpClient, type HttpResponse } from '../../../helpers/seams/http.ts'
import { capturedAnswer, corpusDir, corpusText } from '../../support/corpus.ts'
import { answeringHost, stepContext, stepTarget } from '../../support/step-context.ts'

type Answer = { status: number; headers?: Record<string, string>; body: string }
const GATEWAY: Answer = {
  status: 200,
  headers: { 'content-type': 'text/html; charset=utf-8' },
  body: '<!DOCTYPE html>\n<html><head><title>Welcome to nginx!</title></head><body>…</body></html>\n',
}
const VLLM_EMPTY = capturedAnswer(corpusText(corpusDir('vllm', '9aaf83ef5'), 'live/health.txt'))
const LLAMA_OK = capturedAnswer(corpusText(corpusDir('llama.cpp', 'de3ff81'), 'health.txt'))

/** /health refused twice, 503 once (loading), then `ready`. */
function loading(ready: Answer): HttpClient & { asked: number } {
  const http = {
    asked: 0,
    async request(req: { url: string }): Promise<HttpResponse> {
      http.asked++
      if (http.asked <= 2) throw new HttpError('refused', req.url, 'connect ECONNREFUSED')
      const a = http.asked === 3 ? { status: 503, body: '' } : ready
      return { status: a.status, headers: a.headers ?? {}, body: a.body, url: req.url, redirects: [], durationMs: 1 }
    },
  }
  return http
}

async function judge(engine: string, ready: Answer) {
  let t = 0
  const ctx = stepContext(
    stepTarget([
      '--engine',
      engine,
      '--knob',
      engine === 'llama.cpp'
        ? 'PARALLEL'
        : engine === 'sglang'
          ? 'CHUNKED_PREFILL_SIZE'
          : engine === 'vllm'
            ? 'MAX_NUM_SEQS'
            : 'PREFILL_INTERLEAVE',
      '--value',
      '2',
    ]),
    answeringHost(() => ({})),
  )
  const http = loading(ready)
  return checkHealth({ ...ctx, http, clock: { now: () => t, sleep: async (ms) => void (t += ms) } })
}

describe('step health, started while the engine loads, judges the 200 by the profile', () => {
  test.each(['vllm', 'sglang'])("%s: its empty 200 is green; a gateway's HTML page is not the engine", async (engine) => {
    const ok = await judge(engine, VLLM_EMPTY)
    expect([ok.verdict, ok.expected]).toEqual(['passed', '200 with an empty body within 15m 00s'])
    expect(ok.observed).toMatch(/^200 \(an empty body, as this engine answers\) after /)
    const page = await judge(engine, GATEWAY)
    // The operator's mistake, not the engine's: the step is not judged, the run ends with exit 2 (../mistake.ts).
    expect(page.verdict).toBe('inconclusive')
    expect(page.mistake).toBe(page.next)
    expect(page.observed).toMatch(
      new RegExp(
        `^200 with an HTML page titled "Welcome to nginx!": not ${engine}'s /health answer, so the base URL does not reach the engine \\(after .*\\(an operator's mistake, not the engine's: not judged\\)$`,
      ),
    )
    expect(page.next).toBe(
      `the base URL, not the engine: http://127.0.0.1:8000 answers from a gateway or another server (curl -si http://127.0.0.1:8000/health); point --base-url at the engine itself, its root where /health, /metrics and /v1 live, or check that --engine names the engine that serves it`,
    )
    expect(page.evidence).toMatchObject({ failureKind: 'not-the-engine', status: 200 })
    // Served as a JSON body, where the engine answers none: another server's health (llama.cpp's, a gateway's).
    const body = await judge(engine, LLAMA_OK)
    expect([body.verdict, body.mistake]).toEqual(['inconclusive', body.next])
    expect(body.observed).toContain(
      `200 with a body ("{\\"status\\":\\"ok\\"}", application/json; charset=utf-8) where ${engine} answers an empty 200`,
    )
    expect(body.evidence).toMatchObject({ failureKind: 'not-the-engine' })
  })

  test('llama.cpp: its {"status":"ok"} is green; an HTML page is not the engine; another status is the old red (the engine’s own answer)', async () => {
    expect((await judge('llama.cpp', LLAMA_OK)).verdict).toBe('passed')
    const page = await judge('llama.cpp', { status: 200, body: '<html><body>502 upstream</body></html>' })
    expect([page.verdict, page.evidence]).toMatchObject(['inconclusive', { failureKind: 'not-the-engine' }])
    expect(page.observed).toMatch(/^200 with an HTML page: not llama\.cpp's \/health answer/)
    const other = await judge('llama.cpp', { status: 200, body: '{"status":"no slot available"}' })
    expect(other.verdict).toBe('failed')
    expect(other.evidence).not.toHaveProperty('failureKind')
  })

  test("radiance: a gateway's page is not the engine either, whatever fields the profile asks", async () => {
    const page = await judge('radiance', GATEWAY)
    expect([page.verdict, page.evidence]).toMatchObject(['inconclusive', { failureKind: 'not-the-engine' }])
    expect(page.mistake).toContain('the base URL, not the engine')
    const ok = await judge('radiance', { status: 200, body: '{"in_flight":0,"queue_cap":64}' })
    expect(ok.verdict).toBe('passed')
  })
})
