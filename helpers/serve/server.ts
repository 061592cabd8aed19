// The HTTP side of `armproof serve`: routes matched on the raw request target, the token checked
// before anything about the targets is said, bounded bodies and header/body deadlines (a slow or
// huge request is cut, never waited on), one run per target (helpers/serve/gate.ts), and the run's
// report answered as verify wrote it: 200 only for a green report of a run that exited 0.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { formatDuration } from '../config/duration.ts'
import { presentedToken, tokenMatches } from './auth.ts'
import type { RunGate } from './gate.ts'
import type { Refusal, RunOutcome, ServeMetrics } from './metrics.ts'
import { ALLOWED, route } from './routes.ts'
import type { RunResult, StopReason } from './run.ts'
import type { ServedTargets } from './targets.ts'
import { command } from '../config/invocation.ts'

export interface ServeLimits {
  /** A request body larger than this is refused (413): Argo's and Flagger's are a few hundred bytes. */
  maxBodyBytes: number
  /** The whole header block must arrive within this. */
  headersTimeoutMs: number
  /** The whole request, body included, must arrive within this (the run that follows is not counted). */
  requestTimeoutMs: number
}

export const DEFAULT_LIMITS: ServeLimits = { maxBodyBytes: 64 * 1024, headersTimeoutMs: 10_000, requestTimeoutMs: 15_000 }

export interface ServeDeps {
  /** The targets file, read again for every run request. */
  loadTargets(): { targets: ServedTargets } | { problems: string[] }
  run(svc: string, argv: readonly string[], signal: AbortSignal): Promise<RunResult>
  /** null: --no-token (loopback only, checked at start). */
  token: string | null
  gate: RunGate
  metrics: ServeMetrics
  log(line: string): void
  limits?: ServeLimits
}

export interface ServeServer {
  server: Server
  /** Stops every run under way (their requests are answered with the interrupted report); resolves when all are answered. */
  stopAll(): Promise<void>
}

const JSON_TYPE = 'application/json; charset=utf-8'

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return
  res.writeHead(status, {
    'Content-Type': JSON_TYPE,
    'Cache-Control': 'no-store',
    'Content-Length': String(Buffer.byteLength(body)),
    ...headers,
  })
  res.end(body)
}

const sendJson = (res: ServerResponse, status: number, value: unknown, headers?: Record<string, string>): void =>
  send(res, status, `${JSON.stringify(value)}\n`, headers)

/** The body, up to the limit; 'too-large' past it (the rest is not read). */
function readBody(req: IncomingMessage, max: number): Promise<string | 'too-large' | 'aborted'> {
  const declared = Number(req.headers['content-length'] ?? '0')
  if (declared > max) return Promise.resolve('too-large')
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > max) {
        req.removeAllListeners('data')
        req.pause()
        resolve('too-large')
      } else chunks.push(chunk)
    })
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('aborted', () => resolve('aborted'))
    req.on('error', () => resolve('aborted'))
  })
}

function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

const WORD = /^[A-Za-z0-9._-]{1,253}$/

/** A Flagger webhook payload ({name, namespace, phase, …}), said in the log in safe words only. */
function flaggerOf(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object') return undefined
  const { name, namespace, phase } = body as Record<string, unknown>
  if (typeof name !== 'string' || typeof namespace !== 'string' || typeof phase !== 'string') return undefined
  return [namespace, name, phase].every((w) => WORD.test(w))
    ? `flagger canary ${namespace}/${name} ${phase}`
    : 'flagger canary (names not shown)'
}

