// The HTTP seam against real loopback servers (issue 20): the API key stays with its origin (a
// capture server, another origin, records the headers it got), a redirect whose Location is no
// URL is an HttpError and never a TypeError, https:// against a plain-HTTP port is its own failure.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { HttpError, headersFor, liveHttp, redirectTarget } from '../../helpers/seams/http.ts'
import { redactingHttp } from '../../helpers/seams/redact.ts'

const KEY = 'sk-http-seam-4f1e9a7c'
const AUTH = { authorization: `Bearer ${KEY}` }

interface Listening {
  server: Server
  url: string
  /** Every request's path and headers, in order. */
  seen: Array<{ path: string; headers: IncomingHttpHeaders }>
}

async function listen(answer: (path: string, l: Listening) => [number, Record<string, string>?, string?]): Promise<Listening> {
  const l = { seen: [] } as unknown as Listening
  l.server = createServer((req, res) => {
    const path = req.url ?? '/'
    l.seen.push({ path, headers: req.headers })
    const [status, headers = {}, body = ''] = answer(path, l)
    res.writeHead(status, { 'content-length': Buffer.byteLength(body), ...headers }).end(body)
  })
  await new Promise<void>((r) => l.server.listen(0, '127.0.0.1', r))
  l.url = `http://127.0.0.1:${(l.server.address() as AddressInfo).port}`
  return l
}

let capture: Listening
let endpoint: Listening
const http = liveHttp()

beforeAll(async () => {
  // The other origin: it answers everything, and keeps what it was sent.
  capture = await listen(() => [200, { 'content-type': 'application/json' }, '{"data":[{"id":"elsewhere"}]}'])
  endpoint = await listen((path, l) => {
    const port = (l.server.address() as AddressInfo).port
    if (path === '/v1/models') return [307, { location: `${capture.url}/v1/models` }]
    if (path === '/same') return [308, { location: '/same/' }]
    if (path === '/same/') return [200, {}, 'here']
    if (path === '/to-https') return [301, { location: `https://127.0.0.1:${port}/same/` }]
    if (path === '/double-port') return [307, { location: `http://127.0.0.1:${port}:${port}/health/` }]
    if (path === '/ftp') return [302, { location: 'ftp://127.0.0.1/x' }]
    return [200, {}, 'ok']
  })
})
afterAll(async () => {
  capture?.server.close()
  endpoint?.server.close()
  await http.close()
})

