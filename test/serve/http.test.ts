// `armproof serve`'s HTTP side against hostile and mistaken requests, with a run the test controls
// (the real runs are test/e2e/serve.test.ts): the statuses of the contract, the token before anything
// about the targets, path tricks matched on the raw request target, bounded bodies, slow clients
// cut, one run per target, a bounded queue, a run stopped when its client goes away.
import { execFileSync } from 'node:child_process'
import { connect } from 'node:net'
import { afterAll, describe, expect, test } from 'vitest'
import { parsePrometheusText } from '../../helpers/prom/parse.ts'
import type { RunResult } from '../../helpers/serve/run.ts'
import { answerOf } from '../../helpers/serve/server.ts'
import { check, PROMETHEUS, testRequiring } from '../support/prerequisites.ts'
import { argoRequest, finished, flaggerRequest, rawExchange, serveApp, TOKEN, type Served } from '../support/serve.ts'

const opened: Served[] = []
const app = async (options: Parameters<typeof serveApp>[0] = {}): Promise<Served> => {
  const s = await serveApp(options)
  opened.push(s)
  return s
}
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()))
})
const auth = { Authorization: `Bearer ${TOKEN}` }

describe('statuses', () => {
  test('green 200, red and inconclusive 412 with the report as the run wrote it; the body route 200 for each', async () => {
    const verdicts: Record<string, [string, number]> = {
      'llm-7': ['green', 0],
      'llm-8': ['red', 1],
      'llm-9': ['inconclusive', 3],
      'llm-10': ['error', 2],
    }
    const s = await app({ targets: Object.keys(verdicts), run: async (svc) => finished(svc, ...verdicts[svc]!) })
    for (const [svc, [verdict]] of Object.entries(verdicts)) {
      const r = await fetch(`${s.url}/verify/${svc}`, argoRequest(TOKEN))
      expect([svc, r.status, ((await r.json()) as { verdict: string }).verdict]).toEqual([svc, verdict === 'green' ? 200 : 412, verdict])
      const b = await fetch(`${s.url}/analysis/${svc}`, argoRequest(TOKEN))
      expect([svc, b.status, ((await b.json()) as { verdict: string }).verdict]).toEqual([svc, 200, verdict])
    }
  })

  test('a report that says green from a run that did not exit 0 is not passed on as green', () => {
    const r = answerOf('llm-7', finished('llm-7', 'green', 4), 'status')
    expect(r.status).toBe(500)
    expect(r.outcome).toBe('failed')
    // The body route answers 200 for every outcome: a report-shaped error, never green.
    const body = answerOf('llm-7', finished('llm-7', 'green', 4), 'body')
    expect([body.status, JSON.parse(body.body).verdict, JSON.parse(body.body).reason]).toEqual([200, 'error', 'run_failed'])
    const unparsable: RunResult = { ...finished('llm-7', 'green', 0), reportText: '{"verdict": "green"' }
    expect(answerOf('llm-7', unparsable, 'status').status).toBe(500)
    expect(JSON.parse(answerOf('llm-7', unparsable, 'body').body).verdict).toBe('error')
  })

  test('a run that wrote no report: exit 2 is the error verdict (412), anything else 500; never 200 on /verify', () => {
    const refused: RunResult = {
      exitCode: 2,
      signal: null,
      reportText: null,
      stderrTail: 'armproof: 1 configuration problem; nothing was contacted.\n  - --api-key-file: no such file\n',
      stopped: null,
      ms: 3,
    }
    const a = answerOf('llm-7', refused, 'status')
    expect([a.status, a.outcome, JSON.parse(a.body).error]).toEqual([412, 'error', expect.stringContaining('--api-key-file: no such file')])
    const killed: RunResult = { exitCode: null, signal: 'SIGKILL', reportText: null, stderrTail: '', stopped: 'timeout', ms: 3 }
    const k = answerOf('llm-7', killed, 'status')
    expect([k.status, k.outcome, JSON.parse(k.body).error]).toEqual([
      500,
      'failed',
      expect.stringContaining('the run wrote no report (stopped: --run-timeout), ended by SIGKILL'),
    ])
  })

  test('Flagger: a payload with metadata.token and no header; green 200 (Flagger passes 200–202), red 412 (it fails anything else)', async () => {
    const s = await app({ run: async (svc) => finished(svc, svc === 'llm-7' ? 'green' : 'red', svc === 'llm-7' ? 0 : 1) })
    const green = await fetch(`${s.url}/verify/llm-7`, flaggerRequest({ token: TOKEN }))
    expect(green.status).toBe(200)
    const red = await fetch(`${s.url}/verify/llm-8`, flaggerRequest({ token: TOKEN }))
    expect(red.status).toBe(412)
    expect(s.logs.some((l) => l.includes('flagger canary test/podinfo Progressing'))).toBe(true)
    // A Flagger webhook pointed at the body route would pass a red canary: refused.
    const wrong = await fetch(`${s.url}/analysis/llm-8`, flaggerRequest({ token: TOKEN }))
    expect(wrong.status).toBe(400)
    expect(((await wrong.json()) as { error: string }).error).toContain('/verify/llm-8')
    expect(s.runs.map((r) => r.svc)).toEqual(['llm-7', 'llm-8'])
  })
})

