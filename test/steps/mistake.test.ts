// An operator's mistake found by a step after first contact (helpers/steps/mistake.ts): judged by
// first contact's rule where the step meets it, never red; the run `error` (exit 2) by the one
// green rule, read back the same by merge-reports and writeback. What waiting can change (refused,
// 503, a name that stopped resolving) is never a mistake; a genuine engine fault stays red.
import { describe, expect, test } from 'vitest'
import { loadConfig, type Target } from '../../helpers/config/load.ts'
import { checkReportShape, claimProblem, derivedVerdict } from '../../helpers/report/checked.ts'
import { buildReport } from '../../helpers/report/json.ts'
import type { HostClient } from '../../helpers/seams/host.ts'
import { classify, type HttpClient, type HttpRequest } from '../../helpers/seams/http.ts'
import { createContext } from '../../helpers/steps/context.ts'
import { checkHealth } from '../../helpers/steps/health/judge.ts'
import { checkExact } from '../../helpers/steps/probes/send.ts'
import { EXIT_CODES, judgeRun, type StepResult } from '../../helpers/steps/verdict.ts'
import { rederive } from '../../helpers/writeback/report.ts'
import { DEMO_ARM } from '../support/demo-args.ts'

function target(baseUrl: string, extra: string[] = []): Target {
  const r = loadConfig({ argv: [...DEMO_ARM, '--base-url', baseUrl, '--health-budget', '60s', ...extra], env: {} })
  if (!r.ok) throw new Error(JSON.stringify(r.problems))
  return r.target
}

type Answer = number | { status: number; body: string } | NodeJS.ErrnoException
const sys = (code: string): NodeJS.ErrnoException => Object.assign(new Error(code), { code })

/** A fake seam: each request takes the next answer of its path (the last one repeats). */
function seam(answers: Record<string, Answer[]>): HttpClient & { asked: string[] } {
  const asked: string[] = []
  return {
    asked,
    async request(req: HttpRequest) {
      const path = new URL(req.url).pathname
      asked.push(path)
      const queue = answers[path] ?? [404]
      const a = queue.length > 1 ? queue.shift()! : queue[0]!
      if (a instanceof Error) throw classify(a, req.url)
      const { status, body } = typeof a === 'number' ? { status: a, body: '' } : a
      return { status, body, headers: {}, url: req.url, redirects: [], durationMs: 1 }
    },
  }
}

function ctxOf(t: Target, http: HttpClient) {
  let now = 0
  const host: HostClient = { where: 'local', run: () => Promise.reject(new Error('no host in this test')) }
  return createContext({
    target: t,
    http,
    host,
    clock: { now: () => now, sleep: async (ms: number) => void (now += ms) },
    choices: { pick: (_n, o) => o[0]! },
  })
}

describe('step health meets what first contact refuses, once the engine has loaded', () => {
  test('refused, 503, then a certificate not trusted: the TLS mistake in first contact words, after the waits, never red', async () => {
    const t = target('https://gpu-7:8443')
    const http = seam({ '/health': [sys('ECONNREFUSED'), 503, sys('DEPTH_ZERO_SELF_SIGNED_CERT')] })
    const j = await checkHealth(ctxOf(t, http))
    expect(j.verdict).toBe('inconclusive')
    expect(j.mistake).toBe(
      '--base-url: TLS verification of gpu-7:8443 failed (DEPTH_ZERO_SELF_SIGNED_CERT); pass the CA that signed it with --ca-file PATH (or VERIFY_CA_FILE; NODE_EXTRA_CA_CERTS=PATH works too)',
    )
    expect(j.next).toBe(j.mistake)
    expect(j.where).toBe('GET https://gpu-7:8443/health')
    expect(j.evidence).toMatchObject({ attempts: 3, failure: 'tls' })
    expect(http.asked).toEqual(['/health', '/health', '/health'])
  })

  test('a gateway guarding /health (401) and nginx\'s "plain HTTP sent to HTTPS port" 400 are mistakes too', async () => {
    const t = target('http://gpu-7:8000')
    const keyed = await checkHealth(ctxOf(t, seam({ '/health': [sys('ECONNREFUSED'), 401] })))
    expect(keyed.mistake).toContain('/health answers HTTP 401 (the key): armproof sends the key only on /v1/*')
    const nginx = { status: 400, body: '<center>The plain HTTP request was sent to HTTPS port</center>' }
    const plain = await checkHealth(ctxOf(t, seam({ '/health': [sys('ECONNREFUSED'), nginx] })))
    expect(plain.mistake).toContain(
      'speaks TLS (HTTP 400 "The plain HTTP request was sent to HTTPS port"); pass --base-url https://gpu-7:8000',
    )
  })

  test('what waiting can change is not a mistake: refused and 503 until 200; a name that stopped resolving is waited for', async () => {
    const t = target('http://gpu-7:8000')
    const up = await checkHealth(
      ctxOf(t, seam({ '/health': [sys('ECONNREFUSED'), 503, sys('ENOTFOUND'), { status: 200, body: '{"in_flight":0,"queue_cap":8}' }] })),
    )
    expect(up.verdict).toBe('passed')
    expect(up.mistake).toBeUndefined()
  })

  test('a genuine engine fault stays red: 200 without in_flight and queue_cap', async () => {
    const t = target('http://gpu-7:8000')
    const j = await checkHealth(ctxOf(t, seam({ '/health': [sys('ECONNREFUSED'), { status: 200, body: '{"status":"ok"}' }] })))
    expect(j.verdict).toBe('failed')
    expect(j.mistake).toBeUndefined()
  })
})

