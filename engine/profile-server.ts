// The HTTP side of an emulated engine (a profile other than radiance): the profile answers its
// own endpoints (health, self-description, metrics, its 404s); the /v1 routes are the reference
// model's (./chat.ts) behind the profile's --api-key, and every finished completion is booked with
// the profile, which may print log lines for it.
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { chatCompletion } from './chat.ts'
import { BadRequest, nestedError } from './errors.ts'
import { defaultConfig } from './flags.ts'
import { messageText } from './probes.ts'
import type { ProfileEngine, Reply } from './profiles/types.ts'
import { readBody, send } from './server.ts'
import { DECODE_STEP_S } from './state.ts'

const { createServer } = process.getBuiltinModule('node:http')

function reply(res: ServerResponse, r: Reply): void {
  res.writeHead(r.status, { ...(r.headers ?? {}), 'content-length': Buffer.byteLength(r.body) })
  res.end(r.body)
}

const words = (messages: unknown): string[] =>
  Array.isArray(messages) ? messages.flatMap((m) => messageText(m).split(/\s+/).filter(Boolean)) : []

async function chat(
  engine: ProfileEngine,
  req: IncomingMessage,
  res: ServerResponse,
  log: (lines: readonly string[]) => void,
): Promise<void> {
  let body: Record<string, unknown>
  try {
    body = JSON.parse(await readBody(req)) as Record<string, unknown>
  } catch (error) {
    const e = error instanceof BadRequest ? error : new BadRequest(`JSON decode error: ${(error as Error).message}`)
    return send(res, e.status, nestedError(e.message, e.type, e.status))
  }
  const [first] = engine.servedNames
  // Any of the served names reaches the model; the reply names the first, as vLLM answers.
  const asked =
    body !== null && typeof body === 'object' && engine.servedNames.includes(body.model as string) ? { ...body, model: first } : body
  const config = { ...defaultConfig(), servedModelName: first!, faults: new Set<never>() }
  const refused = asked !== null && typeof asked === 'object' && engine.refuse ? engine.refuse(asked, words(asked.messages).length) : null
  if (refused) {
    if (refused.log) log(refused.log)
    return reply(res, refused)
  }
  const started = Date.now()
  engine.running(1)
  try {
    const result = chatCompletion(config, asked)
    const text = JSON.stringify(engine.reply ? engine.reply(result.response) : result.response)
    const c = result.completion
    log(
      engine.record(
        {
          tokens: words(asked.messages),
          completionTokens: c.completionTokens,
          finishReason: c.finishReason,
          ttftS: c.ttftS,
          e2eS: Math.max(c.ttftS + c.completionTokens * DECODE_STEP_S, (Date.now() - started) / 1000),
        },
        new Date(),
      ),
    )
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
    res.end(text)
  } catch (error) {
    if (!(error instanceof BadRequest)) throw error
    send(res, error.status, nestedError(error.message, error.type, error.status))
  } finally {
    engine.running(-1)
  }
}

/**
 * Serves `engine`; `listenedAt()` tells when the port opened, for the profile's 503 phase of
 * `unavailableMs`. A profile that prints lines when loading ends (`loadedLines`: llama.cpp's
 * n_slots line) prints them at the first request after that phase, before it answers it: so no
 * 200 is ever seen before they are in the log, as the real engine prints them before it is ready.
 */
export function buildProfileServer(
  engine: ProfileEngine,
  listenedAt: () => number,
  unavailableMs: number,
  log: (lines: readonly string[]) => void,
  port: () => number = () => engine.port,
): Server & { loadEnded(): void } {
  let loadedSaid = false
  const loadEnded = (): void => {
    if (loadedSaid || !engine.loadedLines) return
    loadedSaid = true
    log(engine.loadedLines(new Date(), port()))
  }
  const served = { chat_completions: 0, health: 0, metrics: 0, models: 0 }
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://engine')
    const method = req.method ?? 'GET'
    const loading = Date.now() < listenedAt() + unavailableMs
    if (!loading) loadEnded()
    if (url.pathname === '/stats') return send(res, 200, { ...engine.stats(), served, loading })
    if (url.pathname.startsWith('/health')) served.health += 1
    if (url.pathname === '/metrics') served.metrics += 1
    const own = engine.answer({ method, path: url.pathname, query: url.searchParams }, loading)
    if (own) {
      if (own.log) log(own.log)
      return reply(res, own)
    }
    if (engine.apiKey !== null && req.headers.authorization !== `Bearer ${engine.apiKey}`) return reply(res, engine.unauthorized())
    if (loading) return send(res, 503, nestedError('The model is still loading.', 'ServiceUnavailableError', 503))
    if (url.pathname === '/v1/models') {
      served.models += 1
      return method === 'GET'
        ? send(res, 200, engine.modelList())
        : send(res, 405, nestedError('Method Not Allowed', 'MethodNotAllowed', 405))
    }
    if (url.pathname === '/v1/chat/completions') {
      served.chat_completions += 1
      return method === 'POST' ? chat(engine, req, res, log) : send(res, 405, nestedError('Method Not Allowed', 'MethodNotAllowed', 405))
    }
    return send(res, 404, nestedError('Not Found', 'NotFoundError', 404))
  }
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, nestedError(String((error as Error)?.message ?? error), 'InternalServerError', 500))
      else res.destroy()
    })
  })
  // The launcher's timer ends loading too, when no request came first (the same lines, once).
  return Object.assign(server, { loadEnded })
}