describe('the token', () => {
  test('401 without it, with a wrong one, or in a query; never a word about the targets; never logged', async () => {
    const s = await app()
    for (const init of [
      { method: 'POST' },
      { method: 'POST', headers: { Authorization: `Bearer ${TOKEN}x` } },
      { method: 'POST', headers: { Authorization: `Basic ${TOKEN}` } },
      flaggerRequest({ token: 'nope' }),
      flaggerRequest({}),
    ]) {
      const r = await fetch(`${s.url}/verify/nonexistent`, init)
      expect(r.status).toBe(401)
      expect(r.headers.get('www-authenticate')).toContain('Bearer')
      expect(await r.text()).not.toContain('llm-7')
    }
    expect((await fetch(`${s.url}/verify/llm-7?token=${TOKEN}`, { method: 'POST' })).status).toBe(400)
    expect((await fetch(`${s.url}/verify/llm-7`, { method: 'POST', headers: auth })).status).toBe(200)
    expect(s.runs).toHaveLength(1)
    expect(s.logs.join('\n')).not.toContain(TOKEN)
  })

  test('an unknown svc is 404 with the targets listed, once the token is right', async () => {
    const s = await app()
    const r = await fetch(`${s.url}/verify/llm-99`, { method: 'POST', headers: auth })
    expect(r.status).toBe(404)
    expect(await r.json()).toEqual({ error: 'no target with svc "llm-99" in the targets file', targets: ['llm-7', 'llm-8'] })
    expect(s.runs).toHaveLength(0)
  })
})