describe('the probes meet what first contact refuses', () => {
  const models = { status: 200, body: JSON.stringify({ object: 'list', data: [{ id: 'm', object: 'model' }] }) }
  test('a certificate not trusted on the probe itself: the TLS mistake, not "inconclusive, run again"', async () => {
    const t = target('https://gpu-7:8443')
    const j = await checkExact(ctxOf(t, seam({ '/v1/models': [models], '/v1/chat/completions': [sys('CERT_HAS_EXPIRED')] })), {
      healthy: true,
    })
    expect(j.verdict).toBe('inconclusive')
    expect(j.mistake).toContain('TLS verification of gpu-7:8443 failed (CERT_HAS_EXPIRED)')
    expect(j.where).toBe('POST https://gpu-7:8443/v1/chat/completions')
  })

  test('a 307 of the completion to another origin (not followed) is the redirect mistake; a wrong answer stays red', async () => {
    const t = target('http://gpu-7:8000')
    const away: HttpClient = {
      async request(req) {
        if (req.url.endsWith('/v1/models'))
          return { ...models, headers: {} as Record<string, string>, url: req.url, redirects: [], durationMs: 1 }
        return {
          status: 307,
          body: '',
          headers: { location: 'http://gateway:9000/v1/chat/completions' },
          url: req.url,
          redirects: [],
          durationMs: 1,
        }
      },
    }
    const j = await checkExact(ctxOf(t, away), { healthy: true })
    expect(j.mistake).toContain(
      '/v1/chat/completions redirects to another origin, http://gateway:9000/v1/chat/completions (HTTP 307, not followed):',
    )
    expect(j.mistake).toContain('pass --base-url http://gateway:9000 if the engine is there')
    const wrong = {
      status: 200,
      body: JSON.stringify({ id: 'x', model: 'm', created: 0, choices: [{ message: { content: 'sparrow' }, finish_reason: 'stop' }] }),
    }
    const red = await checkExact(ctxOf(t, seam({ '/v1/models': [models], '/v1/chat/completions': [wrong] })), { healthy: true })
    expect(red.verdict).toBe('failed')
    expect(red.mistake).toBeUndefined()
  })
})

describe('the run of a step that found a mistake', () => {
  const t = target('http://gpu-7:8000')
  const step = (id: StepResult['id'], verdict: StepResult['verdict'], more: Partial<StepResult> = {}): StepResult =>
    ({ id, title: id, verdict, expected: 'e', observed: 'o', where: 'w', evidence: {}, durationMs: 1, ...more }) as StepResult
  const fix = '/metrics answers HTTP 401: something before the engine guards it; point --base-url at the engine itself'
  const steps = [
    ...(['dropins', 'help', 'argv', 'ledger', 'health', 'probe.exact', 'probe.tools', 'probe.vision'] as const).map((id) =>
      step(id, 'passed'),
    ),
    step('meter', 'inconclusive', { mistake: fix, next: fix, where: 'GET http://gpu-7:8000/metrics' }),
  ]

  test('is error (exit 2), whatever else its steps say; without the mistake the same steps are inconclusive, with a failed step red', () => {
    expect(judgeRun({ steps, allowed: new Set() }).verdict).toBe('error')
    const withRed = steps.map((s) => (s.id === 'argv' ? { ...s, verdict: 'failed' as const } : s))
    expect(judgeRun({ steps: withRed, allowed: new Set() }).verdict).toBe('error')
    const plain = steps.map(({ mistake: _m, ...s }) => s)
    expect(judgeRun({ steps: plain, allowed: new Set() }).verdict).toBe('inconclusive')
    expect(
      judgeRun({ steps: plain.map((s) => (s.id === 'argv' ? { ...s, verdict: 'failed' as const } : s)), allowed: new Set() }).verdict,
    ).toBe('red')
  })

  test('its report says error and the step, and read back (merge-reports, writeback) gives the same exit 2', () => {
    const report = JSON.parse(JSON.stringify(buildReport({ target: t, steps, startedAt: new Date(0), finishedAt: new Date(1) })))
    expect(report).toMatchObject({ verdict: 'error', exitCode: EXIT_CODES.error, error: `step meter: ${fix}` })
    expect(report.steps.at(-1)).toMatchObject({ id: 'meter', verdict: 'inconclusive', mistake: fix })
    const shape = checkReportShape(report)
    if (!('report' in shape)) throw new Error(shape.problem)
    expect(derivedVerdict(shape.report).verdict).toBe('error')
    expect(claimProblem(shape.report)).toBeNull()
    expect(rederive(shape.report).join('\n')).toContain("step meter found an operator's mistake: ")
    // The error field alone does not make it: a report whose error was emptied still derives error from the step.
    const edited = { ...shape.report, error: null }
    expect(derivedVerdict(edited).verdict).toBe('error')
  })
})