/** What a finished run answers: its report as verify wrote it, or serve's own JSON when it wrote none. */
export function answerOf(svc: string, result: RunResult, answer: 'status' | 'body'): { status: number; body: string; outcome: RunOutcome } {
  if (result.reportText !== null) {
    const verdict = (parseJson(result.reportText) as { verdict?: unknown } | undefined)?.verdict
    if (typeof verdict === 'string' && ['green', 'red', 'inconclusive', 'error', 'interrupted'].includes(verdict)) {
      // Green is the report's word and the exit code's both, or it is not green.
      if (verdict !== 'green' || result.exitCode === 0) {
        const status = answer === 'body' || verdict === 'green' ? 200 : 412
        return {
          status,
          body: result.reportText.endsWith('\n') ? result.reportText : `${result.reportText}\n`,
          outcome: verdict as RunOutcome,
        }
      }
    }
    return {
      status: 500,
      body: `${JSON.stringify({ svc, verdict: 'error', error: `the run's report says ${JSON.stringify(verdict)} but verify exited ${result.exitCode}; not a verdict serve passes on`, next: "see serve's log for the run's lines" })}\n`,
      outcome: 'failed',
    }
  }
  const tail = result.stderrTail.trim().split('\n').slice(-10).join('\n')
  if (result.exitCode === 2) {
    return {
      status: answer === 'body' ? 200 : 412,
      body: `${JSON.stringify({ svc, verdict: 'error', exitCode: 2, error: tail || 'verify refused its configuration', next: `fix the target in the targets file (${command('verify')} with its options says the same)` })}\n`,
      outcome: 'error',
    }
  }
  const why = result.stopped ? ` (stopped: ${result.stopped})` : ''
  return {
    status: 500,
    body: `${JSON.stringify({ svc, verdict: 'error', exitCode: result.exitCode, signal: result.signal, error: `the run wrote no report${why}${tail ? `: ${tail}` : ''}`, next: "see serve's log for the run's lines" })}\n`,
    outcome: 'failed',
  }
}

