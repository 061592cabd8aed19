// Steps `probe.exact`, `probe.tools`, `probe.vision`: three requests to the endpoint itself,
// run side by side. A probe is not attempted when /health never came up.
import { formatDuration } from '../../config/duration.ts'
import { HttpError } from '../../seams/http.ts'
import { COLOUR_NAMES, EXACT_WORDS, exactRequest, judgeExact, judgeTools, judgeVision, toolsRequest, visionRequest, errorMessage, type ChatRequest, type ProbeReply } from './requests.ts'
import { endpointUrl, v1Headers, type InputsOf, type RunContext, type ServedModel } from '../context.ts'
import type { Judgement } from '../verdict.ts'

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
      const res = await ctx.http.request({ method: 'GET', url, headers: v1Headers(ctx), timeoutMs: Math.min(30_000, ctx.target.probeTimeoutMs) })
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

async function probe(ctx: RunContext, inputs: ProbeInputs, expected: string, build: (model: string) => ChatRequest, judge: (status: number, body: string) => ProbeReply, extra: Record<string, unknown>): Promise<Judgement> {
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
    const res = await ctx.http.request({ method: 'POST', url, headers: v1Headers(ctx), body: JSON.stringify(request), timeoutMs: ctx.target.probeTimeoutMs })
    const reply = judge(res.status, res.body)
    return { ...reply, expected, where, evidence: { ...reply.evidence, ...extra, model, maxTokens: request.max_tokens, ms: res.durationMs } }
  } catch (error) {
    if (!(error instanceof HttpError)) throw error
    if (error.failure === 'refused' || error.failure === 'dns') {
      return { verdict: 'inconclusive', expected, observed: error.message, where, next: 'the endpoint went away after /health answered: check whether the engine restarted (ledger), then run again', evidence: { ...extra } }
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
