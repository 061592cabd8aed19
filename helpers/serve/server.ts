// The HTTP side of `armproof serve`: routes matched on the raw request target, the token checked
// before anything about the targets is said, and budgets no client can spend for the others:
// connections per client address and in all, headers within --header-timeout (an idle connection
// is freed), the whole request within --request-timeout, a body of 64 KiB at most on every route
// (a body no route reads is never drained: the answer closes the connection), a bounded queue with
// a bounded wait. /healthz and /metrics touch neither the targets file nor a run, so they answer at
// once under any load. One run per target (helpers/serve/gate.ts), and the run's report answered
// as verify wrote it: 200 on /verify only for a green report of a run that exited 0; /analysis
// answers 200 for every outcome after the token (the report, or one shaped like it with
// `verdict: "error"`), as Argo Rollouts' web provider reads only a 2xx body.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { formatDuration } from '../config/duration.ts'
import { command } from '../config/invocation.ts'
import { authorizationCount, presentedToken, type TokenSource, tokenMatches } from './auth.ts'
import type { RunGate } from './gate.ts'
import type { Refusal, RunOutcome, ServeMetrics } from './metrics.ts'
import { QuietLog } from './quiet-log.ts'
import { ALLOWED, route, RUN_ID, type Route } from './routes.ts'
import type { RunResult, StopReason } from './run.ts'
import { type AsyncRun, newRunId, RunBook } from './runs.ts'
import type { TargetsView } from './targets.ts'

export interface ServeLimits {
  /** A request body larger than this is refused (413): Argo's and Flagger's are a few hundred bytes. */
  maxBodyBytes: number
  /** The whole header block must arrive within this; a connection that sends nothing is closed after it too. */
  headersTimeoutMs: number
  /** The whole request, body included, must arrive within this (the run that follows is not counted). */
  requestTimeoutMs: number
  /** Connections open at once, in all. */
  maxConnections: number
  /** Connections open at once from one client address. */
  maxConnectionsPerClient: number
}

export const DEFAULT_LIMITS: ServeLimits = {
  maxBodyBytes: 64 * 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 15_000,
  maxConnections: 256,
  maxConnectionsPerClient: 32,
}

/** The Retry-After of a 503 (busy, queue full or waited out, stopping): about a controller's own interval. */
export const RETRY_AFTER_S = 30

export interface ServeDeps {
  /** The targets as last read (helpers/serve/targets.ts TargetsCache: read again only when the file changed, then later). */
  targets(): TargetsView | Promise<TargetsView>
  /** The targets' count as last read, without looking at the file (for /healthz and /metrics). */
  targetCount?(): number
  run(svc: string, argv: readonly string[], signal: AbortSignal): Promise<RunResult>
  /** null: --no-token (loopback only, checked at start). */
  token: TokenSource | string | null
  gate: RunGate
  metrics: ServeMetrics
  log(line: string): void
  limits?: ServeLimits
  /** How long a finished asynchronous run's answer is kept (--keep-runs). */
  keepRunsMs?: number
  /** The interval of the unauthenticated requests' log lines (one written, the rest counted). */
  quietLogMs?: number
}

export interface ServeServer {
  server: Server
  runs: RunBook
  /**
   * Stops serving: nothing new starts (a request that comes now, or waited in the queue, is answered
   * 503), every run under way is stopped (its request answered with the interrupted report);
   * resolves when all are answered.
   */
  stopAll(): Promise<void>
  /** The same pages of /healthz and /metrics, for a listener of their own (--metrics-listen): no token there. */
  probes(req: IncomingMessage, res: ServerResponse): void
}

const JSON_TYPE = 'application/json; charset=utf-8'
const PROM_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return
  res.writeHead(status, {
    'Content-Type': JSON_TYPE,
    'Cache-Control': 'no-store',
    'Content-Length': String(Buffer.byteLength(body)),
    ...headers,
  })
  res.end(res.req.method === 'HEAD' ? undefined : body)
}

const sendJson = (res: ServerResponse, status: number, value: unknown, headers?: Record<string, string>): void =>
  send(res, status, `${JSON.stringify(value)}\n`, headers)

/** Whether the request says a body follows (a length above 0, or chunks). */
const hasBody = (req: IncomingMessage): boolean =>
  req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0')