export function createServe(deps: ServeDeps): ServeServer {
  const limits = deps.limits ?? DEFAULT_LIMITS
  const inFlight = new Map<AbortController, Promise<void>>()
  let targetCount = 0
  const refuse = (res: ServerResponse, why: Refusal, status: number, value: unknown, headers?: Record<string, string>): void => {
    deps.metrics.refuse(why)
    sendJson(res, status, value, headers)
  }

  async function runRequest(req: IncomingMessage, res: ServerResponse, svc: string, answer: 'status' | 'body'): Promise<string> {
    const text = await readBody(req, limits.maxBodyBytes)
    if (text === 'aborted') return 'client went away while sending the body'
    if (text === 'too-large') {
      refuse(
        res,
        'bad_request',
        413,
        {
          error: `the request body is larger than ${limits.maxBodyBytes / 1024} KiB; serve reads none of it but a Flagger payload's metadata.token`,
        },
        { Connection: 'close' },
      )
      res.on('finish', () => req.destroy())
      return '413 body too large'
    }
    const body = parseJson(text)
    if (deps.token !== null && !tokenMatches(deps.token, presentedToken(req.headers.authorization, body))) {
      refuse(
        res,
        'unauthorized',
        401,
        { error: 'no valid token: send Authorization: Bearer <token> (a Flagger webhook: metadata.token)' },
        { 'WWW-Authenticate': 'Bearer realm="armproof-serve"' },
      )
      return '401'
    }
    const flagger = flaggerOf(body)
    if (answer === 'body' && flagger) {
      refuse(res, 'bad_request', 400, {
        error: `a Flagger webhook judges the status only, and POST /analysis/${svc} answers 200 whatever the verdict: point the webhook at /verify/${svc}`,
      })
      return `400 (${flagger} sent to /analysis)`
    }
    const loaded = deps.loadTargets()
    if ('problems' in loaded) {
      sendJson(res, 500, {
        svc,
        verdict: 'error',
        error: 'the targets file has problems; no run was started',
        problems: loaded.problems,
        next: 'fix the targets file; serve reads it again at the next request',
      })
      return `500 targets file: ${loaded.problems.length} problem(s)`
    }
    targetCount = loaded.targets.argv.size
    const argv = loaded.targets.argv.get(svc)
    if (!argv) {
      refuse(res, 'unknown_target', 404, {
        error: `no target with svc ${JSON.stringify(svc)} in the targets file`,
        targets: [...loaded.targets.argv.keys()],
      })
      return '404 no such target'
    }
    const controller = new AbortController()
    res.on('close', () => {
      if (!res.writableFinished) controller.abort('client-gone')
    })
    const entry = deps.gate.enter(svc, controller.signal)
    if ('refused' in entry) {
      const message =
        entry.refused === 'busy'
          ? `${svc}'s run is ${entry.state === 'running' ? 'under way' : 'waiting for a slot'} (for ${formatDuration(Date.now() - entry.since)}); ask again when it is done`
          : `${deps.gate.runningCount} runs are under way and ${deps.gate.queuedCount} waiting, the most this serve takes (--max-runs, --queue); ask again later`
      refuse(res, entry.refused === 'busy' ? 'busy' : 'queue_full', 503, { svc, error: message }, { 'Retry-After': '30' })
      return `503 ${entry.refused}`
    }
    const release = await entry.slot
    if (!release) return 'client went away while the run waited for a slot'
    let done!: () => void
    inFlight.set(controller, new Promise<void>((r) => (done = r)))
    try {
      deps.log(`armproof serve: ${svc}: run started${flagger ? ` for ${flagger}` : ''}`)
      const result = await deps.run(svc, argv, controller.signal)
      const answered = answerOf(svc, result, answer)
      deps.metrics.ran(answered.outcome, result.ms)
      send(res, answered.status, answered.body)
      const stopped: Record<StopReason, string> = {
        timeout: ' (stopped: --run-timeout)',
        'client-gone':
          ' (stopped: the client went away; a controller whose timeout is shorter than the run never gets a verdict: raise Argo timeoutSeconds / Flagger timeout above --run-timeout)',
        shutdown: ' (stopped: serve is shutting down)',
      }
      return `${res.destroyed && result.stopped === 'client-gone' ? 'not answered' : answered.status} ${answered.outcome} after ${formatDuration(result.ms)}${result.stopped ? stopped[result.stopped] : ''}`
    } finally {
      release()
      inFlight.delete(controller)
      done()
    }
  }

  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: 5000,
      connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs),
      maxHeaderSize: 16 * 1024,
    },
    (req, res) => {
      const r = route(req.url ?? '')
      const what = `${String(req.method).slice(0, 10)} ${r.kind === 'run' ? `/${r.answer === 'status' ? 'verify' : 'analysis'}/${r.svc}` : r.kind === 'healthz' || r.kind === 'metrics' ? `/${r.kind}` : '(other)'}`
      const from = req.socket.remoteAddress ?? '?'
      const logged = (outcome: string): void => deps.log(`armproof serve: ${what} from ${from} → ${outcome}`)
      if (r.kind === 'none')
        return void (sendJson(res, 404, { error: 'no such route: POST /verify/<svc>, POST /analysis/<svc>, GET /healthz, GET /metrics' }),
        logged('404'))
      if (r.kind === 'bad') return void (refuse(res, 'bad_request', 400, { error: r.message }), logged('400'))
      const allowed = ALLOWED[r.kind]
      if (!allowed.includes(req.method ?? ''))
        return void (sendJson(
          res,
          405,
          { error: `${req.method} is not answered here; use ${allowed.join(' or ')}` },
          { Allow: allowed.join(', ') },
        ),
        logged('405'))
      if (r.kind === 'healthz')
        return void sendJson(res, 200, { status: 'ok', running: deps.gate.runningCount, queued: deps.gate.queuedCount })
      if (r.kind === 'metrics') {
        return void send(
          res,
          200,
          deps.metrics.page({ running: deps.gate.runningCount, queued: deps.gate.queuedCount, targets: targetCount }),
          { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' },
        )
      }
      runRequest(req, res, r.svc, r.answer).then(logged, (error: unknown) => {
        sendJson(res, 500, { svc: r.svc, verdict: 'error', error: `serve failed: ${(error as Error).message}` })
        logged(`500 ${(error as Error).message}`)
      })
    },
  )
  server.maxConnections = 256
  // A malformed request or a header/body deadline passed: answered and closed, its bytes never logged.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (socket.writable && !socket.destroyed)
      socket.end(
        `HTTP/1.1 ${error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : error.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request'}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`,
      )
    else socket.destroy()
  })
  const targets = deps.loadTargets()
  if ('targets' in targets) targetCount = targets.targets.argv.size
  return {
    server,
    async stopAll() {
      for (const c of inFlight.keys()) c.abort('shutdown')
      await Promise.all(inFlight.values())
    },
  }
}
