// What a proxy or gateway before the engine does, for the faults that are the operator's to fix
// (first contact answers them, helpers/steps/first-contact/contact.ts): a /health redirect whose Location
// writes the port twice (nginx's $host:$server_port), a /v1/models redirect to another origin (a
// second loopback server in this process that counts whether the key came along), a /metrics
// guarded by the token. And HEAD /metrics: a status, never a scrape (Prometheus never sends one).
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { CONTENT_TYPE } from './metrics.ts'
import type { EngineState } from './state.ts'

const { createServer } = process.getBuiltinModule('node:http')

/** The other origin of `models_redirect_other_origin`: what reached it. */
interface OtherOrigin {
  server: Promise<Server>
  requests: number
  withAuthorization: number
}

const others = new WeakMap<EngineState, OtherOrigin>()

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers }).end(text)
}

/** The /v1/models body the engine serves (also what the other origin answers). */
export function modelList(state: EngineState): unknown {
  const name = state.config.servedModelName
  // `served_aliases`: a second served name of the same model, as `--served-model-name a b` lists it in vLLM.
  const ids = state.config.faults.has('served_aliases') ? [name, `${name}-alias`] : [name]
  const card = (id: string) => ({
    id,
    object: 'model',
    created: Math.floor(state.bootMs / 1000),
    owned_by: 'vllm',
    root: name,
    parent: null,
    max_model_len: 32768,
    permission: [],
  })
  return { object: 'list', data: ids.map(card) }
}

/** The other origin, started on a free loopback port the first time a redirect points there. */
function otherOrigin(state: EngineState): OtherOrigin {
  let other = others.get(state)
  if (other) return other
  const server = createServer((req, res) => {
    other!.requests += 1
    if (req.headers.authorization !== undefined) other!.withAuthorization += 1
    json(res, 200, modelList(state))
  })
  other = { requests: 0, withAuthorization: 0, server: new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server))) }
  server.unref()
  others.set(state, other)
  return other
}

/** Closes the other origin of this engine, if one was opened. */
export function closeGateway(state: EngineState): void {
  const other = others.get(state)
  if (!other) return
  others.delete(state)
  void other.server.then((s) => {
    s.closeAllConnections()
    s.close()
  })
}

/** What /stats adds under these faults: what reached the other origin. */
export function gatewayStats(state: EngineState): Record<string, unknown> {
  const other = others.get(state)
  return state.config.faults.has('models_redirect_other_origin')
    ? { other_origin: { requests: other?.requests ?? 0, with_authorization: other?.withAuthorization ?? 0 } }
    : {}
}

/** Answers `req` as the gateway before the engine would, when one of its faults (or HEAD /metrics) applies; false: the engine answers. */
export async function gatewayAnswer(state: EngineState, req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
  const faults = state.config.faults
  if (path === '/health' && faults.has('health_bad_location')) {
    // The Host header already carries the port: "$host:$server_port" writes it twice.
    res
      .writeHead(307, {
        location: `http://${req.headers.host ?? '127.0.0.1'}:${(req.socket.address() as AddressInfo).port}/health/`,
        'content-length': 0,
      })
      .end()
    return true
  }
  if (path === '/v1/models' && faults.has('models_redirect_other_origin')) {
    const port = ((await otherOrigin(state).server).address() as AddressInfo).port
    res.writeHead(307, { location: `http://127.0.0.1:${port}/v1/models`, 'content-length': 0 }).end()
    return true
  }
  if (path === '/metrics' || path === '/metrics/') {
    const token = state.config.apiKey
    const authorized = token === null ? req.headers.authorization !== undefined : req.headers.authorization === `Bearer ${token}`
    if (faults.has('metrics_guarded') && !authorized) {
      json(res, 401, { error: 'Unauthorized' }, { 'www-authenticate': 'Bearer' })
      return true
    }
    if (req.method === 'HEAD') {
      res.writeHead(200, { 'content-type': CONTENT_TYPE }).end()
      return true
    }
  }
  return false
}
