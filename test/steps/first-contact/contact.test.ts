// First contact (issue 13): what only the operator can fix is answered at once with exit 2, the
// cause and the fix in one line; what passes by itself (refused, EAI_AGAIN, 503) is left to the
// health step's budget. The rows of docs/faults.md's "operator's mistakes" that are not run by the
// fault matrix are run here (FIRST_CONTACT_ELSEWHERE quotes these test names).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer as createHttp, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createHttps } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { loadConfig, type Target } from '../../../helpers/config/load.ts'
import { firstContact } from '../../../helpers/steps/first-contact/contact.ts'
import { classify, HttpError, type HttpClient, type HttpRequest, type HttpResponse } from '../../../helpers/seams/http.ts'
import { FIRST_CONTACT_ELSEWHERE } from '../../support/fault-matrix.ts'
import { cleanup, runVerify } from '../../support/run-verify.ts'
import { verifyInProcess } from '../../support/verify-in-process.ts'
import { DEMO_ARM } from '../../support/demo-args.ts'

const dir = mkdtempSync(join(tmpdir(), 'armproof-first-contact-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function target(baseUrl: string, extra: string[] = [], env: Record<string, string> = {}): Target {
  const r = loadConfig({ argv: [...DEMO_ARM, '--base-url', baseUrl, ...extra], env })
  if (!r.ok) throw new Error(JSON.stringify(r.problems))
  return r.target
}

/** An answer of the fake seam: a status, a status with a body (and the URL that answered, after redirects), or a failure. */
type Answer = number | { status: number; body?: string; url?: string } | NodeJS.ErrnoException | HttpError

/** A fake seam: each path answers a status, or throws the failure a socket would. */
function fake(answers: Record<string, Answer>): HttpClient & { asked: string[]; requests: HttpRequest[] } {
  const asked: string[] = []
  const requests: HttpRequest[] = []
  return {
    asked,
    requests,
    async request(req) {
      const path = new URL(req.url).pathname
      asked.push(path)
      requests.push(req)
      const a = answers[path] ?? 404
      if (a instanceof HttpError || a instanceof Error) throw classify(a, req.url)
      const { status, body = '', url = req.url } = typeof a === 'number' ? { status: a } : a
      return { status, headers: {}, body, url, redirects: url === req.url ? [] : [req.url], durationMs: 1 } satisfies HttpResponse
    },
  }
}
const sys = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`getaddrinfo ${code} gpu-7`), { code })

