// The parts of undici the HTTP seam loads (helpers/seams/undici-parts.ts) are undici's own, and a
// request made through them is the request undici's `request(url, { dispatcher })` makes: the
// same method, path with its query, headers and body on the wire, the same answer, and the same
// refusal of a URL undici refuses. Red here first when an upgrade of undici moves those files.
import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { loadRequestParts, type RequestOptions } from '../../helpers/seams/undici-parts.ts'

let server: Server
let base = ''

beforeAll(async () => {
  server = createServer(async (req: IncomingMessage, res) => {
    let body = ''
    for await (const chunk of req) body += chunk
    res.setHeader('x-seen', JSON.stringify({ method: req.method, url: req.url, body, auth: req.headers.authorization ?? null }))
    res.end(req.method === 'HEAD' ? undefined : `answer to ${req.method} ${req.url}`)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

describe("undici's parts, as the HTTP seam loads them", () => {
  test("are the very Agent and request function undici's index exports", async () => {
    const undici = await import('undici')
    const parts = await loadRequestParts()
    expect(parts.Agent).toBe(undici.Agent)
    const api = await import('undici/lib/api/api-request.js')
    // undici's index gives every dispatcher its API (Object.assign(Dispatcher.prototype, api)).
    expect(api.default).toBe(undici.Dispatcher.prototype.request)
  })

  const asked: Array<[string, string, RequestOptions]> = [
    ['a GET with a query', '/metrics?x=1&y=%20', { method: 'GET' }],
    ['a path alone', '/health', { method: 'GET', headers: { authorization: 'Bearer k' } }],
    ['a POST with its body', '/v1/chat/completions', { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } }],
    ['a HEAD', '/metrics', { method: 'HEAD' }],
    ['the root with a query only', '/?q', { method: 'GET' }],
  ]
  test.for(asked)('%s: the same request on the wire and the same answer as undici.request', async ([, path, options]) => {
    const undici = await import('undici')
    const parts = await loadRequestParts()
    const agent = new parts.Agent()
    try {
      const read = async (res: { statusCode: number; headers: Record<string, unknown>; body: { text(): Promise<string> } }) => ({
        status: res.statusCode,
        seen: res.headers['x-seen'],
        text: await res.body.text(),
      })
      const theirs = await read(await undici.request(`${base}${path}`, { ...options, dispatcher: agent }))
      const ours = await read(await parts.request(agent, `${base}${path}`, options))
      expect(ours).toEqual(theirs)
      expect(JSON.parse(String(ours.seen)).url).toBe(path)
    } finally {
      await agent.close()
    }
  })

  test('refuses the URLs undici refuses, with its own error', async () => {
    const undici = await import('undici')
    const parts = await loadRequestParts()
    const agent = new parts.Agent()
    try {
      for (const url of ['ftp://127.0.0.1/x', 'not a url', 'file:///etc/passwd']) {
        // undici's request throws before it returns a promise; both are caught the same way.
        const said = (ask: () => Promise<unknown>) =>
          Promise.resolve()
            .then(ask)
            .catch((e: Error) => `${e.name}: ${e.message}`)
        const theirs = await said(() => undici.request(url, { method: 'GET', dispatcher: agent }))
        const ours = await said(() => parts.request(agent, url, { method: 'GET' }))
        expect(typeof ours === 'string' && ours === theirs, `${url}: ours ${String(ours)}, undici's ${String(theirs)}`).toBe(true)
      }
    } finally {
      await agent.close()
    }
  })
})
