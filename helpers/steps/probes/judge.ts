// Steps `probe.exact`, `probe.tools`, `probe.vision`: three requests to the endpoint itself,
// run side by side. A probe is not attempted when /health never came up.
import { formatDuration } from '../../config/duration.ts'
import { HttpError, type HttpRequest, type HttpResponse } from '../../seams/http.ts'
import { COLOUR_NAMES, EXACT_WORDS, exactRequest, judgeExact, judgeTools, toolsRequest, visionRequest, errorMessage, type ChatRequest, type ProbeReply } from './requests.ts'
import { judgeVision } from './vision.ts'
import { endpointUrl, v1Headers, type InputsOf, type RunContext, type ServedModel } from '../context.ts'
import type { Judgement } from '../verdict.ts'
import type { ProbeEvidence, ProbeRetry } from './evidence.ts'

class ProbeBlocked extends Error {
  readonly judgement: Judgement
  constructor(judgement: Judgement) {
    super(judgement.observed)
    this.judgement = judgement
  }
}

type ProbeInputs = InputsOf<'probe.exact'> & InputsOf<'probe.tools'> & InputsOf<'probe.vision'>

function notAttempted(ctx: RunContext, inputs: ProbeInputs, expected: string): Judgement | undefined {
  if (inputs.healthy) return undefined
  return {
    verdict: 'skipped',
    expected,
    observed: 'not attempted: /health never answered 200 (see step health)',
    where: endpointUrl(ctx, '/v1/chat/completions'),
    next: 'get /health to 200 first',
    evidence: {},
  }
}

/**
 * The model for the probes: --model, else the first id of /v1/models, asked once per run by the
 * first probe that gets that far (never when /health did not come up); the three probes and the
 * meter share it.
 */
export function servedModel(ctx: RunContext): ServedModel {
  let asked: Promise<string> | undefined
  const get = (): Promise<string> => {
    if (ctx.target.model) return Promise.resolve(ctx.target.model)
    asked ??= askModels(ctx)
    return asked
  }
  return {
    get,
    settled: async () => (ctx.target.model ? ctx.target.model : asked ? asked.catch(() => undefined) : undefined),
  }
}

function askModels(ctx: RunContext): Promise<string> {
  return (async () => {
    const url = endpointUrl(ctx, '/v1/models')
    const expected = 'a model id from /v1/models'
    try {
      const { res } = await withRetries(ctx, { method: 'GET', url, headers: v1Headers(ctx), timeoutMs: Math.min(30_000, ctx.target.probeTimeoutMs) })
      const id = (() => {
        try {
          return (JSON.parse(res.body) as { data?: Array<{ id?: unknown }> }).data?.[0]?.id
        } catch {
          return undefined
        }
      })()
      if (res.status === 200 && typeof id === 'string') return id
      throw new ProbeBlocked({
        verdict: 'failed',
        expected,
        observed: res.status === 200 ? `no model id in ${res.body.slice(0, 200)}` : `HTTP ${res.status}: ${errorMessage(res.body)}`,
        where: `GET ${url}`,
        next: res.status === 401 ? 'the endpoint wants an API key: set VERIFY_API_KEY (env or .env) or pass --api-key-file PATH' : 'pass --model <id> explicitly, or check --base-url',
        evidence: { status: res.status },
      })
    } catch (error) {
      if (!(error instanceof HttpError)) throw error
      throw new ProbeBlocked({ verdict: 'inconclusive', expected, observed: error.message, where: `GET ${url}`, next: 'the endpoint stopped answering after /health: check it, then run again', evidence: {} })
    }
  })()
}

/** Statuses a gateway or a busy engine answers to say "later": retried, never counted as a completion. */
const RETRY_STATUSES = new Set([429, 503])

/** Seconds (or an HTTP date) of a Retry-After header, in ms; undefined when absent or unreadable. */
export function retryAfterMs(header: string | undefined, nowMs: number): number | undefined {
  if (header === undefined || header.trim() === '') return undefined
  const t = header.trim()
  if (/^\d+(\.\d+)?$/.test(t)) return Math.round(Number(t) * 1000)
  const date = Date.parse(t)
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs)
}

/**
 * One /v1 request, retried on 429 and 503 while the probe's timeout allows: each wait is the
 * Retry-After the endpoint asked for (1 s when it names none), and every retry is kept for the evidence.
 * The time spent is counted from the exchanges' own durations and the waits, never by reading the
 * run's clock: a replay takes exactly the recorded path.
 */
export async function withRetries(ctx: RunContext, req: HttpRequest): Promise<{ res: HttpResponse; retries: ProbeRetry[] }> {
  const retries: ProbeRetry[] = []
  let spent = 0
  for (;;) {
    const res = await ctx.http.request({ ...req, timeoutMs: Math.max(50, req.timeoutMs - spent) })
    spent += res.durationMs
    if (!RETRY_STATUSES.has(res.status)) return { res, retries }
    const header = res.headers['retry-after']
    const wait = retryAfterMs(header, Date.parse(res.headers.date ?? '') || Date.now()) ?? 1000
    // Only a wait that leaves time for the request itself is taken; else the last answer stands.
    if (wait >= req.timeoutMs - spent) return { res, retries }
    spent += wait
    retries.push({ status: res.status, retryAfter: header ?? null, waitedMs: wait })
    ctx.progress(`${req.method} ${req.url}: HTTP ${res.status}, retrying after ${formatDuration(wait)} (Retry-After ${header ?? 'absent'})`)
    await ctx.clock.sleep(wait)
  }
}