/**
 * Answers and closes: the rest of a body is never read. The response goes out with
 * `Connection: close`; the socket's sending side is ended once it is written, and the socket
 * destroyed shortly after (a client still sending gets its answer first, then a reset).
 */
function closeAfter(res: ServerResponse): void {
  res.shouldKeepAlive = false
  res.once('finish', () => {
    const socket = res.req.socket
    res.req.pause()
    socket.end()
    setTimeout(() => socket.destroy(), 200).unref()
  })
}

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

/** Why serve answered without a report of a run. */
export type ErrorReason =
  | 'unknown_target'
  | 'target_problem'
  | 'targets_file'
  | 'busy'
  | 'queue_full'
  | 'queue_wait'
  | 'shutdown'
  | 'serve_failed'
  | 'run_failed'

/**
 * serve's own answer where no run wrote a report: shaped as a report (svc, verdict "error", no
 * steps), so whatever reads `$.verdict` reads it; `reason` and `error` say why in words.
 */
export function errorReport(
  svc: string,
  reason: ErrorReason,
  error: string,
  next: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { svc, verdict: 'error', reason, error, next, ...extra, steps: [] }
}

const reportText = (value: unknown): string => `${JSON.stringify(value)}\n`

/** What a finished run answers: its report as verify wrote it, or serve's own JSON when it wrote none. */
export function answerOf(svc: string, result: RunResult, answer: 'status' | 'body'): { status: number; body: string; outcome: RunOutcome } {
  const onBody = (status: number): number => (answer === 'body' ? 200 : status)
  if (result.reportText !== null) {
    const verdict = (parseJson(result.reportText) as { verdict?: unknown } | undefined)?.verdict
    if (typeof verdict === 'string' && ['green', 'red', 'inconclusive', 'error', 'interrupted'].includes(verdict)) {
      // Green is the report's word and the exit code's both, or it is not green.
      if (verdict !== 'green' || result.exitCode === 0) {
        return {
          status: onBody(verdict === 'green' ? 200 : 412),
          body: result.reportText.endsWith('\n') ? result.reportText : `${result.reportText}\n`,
          outcome: verdict as RunOutcome,
        }
      }
    }
    return {
      status: onBody(500),
      body: reportText(
        errorReport(
          svc,
          'run_failed',
          `the run's report says ${JSON.stringify(verdict)} but verify exited ${result.exitCode}; not a verdict serve passes on`,
          "see serve's log for the run's lines",
        ),
      ),
      outcome: 'failed',
    }
  }
  const tail = result.stderrTail.trim().split('\n').slice(-10).join('\n')
  if (result.exitCode === 2) {
    return {
      status: onBody(412),
      body: reportText({
        ...errorReport(
          svc,
          'target_problem',
          tail || 'verify refused its configuration',
          `fix the target in the targets file (${command('verify')} with its options says the same)`,
        ),
        exitCode: 2,
      }),
      outcome: 'error',
    }
  }
  // Stopped and then killed (serve's second signal, or a run that outlived the stop's grace): said so.
  const why = `${result.stopped ? STOPPED[result.stopped] : ''}${result.signal ? `, ended by ${result.signal}` : ''}`
  return {
    status: onBody(500),
    body: reportText({
      ...errorReport(svc, 'run_failed', `the run wrote no report${why}${tail ? `: ${tail}` : ''}`, "see serve's log for the run's lines"),
      exitCode: result.exitCode,
      signal: result.signal,
    }),
    outcome: 'failed',
  }
}