describe('firstContact judges what only the operator can fix', () => {
  const t = target('http://gpu-7:8000')
  test('ENOTFOUND names the host and the fix; EAI_AGAIN (a resolver hiccup) is left to the budget', async () => {
    expect((await firstContact(t, fake({ '/health': sys('ENOTFOUND') })))?.message).toMatch(
      /the host name "gpu-7" does not resolve \(ENOTFOUND\); check the name in --base-url/,
    )
    expect(await firstContact(t, fake({ '/health': sys('EAI_AGAIN') }))).toBeUndefined()
  })
  test('refused, reset and a timeout are an engine still loading: no answer here, /v1/models not asked', async () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_HEADERS_TIMEOUT']) {
      const http = fake({ '/health': sys(code) })
      expect(await firstContact(t, http), code).toBeUndefined()
      expect(http.asked).toEqual(['/health'])
    }
  })
  test('503 on both (loading) is left to the budget; 200 and 200 is fine', async () => {
    expect(await firstContact(t, fake({ '/health': 503, '/v1/models': 503 }))).toBeUndefined()
    expect(await firstContact(t, fake({ '/health': 200, '/v1/models': 200 }))).toBeUndefined()
  })
  test('401/403 name the key (none given, or the one given refused); 404 names the path', async () => {
    expect((await firstContact(t, fake({ '/health': 200, '/v1/models': 401 })))?.message).toContain(
      'the endpoint wants a key and none was given: set VERIFY_API_KEY',
    )
    const keyed = target('http://gpu-7:8000', [], { VERIFY_API_KEY: 'sk-first-contact-1234' })
    const refused = await firstContact(keyed, fake({ '/health': 200, '/v1/models': 403 }))
    expect(refused?.message).toContain('/v1/models answers HTTP 403 (the key): the key given is refused')
    expect(refused?.message).not.toContain('sk-first-contact-1234')
    expect((await firstContact(t, fake({ '/health': 404 })))?.message).toContain(
      "/health answers HTTP 404 (the path): --base-url must be the engine's root",
    )
  })
  test('a TLS verification failure is its own failure, with --ca-file and NODE_EXTRA_CA_CERTS named', async () => {
    const e = classify(
      Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }),
      'https://gpu-7:8443/health',
    )
    expect(e).toBeInstanceOf(HttpError)
    expect(e.failure).toBe('tls')
    const msg = (
      await firstContact(
        target('https://gpu-7:8443'),
        fake({ '/health': Object.assign(new Error('x'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }) }),
      )
    )?.message
    expect(msg).toContain('TLS verification of gpu-7:8443 failed (DEPTH_ZERO_SELF_SIGNED_CERT)')
    expect(msg).toContain('--ca-file PATH')
    expect(msg).toContain('NODE_EXTRA_CA_CERTS')
  })
  test('https:// against a plain-HTTP port (the handshake got no TLS) names the http:// URL to pass, at once', async () => {
    const msg = (
      await firstContact(
        target('https://gpu-7:8000'),
        fake({ '/health': Object.assign(new Error('wrong version number'), { code: 'ERR_SSL_WRONG_VERSION_NUMBER' }) }),
      )
    )?.message
    expect(msg).toContain('--base-url: gpu-7:8000 does not speak TLS (ERR_SSL_WRONG_VERSION_NUMBER)')
    expect(msg).toContain('pass --base-url http://gpu-7:8000')
    expect(
      (await firstContact(target('https://gpu-7:8000'), fake({ '/health': Object.assign(new Error('x'), { code: 'EPROTO' }) })))?.message,
    ).toContain('does not speak TLS (EPROTO)')
    // The reverse mistake, as nginx answers it: plain HTTP sent to its TLS port.
    const nginx = await firstContact(
      t,
      fake({ '/health': { status: 400, body: '<html><center>The plain HTTP request was sent to HTTPS port</center></html>' } }),
    )
    expect(nginx?.message).toContain('speaks TLS')
    expect(nginx?.message).toContain('pass --base-url https://gpu-7:8000')
    // Any other 400 on /health is no such thing: left alone.
    expect(await firstContact(t, fake({ '/health': { status: 400, body: 'bad request' }, '/v1/models': 200 }))).toBeUndefined()
  })
  test("a redirect whose Location is no URL is the proxy's to fix: its Location named, the engine not blamed", async () => {
    const bad = new HttpError(
      'redirect',
      'http://gpu-7:8000/health',
      'HTTP 307 redirects to "http://gpu-7:8000:8000/health/", which is not a URL (Invalid URL)',
    )
    const msg = (await firstContact(t, fake({ '/health': bad })))?.message
    expect(msg).toContain('/health: HTTP 307 redirects to "http://gpu-7:8000:8000/health/", which is not a URL')
    expect(msg).toContain("fix the proxy's redirect, or point --base-url at the engine itself")
  })
  test('/v1/models that lands on another origin is refused, the key said to stay home; a same-origin redirect is fine', async () => {
    const keyed = target('http://gpu-7:8000', [], { VERIFY_API_KEY: 'sk-first-contact-1234' })
    const away = await firstContact(keyed, fake({ '/health': 200, '/v1/models': { status: 401, url: 'http://gateway:9000/v1/models' } }))
    expect(away?.message).toContain(
      '/v1/models redirects to another origin, http://gateway:9000/v1/models (HTTP 401 there): armproof did not send the key there',
    )
    expect(away?.message).toContain('pass --base-url http://gateway:9000 if the engine is there')
    expect(
      (
        await firstContact(
          t,
          fake({ '/health': 200, '/v1/models': { status: 200, url: 'https://gpu-7:8000/v1/models', body: '{"data":[]}' } }),
        )
      )?.message,
    ).toContain('pass --base-url https://gpu-7:8000 if the engine is there')
    expect(
      await firstContact(
        keyed,
        fake({ '/health': 200, '/v1/models': { status: 200, url: 'http://gpu-7:8000/v1/models/', body: '{"data":[{"id":"m"}]}' } }),
      ),
    ).toBeUndefined()
  })
  test('a --model /v1/models does not list is named with the ids it lists; a listed one (an alias, an adapter) is fine; no --model, nothing to check', async () => {
    const list = {
      status: 200,
      body: JSON.stringify({
        object: 'list',
        data: [
          { id: 'llama-8b', root: '/m' },
          { id: 'llama', root: '/m' },
          { id: 'sql-lora', parent: 'llama-8b' },
        ],
      }),
    }
    const wrong = await firstContact(target('http://gpu-7:8000', ['--model', 'llama-70b']), fake({ '/health': 200, '/v1/models': list }))
    expect(wrong?.message).toBe(
      '--model "llama-70b": /v1/models does not list it (it lists "llama-8b", "llama", "sql-lora"); pass --model with one of those, or leave --model out to probe the first',
    )
    expect(wrong?.where).toBe('GET http://gpu-7:8000/v1/models')
    for (const id of ['llama-8b', 'llama', 'sql-lora'])
      expect(
        await firstContact(target('http://gpu-7:8000', ['--model', id]), fake({ '/health': 200, '/v1/models': list })),
        id,
      ).toBeUndefined()
    expect(await firstContact(t, fake({ '/health': 200, '/v1/models': list }))).toBeUndefined()
    expect(
      (
        await firstContact(
          target('http://gpu-7:8000', ['--model', 'x']),
          fake({ '/health': 200, '/v1/models': { status: 200, body: '{"data":[]}' } }),
        )
      )?.message,
    ).toContain('(it lists no model)')
    // A body that is no model list, or a list still loading (503), is the probes' to judge.
    expect(
      await firstContact(
        target('http://gpu-7:8000', ['--model', 'x']),
        fake({ '/health': 200, '/v1/models': { status: 200, body: '<html>' } }),
      ),
    ).toBeUndefined()
    expect(await firstContact(target('http://gpu-7:8000', ['--model', 'x']), fake({ '/health': 503, '/v1/models': 503 }))).toBeUndefined()
    const many = { status: 200, body: JSON.stringify({ data: Array.from({ length: 14 }, (_, i) => ({ id: `m${i}` })) }) }
    expect(
      (await firstContact(target('http://gpu-7:8000', ['--model', 'x']), fake({ '/health': 200, '/v1/models': many })))?.message,
    ).toContain('"m9", … (14 in all)')
  })
  test('401/403 on /metrics (asked with HEAD, without the key) is a gateway guarding it; with --prometheus-url /metrics is not asked', async () => {
    const keyed = target('http://gpu-7:8000', [], { VERIFY_API_KEY: 'sk-first-contact-1234' })
    for (const status of [401, 403]) {
      const http = fake({ '/health': 200, '/v1/models': 200, '/metrics': status })
      const p = await firstContact(keyed, http)
      expect(p?.message).toContain(`/metrics answers HTTP ${status}: something before the engine guards it`)
      expect(p?.message).toContain('--prometheus-url')
      expect(p?.where).toBe('HEAD http://gpu-7:8000/metrics')
      const asked = http.requests.find((r) => r.url.endsWith('/metrics'))!
      expect(asked.method).toBe('HEAD')
      expect(asked.headers).toEqual({})
    }
    // The key goes to /v1/models only.
    const http = fake({ '/health': 200, '/v1/models': 200, '/metrics': 200 })
    expect(await firstContact(keyed, http)).toBeUndefined()
    expect(http.requests.map((r) => [new URL(r.url).pathname, r.headers?.authorization ?? null])).toEqual([
      ['/health', null],
      ['/v1/models', 'Bearer sk-first-contact-1234'],
      ['/metrics', null],
    ])
    const viaProm = fake({ '/health': 200, '/v1/models': 200, '/metrics': 401 })
    expect(await firstContact(target('http://gpu-7:8000', ['--prometheus-url', 'http://prom:9090']), viaProm)).toBeUndefined()
    expect(viaProm.asked).toEqual(['/health', '/v1/models'])
    // A 404 on /metrics (an engine without metrics) is the meter's to judge, not first contact's.
    expect(await firstContact(t, fake({ '/health': 200, '/v1/models': 200, '/metrics': 404 }))).toBeUndefined()
    // A server that takes no HEAD (405, 501) is asked with GET: a guard behind it is still found.
    let head = true
    const noHead: HttpClient = {
      async request(req) {
        const path = new URL(req.url).pathname
        const status = path !== '/metrics' ? 200 : req.method === 'HEAD' ? (head ? 405 : 200) : 403
        return { status, headers: {}, body: '', url: req.url, redirects: [], durationMs: 1 }
      },
    }
    expect((await firstContact(t, noHead))?.message).toContain('/metrics answers HTTP 403')
    head = false
    expect(await firstContact(t, noHead)).toBeUndefined()
  })
  test('a replay never contacts anything', async () => {
    const http = fake({})
    expect(await firstContact({ ...t, mode: 'replay' }, http)).toBeUndefined()
    expect(http.asked).toEqual([])
  })
})