async function probe(ctx: RunContext, inputs: ProbeInputs, expected: string, build: (model: string) => ChatRequest, judge: (status: number, body: string) => ProbeReply, extra: ProbeEvidence): Promise<Judgement> {
  const blocked = notAttempted(ctx, inputs, expected)
  if (blocked) return blocked
  const url = endpointUrl(ctx, '/v1/chat/completions')
  let model: string
  try {
    model = await (inputs.model ?? servedModel(ctx)).get()
  } catch (error) {
    if (error instanceof ProbeBlocked) return { ...error.judgement, expected }
    throw error
  }
  const request = build(model)
  const where = `POST ${url} (model ${model})`
  try {
    const { res, retries } = await withRetries(ctx, { method: 'POST', url, headers: v1Headers(ctx), body: JSON.stringify(request), timeoutMs: ctx.target.probeTimeoutMs })
    const reply = judge(res.status, res.body)
    const retried = retries.length > 0 ? { retries } : {}
    // A 429/503 that outlasted the probe's timeout: the gateway's overload, said as such, never a completion.
    if (res.status === 429 || res.status === 503) {
      return {
        ...reply,
        observed: `${reply.observed} (${retries.length} retr${retries.length === 1 ? 'y' : 'ies'} honouring Retry-After within ${formatDuration(ctx.target.probeTimeoutMs)})`,
        next: `the endpoint (or a gateway before it) is overloaded and kept answering ${res.status}: run again when it has room, or raise --probe-timeout to wait longer`,
        expected,
        where,
        evidence: { ...reply.evidence, ...extra, ...retried, model },
      }
    }
    return { ...reply, expected, where, evidence: { ...reply.evidence, ...extra, ...retried, model, maxTokens: request.max_tokens, ms: res.durationMs } }
  } catch (error) {
    if (!(error instanceof HttpError)) throw error
    if (error.failure === 'refused' || error.failure === 'dns') {
      return { verdict: 'inconclusive', expected, observed: error.message, where, next: 'the endpoint went away after /health answered: check whether the engine restarted (ledger), then run again', evidence: { ...extra } }
    }
    if (error.failure === 'too-large') {
      return { verdict: 'inconclusive', expected, observed: error.message, where, next: "the reply is larger than armproof's own cap, so armproof did not judge it: this is armproof's limit, not an engine fault; check what the endpoint sends (a proxy's page?)", evidence: { ...extra, failure: error.failure } }
    }
    if (error.failure === 'tls') {
      return { verdict: 'inconclusive', expected, observed: error.message, where, next: 'the certificate changed after first contact: pass its CA with --ca-file PATH (NODE_EXTRA_CA_CERTS works too), then run again', evidence: { ...extra, failure: error.failure } }
    }
    return {
      verdict: 'failed',
      expected,
      observed: error.failure === 'timeout' ? `no answer within ${formatDuration(ctx.target.probeTimeoutMs)} (the request was accepted)` : `the reply broke off: ${error.message}`,
      where,
      next: error.failure === 'timeout'
        ? `the engine takes requests but does not complete them: check in_flight/queue_cap on /health and the engine log; raise --probe-timeout only if the model is known to be this slow`
        : 'the connection dropped mid-reply: check the engine log for a crash or restart, and any proxy in between',
      evidence: { ...extra, failure: error.failure },
    }
  }
}

export function checkExact(ctx: RunContext, inputs: InputsOf<'probe.exact'>): Promise<Judgement> {
  const word = ctx.choices.pick('exactWord', EXACT_WORDS)
  return probe(ctx, inputs, `content says "${word}" at temperature 0`, (m) => exactRequest(m, word), (s, b) => judgeExact(s, b, word), { word })
}

export function checkTools(ctx: RunContext, inputs: InputsOf<'probe.tools'>): Promise<Judgement> {
  const token = ctx.choices.pick('toolToken', EXACT_WORDS)
  return probe(ctx, inputs, `a real tool_calls entry record_probe_token({"token":"${token}"})`, (m) => toolsRequest(m, token), (s, b) => judgeTools(s, b, token), { token })
}

export function checkVision(ctx: RunContext, inputs: InputsOf<'probe.vision'>): Promise<Judgement> {
  const colour = ctx.choices.pick('visionColour', COLOUR_NAMES)
  const decoy = ctx.choices.pick('visionDecoy', COLOUR_NAMES.filter((c) => c !== colour))
  return probe(ctx, inputs, `the reply names the picture's colour (${colour}); the prompt names only ${decoy}`, (m) => visionRequest(m, colour, decoy), (s, b) => judgeVision(s, b, colour, decoy), { colour, decoy })
}