/** A sentence safe for an answer and the log: an error's message without the paths of this machine's temp folder. */
const safeMessage = (error: unknown): string =>
  String((error as Error)?.message ?? error).replace(/\/[^\s'"]*armproof-serve-[^\s'"]*/g, "(serve's run folder)")

const STOPPED: Record<StopReason, string> = {
  timeout: ' (stopped: --run-timeout)',
  'client-gone':
    ' (stopped: the client went away; a controller whose timeout is shorter than the run never gets a verdict: raise Argo timeoutSeconds / Flagger timeout above --run-timeout and --queue-wait, or ask POST /runs/<svc>)',
  shutdown: ' (stopped: serve is shutting down)',
}

/** A run refused or never started: its reason, words, status on /verify and Retry-After. */
interface NotRun {
  reason: ErrorReason
  refusal: Refusal
  status: number
  error: string
  next: string
  retry?: boolean
  extra?: Record<string, unknown>
}

export function createServe(deps: ServeDeps): ServeServer {
  const limits = deps.limits ?? DEFAULT_LIMITS
  const runs = new RunBook(deps.keepRunsMs ?? 3_600_000)
  const quiet = new QuietLog(deps.log, deps.quietLogMs ?? 10_000)
  const inFlight = new Map<AbortController, Promise<void>>()
  let stopping = false
  const tokenNow = (): string | null => (deps.token === null ? null : typeof deps.token === 'string' ? deps.token : deps.token.current())
  const headerAuthed = (req: IncomingMessage): boolean => {
    const t = tokenNow()
    return t === null || tokenMatches(t, presentedToken(req.headers.authorization, undefined))
  }
  const count = (): number => {
    if (deps.targetCount) return deps.targetCount()
    const view = deps.targets()
    return view instanceof Promise ? 0 : view.count
  }

  /** The gate's word for a run that cannot start now, in the answer's terms. */
  const refusedBy = (
    svc: string,
    entry: { refused: 'busy'; since: number; state: 'running' | 'queued' } | { refused: 'full' | 'shutdown' },
  ): NotRun =>
    entry.refused === 'busy'
      ? {
          reason: 'busy',
          refusal: 'busy',
          status: 503,
          retry: true,
          error: `${svc}'s run is ${entry.state === 'running' ? 'under way' : 'waiting for a slot'} (for ${formatDuration(Date.now() - entry.since)}); ask again when it is done`,
          next: `ask again after Retry-After; one run per target at a time`,
        }
      : entry.refused === 'full'
        ? {
            reason: 'queue_full',
            refusal: 'queue_full',
            status: 503,
            retry: true,
            error:
              deps.gate.queueWaitMs === 0
                ? `${deps.gate.runningCount} runs are under way, the most this serve takes (--max-runs), and none waits (--queue-wait 0); ask again later`
                : `${deps.gate.runningCount} runs are under way and ${deps.gate.queuedCount} waiting, the most this serve takes (--max-runs, --queue); ask again later`,
            next: 'ask again after Retry-After, or raise --max-runs / --queue',
          }
        : shutdownNotRun
  const shutdownNotRun: NotRun = {
    reason: 'shutdown',
    refusal: 'shutdown',
    status: 503,
    retry: true,
    error: 'serve is shutting down; this run was not started',
    next: 'ask again once serve is back (its successor)',
  }
  const expired = (svc: string): NotRun => ({
    reason: 'queue_wait',
    refusal: 'queue_wait',
    status: 503,
    retry: true,
    error: `${svc}'s run waited ${formatDuration(deps.gate.queueWaitMs)} for a slot (--queue-wait) and was not started: ${deps.gate.runningCount} run(s) under way`,
    next: 'ask again after Retry-After, or raise --max-runs / --queue-wait',
  })

  /** Whether the target can run now: its argv, or why not (unknown, its own problem, the file's). */
  const targetOf = async (svc: string): Promise<{ argv: readonly string[] } | NotRun> => {
    const { loaded } = await deps.targets()
    if ('file' in loaded)
      return {
        reason: 'targets_file',
        refusal: 'targets_file',
        status: 412,
        error: `the targets file cannot be used now (${loaded.file.spots.join(', ')}); no run was started`,
        next: "fix the targets file (serve's log says each problem); serve reads it again once it changes",
      }
    const argv = loaded.targets.argv.get(svc)
    if (argv) return { argv }
    const broken = loaded.targets.broken.get(svc)
    if (broken)
      return {
        reason: 'target_problem',
        refusal: 'target_problem',
        status: 412,
        error: `${broken.where} (svc ${JSON.stringify(svc)}) in the targets file has ${broken.messages.length} problem(s), at ${broken.spots.join(', ')}; no run was started`,
        next: `fix that entry (serve's log says each problem, as ${command('verify')} --targets does); the other targets are not affected`,
      }
    return {
      reason: 'unknown_target',
      refusal: 'unknown_target',
      status: 404,
      error: `no target with svc ${JSON.stringify(svc)} in the targets file`,
      next: 'ask for an svc of the targets file',
      extra: { targets: [...loaded.targets.argv.keys(), ...loaded.targets.broken.keys()] },
    }
  }

  const answerNotRun = (res: ServerResponse, svc: string, n: NotRun, answer: 'status' | 'body'): string => {
    deps.metrics.refuse(n.refusal)
    const headers: Record<string, string> = n.retry ? { 'Retry-After': String(RETRY_AFTER_S) } : {}
    const extra = { ...n.extra, ...(n.retry ? { retryAfterSeconds: RETRY_AFTER_S } : {}) }
    if (answer === 'body') sendJson(res, 200, errorReport(svc, n.reason, n.error, n.next, extra), headers)
    else if (n.reason === 'unknown_target') sendJson(res, 404, { error: n.error, ...n.extra }, headers)
    else if (n.status === 503) sendJson(res, 503, { svc, error: n.error }, headers)
    else sendJson(res, n.status, errorReport(svc, n.reason, n.error, n.next, extra), headers)
    return `${answer === 'body' ? 200 : n.status} ${n.reason}`
  }

  /** Runs a target whose slot came, tracked so that a stop waits for its answer. */
  async function runNow(svc: string, argv: readonly string[], controller: AbortController, note: string): Promise<RunResult> {
    let done!: () => void
    inFlight.set(controller, new Promise<void>((r) => (done = r)))
    try {
      deps.log(`armproof serve: ${svc}: run started${note}`)
      return await deps.run(svc, argv, controller.signal)
    } finally {
      inFlight.delete(controller)
      done()
    }
  }

  /** The body read and the token checked: the body's JSON, or the answer already given. */
  async function admitted(req: IncomingMessage, res: ServerResponse): Promise<{ body: unknown } | { answered: string }> {
    const text = await readBody(req, limits.maxBodyBytes)
    if (text === 'aborted') return { answered: 'client went away while sending the body' }
    if (text === 'too-large') {
      deps.metrics.refuse('bad_request')
      closeAfter(res)
      sendJson(res, 413, {
        error: `the request body is larger than ${limits.maxBodyBytes / 1024} KiB; serve reads none of it but a Flagger payload's metadata.token (or POST /runs' id)`,
      })
      return { answered: '413 body too large' }
    }
    const body = parseJson(text)
    const token = tokenNow()
    if (token !== null && !tokenMatches(token, presentedToken(req.headers.authorization, body))) {
      deps.metrics.refuse('unauthorized')
      sendJson(
        res,
        401,
        { error: 'no valid token: send Authorization: Bearer <token> (a Flagger webhook: metadata.token)' },
        { 'WWW-Authenticate': 'Bearer realm="armproof-serve"' },
      )
      return { answered: '401' }
    }
    return { body }
  }

  async function runRequest(req: IncomingMessage, res: ServerResponse, svc: string, answer: 'status' | 'body'): Promise<string> {
    const got = await admitted(req, res)
    if ('answered' in got) return got.answered
    const flagger = flaggerOf(got.body)
    if (answer === 'body' && flagger) {
      deps.metrics.refuse('bad_request')
      sendJson(res, 400, {
        error: `a Flagger webhook judges the status only, and POST /analysis/${svc} answers 200 whatever the verdict: point the webhook at /verify/${svc}`,
      })
      return `400 (${flagger} sent to /analysis)`
    }
    const target = await targetOf(svc)
    // Gone while a changed targets file was being checked: nothing to start.
    if (res.destroyed) return 'client went away while the targets file was read'
    if (!('argv' in target)) return answerNotRun(res, svc, target, answer)
    const controller = new AbortController()
    // Gone is gone: a socket closed (or reset) before the answer; a client that only half-closed
    // its side after the request still waits for it (serve keeps such sockets half-open). A FIN
    // is either: one 102 Processing tells them apart (a client that half-closed reads it and
    // waits, RFC 9110 15.2; one that closed its socket answers it with a reset, which the next
    // write sees, and it closes).
    const onEnd = (): void => {
      const probe = (): void => {
        if (!res.headersSent && !res.destroyed) res.writeProcessing()
      }
      probe()
      // The reset comes back to the first; the second's write is what sees it (EPIPE).
      setTimeout(probe, 250).unref()
    }
    const socket = res.socket
    if (socket?.readableEnded) onEnd()
    else socket?.once('end', onEnd)
    res.once('close', () => {
      socket?.off('end', onEnd)
      if (!res.writableFinished) controller.abort('client-gone')
    })
    const entry = deps.gate.enter(svc, controller.signal)
    if ('refused' in entry) return answerNotRun(res, svc, refusedBy(svc, entry), answer)
    const slot = await entry.slot
    if ('none' in slot) {
      if (slot.none === 'gone') return 'client went away while the run waited for a slot'
      return answerNotRun(res, svc, slot.none === 'expired' ? expired(svc) : shutdownNotRun, answer)
    }
    try {
      const result = await runNow(svc, target.argv, controller, flagger ? ` for ${flagger}` : '')
      const answered = answerOf(svc, result, answer)
      deps.metrics.ran(answered.outcome, result.ms)
      send(res, answered.status, answered.body)
      return `${res.destroyed && result.stopped === 'client-gone' ? 'not answered' : answered.status} ${answered.outcome} after ${formatDuration(result.ms)}${result.stopped ? STOPPED[result.stopped] : ''}`
    } finally {
      slot()
    }
  }

  /** POST /runs/<svc>: 202 with the run's id and Location; the run goes on without its client. */
  async function startRequest(req: IncomingMessage, res: ServerResponse, svc: string): Promise<string> {
    const got = await admitted(req, res)
    if ('answered' in got) return got.answered
    const asked = (got.body as { id?: unknown } | undefined)?.id
    if (asked !== undefined && (typeof asked !== 'string' || !RUN_ID.test(asked))) {
      deps.metrics.refuse('bad_request')
      sendJson(res, 400, { error: 'id: give 8 to 160 characters of [A-Za-z0-9_.-], or no id (serve gives one)' })
      return '400 bad id'
    }
    // Before the id is looked at: nothing waits between that look and the run's entry.
    const target = await targetOf(svc)
    const accepted = (run: AsyncRun, status: number): string => {
      sendJson(res, status, RunBook.view(run), { Location: `/runs/${run.id}` })
      return `${status} run ${run.id} ${run.state}`
    }
    const id = typeof asked === 'string' ? asked : newRunId()
    const known = runs.get(id)
    if (known && known.svc !== svc) {
      deps.metrics.refuse('bad_request')
      sendJson(res, 409, { error: `run ${id} is another target's; give an id of its own` })
      return '409 id of another target'
    }
    // The same id again while its run is in progress (a controller's retry): that run, no second one.
    if (known && known.state !== 'done') return accepted(known, 202)
    // A finished run's id asked again starts a new run under it; whatever comes of this request,
    // the old verdict is no longer what GET /runs/<id> answers (a poller would take it for the new).
    if (known) runs.delete(id)
    const now = Date.now()
    const run: AsyncRun = { id, svc, state: 'queued', createdAt: now, controller: new AbortController() }
    const finish = (verdict: string, report: unknown): void => {
      run.state = 'done'
      run.verdict = verdict
      run.report = report
      run.finishedAt = Date.now()
    }
    if (!('argv' in target)) {
      if (target.reason === 'unknown_target') return answerNotRun(res, svc, target, 'status')
      // The target's or the file's problem: a finished run whose report says it (GET reads it there).
      deps.metrics.refuse(target.refusal)
      finish('error', errorReport(svc, target.reason, target.error, target.next))
      runs.add(run)
      return accepted(run, 202)
    }
    const entry = deps.gate.enter(svc, run.controller.signal)
    if ('refused' in entry) return answerNotRun(res, svc, refusedBy(svc, entry), 'status')
    if (deps.gate.queuedCount > 0 || deps.gate.runningCount >= deps.gate.maxRuns) run.waitUntil = now + deps.gate.queueWaitMs
    runs.add(run)
    const said = accepted(run, 202)
    void (async () => {
      const slot = await entry.slot
      if ('none' in slot) {
        const n = slot.none === 'expired' ? expired(svc) : shutdownNotRun
        deps.metrics.refuse(n.refusal)
        finish('error', errorReport(svc, n.reason, n.error, n.next))
        deps.log(`armproof serve: run ${id} (${svc}) → ${n.reason}`)
        return
      }
      try {
        run.state = 'running'
        run.startedAt = Date.now()
        delete run.waitUntil
        const result = await runNow(svc, target.argv, run.controller, ` as run ${id}`)
        const answered = answerOf(svc, result, 'body')
        deps.metrics.ran(answered.outcome, result.ms)
        const report = parseJson(answered.body)
        finish(answered.outcome === 'failed' ? 'error' : answered.outcome, report)
        deps.log(
          `armproof serve: run ${id} (${svc}) → ${run.verdict} after ${formatDuration(result.ms)}${result.stopped ? STOPPED[result.stopped] : ''}`,
        )
      } catch (error) {
        deps.metrics.failed('handler')
        finish('error', errorReport(svc, 'serve_failed', `serve failed: ${safeMessage(error)}`, "see serve's log"))
        deps.log(`armproof serve: run ${id} (${svc}) → serve failed: ${safeMessage(error)}`)
      } finally {
        slot()
      }
    })()
    return said
  }

  function pollRequest(req: IncomingMessage, res: ServerResponse, id: string): string {
    if (!headerAuthed(req)) {
      deps.metrics.refuse('unauthorized')
      sendJson(
        res,
        401,
        { error: 'no valid token: send Authorization: Bearer <token>' },
        { 'WWW-Authenticate': 'Bearer realm="armproof-serve"' },
      )
      return '401'
    }
    const run = runs.get(id)
    if (!run) {
      sendJson(res, 404, {
        error: `no run ${id} here: serve never gave it, or no longer keeps it (--keep-runs; a restart forgets every run); start one with POST /runs/<svc>`,
      })
      return '404 no such run'
    }
    sendJson(res, 200, RunBook.view(run))
    return `200 ${run.state}${run.verdict ? ` ${run.verdict}` : ''}`
  }

  /** /healthz: up or down to anyone; with the token (or on --metrics-listen) what is running too. */
  function health(res: ServerResponse, full: boolean): void {
    const failing = deps.metrics.failing()
    const status = failing ? 'failing' : stopping ? 'stopping' : 'ok'
    sendJson(
      res,
      failing || stopping ? 503 : 200,
      full
        ? { status, ...(failing ? { failing } : {}), running: deps.gate.runningCount, queued: deps.gate.queuedCount, targets: count() }
        : { status },
    )
  }

  const metricsPage = (res: ServerResponse): void =>
    send(res, 200, deps.metrics.page({ running: deps.gate.runningCount, queued: deps.gate.queuedCount, targets: count() }), {
      'Content-Type': PROM_TYPE,
    })

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const r: Route = route(req.url ?? '', req.method ?? '')
    const what = `${String(req.method).slice(0, 10)} ${
      r.kind === 'run'
        ? `/${r.answer === 'status' ? 'verify' : 'analysis'}/${r.svc}`
        : r.kind === 'start'
          ? `/runs/${r.svc}`
          : r.kind === 'poll'
            ? `/runs/${r.id}`
            : r.kind === 'healthz' || r.kind === 'metrics'
              ? `/${r.kind}`
              : '(other)'
    }`
    const from = req.socket.remoteAddress ?? '?'
    const authed = headerAuthed(req)
    const logged = (outcome: string, knownClient = authed): void => {
      const line = `armproof serve: ${what} from ${from} → ${outcome}`
      if (knownClient) deps.log(line)
      else quiet.line(line, from)
    }
    // A body no route reads is never drained: answered, then the connection closed.
    const reads = (r.kind === 'run' || r.kind === 'start') && req.method === 'POST'
    if (!reads && hasBody(req)) closeAfter(res)
    if (authorizationCount(req.rawHeaders) > 1) {
      deps.metrics.refuse('bad_request')
      closeAfter(res)
      sendJson(res, 400, { error: 'two Authorization headers: send one' })
      return void logged('400 two Authorization headers', false)
    }
    if (r.kind === 'healthz' && ALLOWED.healthz.includes(req.method ?? '')) return void health(res, authed)
    if (stopping) {
      closeAfter(res)
      sendJson(res, 503, { error: 'serve is shutting down; nothing new starts' }, { 'Retry-After': String(RETRY_AFTER_S) })
      return void logged('503 shutting down')
    }
    if (r.kind === 'none') {
      sendJson(res, 404, {
        error: 'no such route: POST /verify/<svc>, POST /analysis/<svc>, POST /runs/<svc>, GET /runs/<id>, GET /healthz, GET /metrics',
      })
      return void logged('404')
    }
    if (r.kind === 'bad') {
      deps.metrics.refuse('bad_request')
      sendJson(res, 400, { error: r.message })
      return void logged('400')
    }
    const allowed = ALLOWED[r.kind]
    if (!allowed.includes(req.method ?? '')) {
      sendJson(res, 405, { error: `${req.method} is not answered here; use ${allowed.join(' or ')}` }, { Allow: allowed.join(', ') })
      return void logged('405')
    }
    if (r.kind === 'metrics') {
      if (!authed) {
        deps.metrics.refuse('unauthorized')
        sendJson(
          res,
          401,
          { error: 'GET /metrics needs the token here (Prometheus: authorization credentials_file), or scrape --metrics-listen' },
          { 'WWW-Authenticate': 'Bearer realm="armproof-serve"' },
        )
        return void logged('401')
      }
      return void metricsPage(res)
    }
    if (r.kind === 'poll') return void logged(pollRequest(req, res, r.id))
    if (r.kind === 'healthz') return void health(res, authed)
    const svc = r.svc
    const work = r.kind === 'start' ? startRequest(req, res, svc) : runRequest(req, res, svc, r.answer)
    work.then(
      (outcome) => logged(outcome, authed || (outcome !== '401' && !outcome.startsWith('413'))),
      (error: unknown) => {
        deps.metrics.failed('handler')
        const message = `serve failed: ${safeMessage(error)}`
        if (r.kind === 'run' && r.answer === 'body') sendJson(res, 200, errorReport(svc, 'serve_failed', message, "see serve's log"))
        else sendJson(res, 500, errorReport(svc, 'serve_failed', message, "see serve's log"))
        logged(`500 ${message}`, true)
      },
    )
  }

  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: 5000,
      connectionsCheckingInterval: Math.min(1000, Math.max(100, Math.floor(limits.headersTimeoutMs / 4))),
      maxHeaderSize: 16 * 1024,
    },
    handle,
  )
  // A client that half-closes after its request (shutdown(SHUT_WR)) still gets its answer.
  ;(server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true
  server.maxConnections = limits.maxConnections
  server.on('drop', () => deps.metrics.dropped('total'))
  const perClient = new Map<string, number>()
  server.on('connection', (socket: Socket) => {
    const a = socket.remoteAddress ?? '?'
    const n = (perClient.get(a) ?? 0) + 1
    if (n > limits.maxConnectionsPerClient) {
      deps.metrics.dropped('per_client')
      socket.destroy()
      return
    }
    perClient.set(a, n)
    socket.once('close', () => {
      const left = perClient.get(a)! - 1
      if (left === 0) perClient.delete(a)
      else perClient.set(a, left)
    })
  })
  // A malformed request or a header/body deadline passed: answered and closed, its bytes never logged.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (socket.writable && !socket.destroyed)
      socket.end(
        `HTTP/1.1 ${error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : error.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request'}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`,
      )
    else socket.destroy()
  })
  return {
    server,
    runs,
    probes(req, res) {
      const r = route(req.url ?? '', req.method ?? '')
      if (hasBody(req)) closeAfter(res)
      if ((r.kind === 'healthz' || r.kind === 'metrics') && ALLOWED[r.kind].includes(req.method ?? ''))
        return void (r.kind === 'healthz' ? health(res, true) : metricsPage(res))
      sendJson(res, 404, { error: 'this listener (--metrics-listen) answers GET /healthz and GET /metrics only' })
    },
    async stopAll() {
      stopping = true
      deps.gate.close()
      for (const r of runs.inProgress()) r.controller.abort('shutdown')
      for (const c of inFlight.keys()) c.abort('shutdown')
      // A run whose slot was just given may enter inFlight after this: wait until none is left.
      while (inFlight.size > 0) await Promise.all(inFlight.values())
      quiet.flush()
    },
  }
}