/** A loopback endpoint: /health and /v1/models answer as `answer` says. */
function handler(answer: (path: string, req: IncomingMessage) => number) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    const status = answer(path, req)
    const body =
      status === 200
        ? JSON.stringify(path === '/health' ? { status: 'ok', in_flight: 0, queue_cap: 256 } : { data: [{ id: 'm' }] })
        : JSON.stringify({ error: { message: `status ${status}`, code: status } })
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body)
  }
}

const base = [...DEMO_ARM, '--host', 'local']
const FOUND = Object.fromEntries(FIRST_CONTACT_ELSEWHERE.map((f) => [f.test, f]))

// Every run here ends at first contact or before it: verify() runs in this process
// (test/support/verify-in-process.ts), but for NODE_EXTRA_CA_CERTS, which node reads when a process
// starts: that run is bin/verify.ts itself.
describe.concurrent('against a loopback endpoint, as pnpm verify answers it with the default budgets', () => {
  let https: ReturnType<typeof createHttps>
  let http: ReturnType<typeof createHttp>
  let tlsPort = 0
  let httpPort = 0
  const cert = join(dir, 'cert.pem')
  const key = join(dir, 'key.pem')
  beforeAll(async () => {
    await execa('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ])
    // Over TLS: /health 200, /v1/models 401 without a key, so a run that got through TLS ends on the key.
    https = createHttps(
      { key: readFileSync(key), cert: readFileSync(cert) },
      handler((path, req) => (path === '/health' ? 200 : req.headers.authorization ? 200 : 401)),
    )
    // Plain: a gateway that guards /health too.
    http = createHttp(handler((path) => (path === '/health' ? 401 : 403)))
    await new Promise<void>((r) => https.listen(0, '127.0.0.1', r))
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r))
    tlsPort = (https.address() as AddressInfo).port
    httpPort = (http.address() as AddressInfo).port
  })
  afterAll(() => {
    https?.close()
    http?.close()
  })

  test('a self-signed https endpoint: exit 2 naming TLS and --ca-file; with --ca-file the run goes on', async ({ expect }) => {
    const row = FOUND['a self-signed https endpoint: exit 2 naming TLS and --ca-file; with --ca-file the run goes on']!
    const bare = await verifyInProcess([...base, '--base-url', `https://127.0.0.1:${tlsPort}`])
    expect(bare.exitCode, bare.stderr).toBe(2)
    expect(bare.stderr).toContain(row.message.replace('PORT', String(tlsPort)))
    expect(bare.stderr).toContain('NODE_EXTRA_CA_CERTS')
    expect(bare.report?.verdict).toBe('error')
    expect(bare.report?.steps).toEqual([])
    cleanup(bare)
    // Through TLS with the CA given: what stops the run now is the key, not the certificate.
    for (const [args, env, through] of [
      [['--ca-file', cert], {}, verifyInProcess],
      [[], { NODE_EXTRA_CA_CERTS: cert }, runVerify],
    ] as const) {
      const run = await through([...base, '--base-url', `https://127.0.0.1:${tlsPort}`, ...args], { env })
      expect(run.exitCode, run.stderr).toBe(2)
      expect(run.stderr).not.toContain('TLS')
      expect(run.stderr).toContain('/v1/models answers HTTP 401 (the key)')
      cleanup(run)
    }
  })

  test('--ca-file that is not a PEM certificate is refused before contact', async ({ expect }) => {
    const run = await verifyInProcess([
      ...base,
      '--base-url',
      `https://127.0.0.1:${tlsPort}`,
      '--ca-file',
      key.replace('key.pem', 'missing.pem'),
    ])
    expect(run.exitCode).toBe(2)
    expect(run.stderr).toContain('cannot be read (no such file)')
    cleanup(run)
  })

  test('401 on /health: exit 2 naming the key, at once', async ({ expect }) => {
    const row = FOUND['401 on /health: exit 2 naming the key, at once']!
    const run = await verifyInProcess([...base, '--base-url', `http://127.0.0.1:${httpPort}`])
    expect(run.exitCode, run.stderr).toBe(2)
    expect(run.stderr).toContain(row.message)
    expect(run.stderr).toContain('not at a gateway that guards /health')
    cleanup(run)
  })

  test('403 on /v1/models with a key: exit 2, the key named, never shown', async ({ expect }) => {
    const row = FOUND['403 on /v1/models with a key: exit 2, the key named, never shown']!
    const key403 = 'sk-first-contact-Zr8Qw2Lp'
    const open = createHttp(handler((path) => (path === '/health' ? 200 : 403)))
    await new Promise<void>((r) => open.listen(0, '127.0.0.1', r))
    try {
      const run = await verifyInProcess([...base, '--base-url', `http://127.0.0.1:${(open.address() as AddressInfo).port}`], {
        env: { VERIFY_API_KEY: key403 },
      })
      expect(run.exitCode, run.stderr).toBe(2)
      expect(run.stderr).toContain(row.message)
      for (const text of [run.stdout, run.stderr, readFileSync(run.reportPath, 'utf8'), readFileSync(run.junitPath, 'utf8')])
        expect(text).not.toContain(key403)
      cleanup(run)
    } finally {
      open.close()
    }
  })
})