describe('the key stays with its origin', () => {
  test('a 307 on /v1/models to another origin is followed without Authorization: the capture server got the request, never the key', async () => {
    const before = capture.seen.length
    const res = await http.request({
      method: 'GET',
      url: `${endpoint.url}/v1/models`,
      headers: { ...AUTH, accept: 'application/json' },
      timeoutMs: 5000,
      followRedirects: true,
    })
    expect(res.status).toBe(200)
    expect(res.url).toBe(`${capture.url}/v1/models`)
    expect(res.redirects).toEqual([`${endpoint.url}/v1/models`])
    const got = capture.seen.slice(before)
    expect(got).toHaveLength(1)
    expect(got[0]!.headers.authorization).toBeUndefined()
    // Only the key is dropped: the other headers go on.
    expect(got[0]!.headers.accept).toBe('application/json')
    // The first hop, at the base URL's origin, carried it.
    expect(endpoint.seen.filter((s) => s.path === '/v1/models').at(-1)!.headers.authorization).toBe(`Bearer ${KEY}`)
  })

  test('a redirect within the origin keeps the key', async () => {
    const res = await http.request({ method: 'GET', url: `${endpoint.url}/same`, headers: AUTH, timeoutMs: 5000, followRedirects: true })
    expect(res.body).toBe('here')
    expect(endpoint.seen.filter((s) => s.path === '/same/').at(-1)!.headers.authorization).toBe(`Bearer ${KEY}`)
  })

  test("a request of a client bound to the base URL's origin never carries the key to another origin, redirect or not", async () => {
    const bound = redactingHttp(liveHttp({ keyOrigin: endpoint.url }), KEY)
    const before = capture.seen.length
    await bound.request({
      method: 'GET',
      url: `${capture.url}/anything`,
      headers: { ...AUTH, 'proxy-authorization': `Basic ${KEY}` },
      timeoutMs: 5000,
    })
    const got = capture.seen.slice(before)
    expect(got).toHaveLength(1)
    expect(got[0]!.headers.authorization).toBeUndefined()
    expect(got[0]!.headers['proxy-authorization']).toBeUndefined()
  })

  test('origins are scheme, host and port: another port, another scheme or another host name drop the key; the header name in any case', () => {
    const base = 'http://127.0.0.1:8000'
    const h = { Authorization: `Bearer ${KEY}`, 'x-other': '1' }
    expect(headersFor('http://127.0.0.1:8000/v1/models', h, base)).toEqual(h)
    for (const url of [
      'http://127.0.0.1:8001/v1/models',
      'https://127.0.0.1:8000/v1/models',
      'http://localhost:8000/v1/models',
      'http://127.0.0.1/v1/models',
    ]) {
      expect(headersFor(url, h, base), url).toEqual({ 'x-other': '1' })
    }
    // The default port is the same origin, written or not.
    expect(headersFor('http://gpu-7/v1', h, 'http://gpu-7:80')).toEqual(h)
  })

  test('an http → https redirect of the same host is another origin too: the key is not sent over the new connection', async () => {
    // The https hop fails (the port speaks plain HTTP), so the request never got there; what matters is what was tried.
    await expect(
      http.request({ method: 'GET', url: `${endpoint.url}/to-https`, headers: AUTH, timeoutMs: 5000, followRedirects: true }),
    ).rejects.toMatchObject({ failure: 'not-tls' })
  })
})

describe('redirects that cannot be followed, and TLS against plain HTTP', () => {
  test("a Location that is no URL (the port written twice, nginx's $host:$server_port) is an HttpError 'redirect', never a TypeError", async () => {
    const error = await http
      .request({ method: 'GET', url: `${endpoint.url}/double-port`, timeoutMs: 5000, followRedirects: true })
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(HttpError)
    expect(error).toMatchObject({ failure: 'redirect', code: 'ARMPROOF_HTTP_REDIRECT' })
    const port = new URL(endpoint.url).port
    expect((error as HttpError).message).toContain(`HTTP 307 redirects to "http://127.0.0.1:${port}:${port}/health/", which is not a URL`)
    // Not followed at all without followRedirects: the 307 is the answer.
    expect((await http.request({ method: 'GET', url: `${endpoint.url}/double-port`, timeoutMs: 5000 })).status).toBe(307)
  })

  test('a redirect to another scheme than http(s) is refused the same way', async () => {
    await expect(http.request({ method: 'GET', url: `${endpoint.url}/ftp`, timeoutMs: 5000, followRedirects: true })).rejects.toMatchObject(
      { failure: 'redirect' },
    )
    expect(() => redirectTarget('ftp://x/', 'http://a/', 302)).toThrow(/which is not http\(s\)/)
    expect(redirectTarget('/b', 'http://a:1/x', 307)).toBe('http://a:1/b')
  })

  test("https:// against a plain-HTTP port is 'not-tls' (not a timeout: the handshake's own answer), with the system's code, through the redacting seam too", async () => {
    const tls = endpoint.url.replace('http:', 'https:')
    const error = await redactingHttp(http, KEY)
      .request({ method: 'GET', url: `${tls}/health`, timeoutMs: 10_000 })
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(HttpError)
    expect(error).toMatchObject({ failure: 'not-tls', sysCode: 'ERR_SSL_WRONG_VERSION_NUMBER' })
  })

  test('HEAD answers the status alone', async () => {
    const res = await http.request({ method: 'HEAD', url: `${endpoint.url}/same/`, timeoutMs: 5000 })
    expect(res.status).toBe(200)
    expect(res.body).toBe('')
    expect(res.receivedAtMs).toBeGreaterThan(Date.now() - 60_000)
  })
})