describe('hostile requests', () => {
  test('path tricks are not routes, matched on the raw request target', async () => {
    const s = await app({ targets: ['llm-7', 'x', '..'] })
    const raws: Array<[string, number]> = [
      ['/verify/../x', 404],
      ['/verify/%2e%2e/x', 404],
      ['/verify/%2e%2e', 404],
      ['//verify/llm-7', 404],
      ['/verify//llm-7', 404],
      ['/verify/llm-7/', 404],
      ['/VERIFY/llm-7', 404],
      ['/verify/llm%2D7', 404],
      ['/verify/llm-7%00', 404],
      ['/verify/..', 400],
      ['/verify/.', 400],
      ['http://evil.invalid/verify/../x', 404],
      ['http:/verify/llm-7', 400],
      ['ftp://evil.invalid/verify/llm-7', 404],
      ['/verify/llm-7?mode=replay', 400],
      ['/verify/llm-7#x', 404],
      ['*', 404],
    ]
    for (const [target, status] of raws) {
      const r = await rawExchange(
        s.port,
        `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
      )
      expect([target, r.status]).toEqual([target, status])
    }
    expect(s.runs).toEqual([])
  })

  test('wrong methods are 405 with Allow; GET /healthz and HEAD answer', async () => {
    const s = await app()
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      const r = await fetch(`${s.url}/verify/llm-7`, { method, headers: auth })
      expect([method, r.status, r.headers.get('allow')]).toEqual([method, 405, 'POST'])
    }
    const post = await fetch(`${s.url}/healthz`, { method: 'POST' })
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD'])
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200)
    expect((await fetch(`${s.url}/healthz`, { method: 'HEAD' })).status).toBe(200)
    expect(s.runs).toEqual([])
  })

  test('a huge body is refused (413) without reading it, declared or chunked', async () => {
    const s = await app()
    const declared = await rawExchange(
      s.port,
      `POST /verify/llm-7 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: 104857600\r\n\r\n`,
      { endAfterWrite: false },
    )
    expect(declared.status).toBe(413)
    const chunk = 'x'.repeat(32 * 1024)
    const chunked = await rawExchange(
      s.port,
      `POST /verify/llm-7 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nTransfer-Encoding: chunked\r\n\r\n${`8000\r\n${chunk}\r\n`.repeat(4)}0\r\n\r\n`,
    )
    expect(chunked.status).toBe(413)
    expect(s.runs).toEqual([])
  })

  test('a slow client is cut: headers that never end, a body that never comes (408); a run may take longer than either', async () => {
    const limits = { maxBodyBytes: 1024, headersTimeoutMs: 300, requestTimeoutMs: 600 }
    const s = await app({ limits, run: async (svc) => (await new Promise((r) => setTimeout(r, 1200)), finished(svc, 'green', 0)) })
    const headers = await rawExchange(s.port, 'POST /verify/llm-7 HTTP/1.1\r\nHost: x\r\nX-Slow: 1', { endAfterWrite: false })
    expect(headers.status).toBe(408)
    const body = await rawExchange(
      s.port,
      `POST /verify/llm-7 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: 100\r\n\r\n{"na`,
      { endAfterWrite: false },
    )
    expect(body.status).toBe(408)
    expect(s.runs).toEqual([])
    const slowRun = await fetch(`${s.url}/verify/llm-7`, { method: 'POST', headers: auth })
    expect(slowRun.status).toBe(200)
  })
})

describe('one run per target, a bounded queue', () => {
  test('a second request for a target under way is 503 at once; another target queues; past the queue 503', async () => {
    const gates: Array<() => void> = []
    const s = await app({
      targets: ['a', 'b', 'c'],
      maxRuns: 1,
      queue: 1,
      run: (svc) => new Promise((r) => gates.push(() => r(finished(svc, 'green', 0)))),
    })
    const a = fetch(`${s.url}/verify/a`, { method: 'POST', headers: auth })
    await expect.poll(() => s.runs.length).toBe(1)
    const again = await fetch(`${s.url}/verify/a`, { method: 'POST', headers: auth })
    expect([again.status, again.headers.get('retry-after')]).toEqual([503, '30'])
    expect(((await again.json()) as { error: string }).error).toContain('under way')
    const b = fetch(`${s.url}/verify/b`, { method: 'POST', headers: auth })
    await expect
      .poll(async () => ((await (await fetch(`${s.url}/healthz`, { headers: auth })).json()) as { queued: number }).queued)
      .toBe(1)
    const bAgain = await fetch(`${s.url}/verify/b`, { method: 'POST', headers: auth })
    expect(((await bAgain.json()) as { error: string }).error).toContain('waiting for a slot')
    const c = await fetch(`${s.url}/verify/c`, { method: 'POST', headers: auth })
    expect(c.status).toBe(503)
    expect(((await c.json()) as { error: string }).error).toContain('--max-runs, --queue')
    gates.shift()!()
    expect((await a).status).toBe(200)
    await expect.poll(() => s.runs.length).toBe(2)
    gates.shift()!()
    expect((await b).status).toBe(200)
    const page = parsePrometheusText(await (await fetch(`${s.url}/metrics`, { headers: auth })).text())
    expect(page.errors).toEqual([])
    expect(
      page
        .samples('armproof_serve_refused_total')
        .filter((x) => x.value > 0)
        .map((x) => [x.labels.reason, x.value]),
    ).toEqual([
      ['busy', 2],
      ['queue_full', 1],
    ])
  })

  test('a client that goes away (its socket closed) stops its run and frees the target; one that only half-closed is answered', async () => {
    let calls = 0
    const s = await app({
      run: (svc, _argv, signal) =>
        ++calls === 1
          ? new Promise((r) => signal.addEventListener('abort', () => r({ ...finished(svc, 'interrupted', 143), stopped: 'client-gone' })))
          : new Promise((r) => setTimeout(() => r(finished(svc, 'red', 1)), 300)),
    })
    const request = `POST /verify/llm-7 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: 0\r\n\r\n`
    const gone = connect(s.port, '127.0.0.1', () => gone.write(request))
    await expect.poll(() => s.runs.length).toBe(1)
    gone.destroy()
    await expect.poll(() => s.runs[0]!.signal.reason).toBe('client-gone')
    await expect.poll(() => s.logs.some((l) => l.includes('the client went away'))).toBe(true)
    // Half-closed after its request (shutdown(SHUT_WR), as `nc -N` does): still waits, and gets its answer.
    const half = await rawExchange(s.port, request)
    expect(half.status).toBe(412)
    expect(half.text).toContain('"verdict": "red"')
    expect(s.runs[1]!.signal.aborted).toBe(false)
  })
})

testRequiring(check(PROMETHEUS))(
  "/metrics passes Prometheus' own linter (promtool check metrics) and our parser, with a series for every verdict from the start",
  async () => {
    const s = await app()
    await fetch(`${s.url}/verify/llm-7`, { method: 'POST', headers: auth })
    const page = await (await fetch(`${s.url}/metrics`, { headers: auth })).text()
    expect(execFileSync('promtool', ['check', 'metrics'], { input: page, encoding: 'utf8' })).toBe('')
    const parsed = parsePrometheusText(page)
    expect(parsed.errors).toEqual([])
    expect(Object.fromEntries(parsed.samples('armproof_serve_runs_total').map((x) => [x.labels.verdict, x.value]))).toEqual({
      green: 1,
      red: 0,
      inconclusive: 0,
      error: 0,
      interrupted: 0,
      failed: 0,
    })
  },
)
