// Steps `probe.exact`, `probe.tools`, `probe.vision`: three requests sent to the endpoint itself,
// run side by side. A probe is not attempted when /health never came up. A 200 reply is judged
// as this engine's answer first (./identity.ts: the model that produced it, not a cache's), then
// by its content (./exact.ts, ./tools.ts, ./vision.ts). The I/O of the probes is here and in
// ./ask.ts (one request, retried while the endpoint says "later").
import { formatDuration } from '../../config/duration.ts'
import { HttpError, type HttpResponse } from '../../seams/http.ts'
import { COLOUR_NAMES, EXACT_WORDS, exactRequest, toolsRequest, visionRequest, type ChatRequest } from './requests.ts'
import type { ProbeReply } from './reply.ts'
import { judgeExact } from './exact.ts'
import { judgeTools } from './tools.ts'
import { judgeVision } from './vision.ts'
import { endpointUrl, v1Headers, type InputsOf, type RunContext, type ServedModel } from '../context.ts'
import type { StepId } from '../registry.ts'
import type { Judgement } from '../verdict.ts'
import type { ProbeEvidence } from './evidence.ts'
import { ProbeBlocked, withRetries } from './ask.ts'
import { fromError, fromV1 } from '../first-contact/answers.ts'
import { mistaken } from '../mistake.ts'
import { probeBudget, type PROMPT_MARGIN } from './budget.ts'
import { servedModel } from './served.ts'
import { judgeFresh, judgeModel, judgeSharedId, replyMeta, sameWithoutCards, type ReplyMeta } from './identity.ts'

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
 * Whether a 200 reply is this engine's answer to this request: the model asked (or a real variant;
 * the cards are asked only when it names another id), no other probe's reply id, made after the
 * request was sent. Undefined: it is; the content judge decides.
 */
async function judgeIdentity(
  served: ServedModel,
  model: string,
  meta: ReplyMeta,
  res: HttpResponse,
  sharing: Promise<StepId[]>,
): Promise<Pick<Judgement, 'verdict' | 'observed' | 'next'> | undefined> {
  const other = typeof meta.model === 'string' && !sameWithoutCards(model, meta.model)
  const wrongModel = judgeModel(model, meta, other ? await served.cards() : undefined)
  if (wrongModel) return wrongModel
  const sentAtMs = res.receivedAtMs === undefined ? undefined : res.receivedAtMs - res.durationMs
  return judgeSharedId(meta, await sharing) ?? judgeFresh(meta, sentAtMs)
}

/** How a probe is asked and judged: its request for a model and a max_tokens, its reply's judge, and which prompt margin its budget keeps. */
interface ProbeWay {
  build: (model: string, maxTokens: number) => ChatRequest
  judge: (status: number, body: string, maxTokens: number) => ProbeReply
  prompt: keyof typeof PROMPT_MARGIN
}

async function probe(
  ctx: RunContext,
  inputs: ProbeInputs,
  id: StepId,
  expected: string,
  way: ProbeWay,
  extra: ProbeEvidence,
): Promise<Judgement> {
  // Judged alone (no shared model handed in), a probe settles its reply id with itself only.
  const served = inputs.model ?? servedModel(ctx, [id])
  let settled = false
  const settle = (replyId: string | null): Promise<StepId[]> => {
    settled = true
    return served.replyId(id, replyId)
  }
  try {
    return await sendProbe(ctx, inputs, served, settle, expected, way, extra)
  } finally {
    // Every way out settles: the other probes never wait for one that got no reply.
    if (!settled) void settle(null)
  }
}

async function sendProbe(
  ctx: RunContext,
  inputs: ProbeInputs,
  served: ServedModel,
  settle: (replyId: string | null) => Promise<StepId[]>,
  expected: string,
  way: ProbeWay,
  extra: ProbeEvidence,
): Promise<Judgement> {
  const blocked = notAttempted(ctx, inputs, expected)
  if (blocked) return blocked
  const url = endpointUrl(ctx, '/v1/chat/completions')
  let model: string
  try {
    model = await served.get()
  } catch (error) {
    if (error instanceof ProbeBlocked) return { ...error.judgement, expected }
    throw error
  }
  // What /v1/models shows the operator got wrong (a --model it does not list, the key): first contact's, found here.
  const mistake = await served.mistake()
  if (mistake)
    return mistaken(mistake, {
      expected,
      observed: `GET ${endpointUrl(ctx, '/v1/models')} before the probe`,
      evidence: { ...extra, model },
    })
  // max_tokens within the context /v1/models says the model is served with (asked once, shared).
  const card = (await served.cards())?.find((c) => c.id === model)
  const budget = probeBudget(card?.maxModelLen, way.prompt)
  const where = `POST ${url} (model ${model})`
  const sized = { maxModelLen: budget.maxModelLen, ...(budget.note ? { budget: budget.note } : {}) }
  if (budget.maxTokens === undefined)
    return {
      verdict: 'inconclusive',
      expected,
      observed: budget.note!,
      where,
      next: `the model is served with too small a context for this probe: serve it with a larger --max-model-len, or run again with --skip ${way.prompt === 'vision' ? 'probe.vision' : 'this probe'} (shown skipped, never passed)`,
      evidence: { ...extra, model, ...sized },
    }
  const maxTokens = budget.maxTokens
  const request = way.build(model, maxTokens)
  try {
    const { res, retries } = await withRetries(ctx, {
      method: 'POST',
      url,
      headers: v1Headers(ctx),
      body: JSON.stringify(request),
      timeoutMs: ctx.target.probeTimeoutMs,
    })
    const reply = way.judge(res.status, res.body, maxTokens)
    const retried = retries.length > 0 ? { retries } : {}
    // The key (401/403), or a redirect to another origin: the operator's, by first contact's rule.
    const mistake = fromV1(res, ctx.target, '/v1/chat/completions', `POST ${url}`)
    if (mistake)
      return mistaken(mistake, { expected, observed: reply.observed, evidence: { ...reply.evidence, ...extra, ...retried, model } })
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
    const evidence = { ...reply.evidence, ...extra, ...retried, model, maxTokens: request.max_tokens, ...sized, ms: res.durationMs }
    const meta = res.status === 200 ? replyMeta(res.body) : undefined
    if (meta) {
      const identity = await judgeIdentity(served, model, meta, res, settle(meta.id))
      const withReply = { ...evidence, reply: { model: meta.model ?? null, id: meta.id, created: meta.created } }
      // Not this engine's answer to this request: whatever its content, that is the verdict.
      if (identity) return { ...identity, expected, where, evidence: withReply }
      return { ...reply, expected, where, evidence: withReply }
    }
    return { ...reply, expected, where, evidence }
  } catch (error) {
    if (!(error instanceof HttpError)) throw error
    if (error.failure === 'refused' || error.failure === 'dns') {
      return {
        verdict: 'inconclusive',
        expected,
        observed: error.message,
        where,
        next: 'the endpoint went away after /health answered: check whether the engine restarted (ledger), then run again',
        evidence: { ...extra },
      }
    }
    if (error.failure === 'too-large') {
      return {
        verdict: 'inconclusive',
        expected,
        observed: error.message,
        where,
        next: "the reply is larger than armproof's own cap, so armproof did not judge it: this is armproof's limit, not an engine fault; check what the endpoint sends (a proxy's page?)",
        evidence: { ...extra, failure: error.failure },
      }
    }
    // A certificate not trusted, https:// on a plain port: the operator's, by first contact's rule.
    const mistake = fromError(error, ctx.target, `POST ${url}`)
    if (mistake) return mistaken(mistake, { expected, observed: error.message, evidence: { ...extra, failure: error.failure } })
    return {
      verdict: 'failed',
      expected,
      observed:
        error.failure === 'timeout'
          ? `no answer within ${formatDuration(ctx.target.probeTimeoutMs)} (the request was accepted)`
          : `the reply broke off: ${error.message}`,
      where,
      next:
        error.failure === 'timeout'
          ? `the engine takes requests but does not complete them: check in_flight/queue_cap on /health and the engine log; raise --probe-timeout only if the model is known to be this slow`
          : 'the connection dropped mid-reply: check the engine log for a crash or restart, and any proxy in between',
      evidence: { ...extra, failure: error.failure },
    }
  }
}

export function checkExact(ctx: RunContext, inputs: InputsOf<'probe.exact'>): Promise<Judgement> {
  const word = ctx.choices.pick('exactWord', EXACT_WORDS)
  return probe(
    ctx,
    inputs,
    'probe.exact',
    `content says "${word}" at temperature 0`,
    { build: (m, n) => exactRequest(m, word, n), judge: (s, b) => judgeExact(s, b, word), prompt: 'text' },
    { word },
  )
}

export function checkTools(ctx: RunContext, inputs: InputsOf<'probe.tools'>): Promise<Judgement> {
  const token = ctx.choices.pick('toolToken', EXACT_WORDS)
  return probe(
    ctx,
    inputs,
    'probe.tools',
    `a real tool_calls entry record_probe_token({"token":"${token}"})`,
    { build: (m, n) => toolsRequest(m, token, n), judge: (s, b) => judgeTools(s, b, token, ctx.engine.probes), prompt: 'text' },
    { token },
  )
}

export function checkVision(ctx: RunContext, inputs: InputsOf<'probe.vision'>): Promise<Judgement> {
  const colour = ctx.choices.pick('visionColour', COLOUR_NAMES)
  const decoy = ctx.choices.pick(
    'visionDecoy',
    COLOUR_NAMES.filter((c) => c !== colour),
  )
  return probe(
    ctx,
    inputs,
    'probe.vision',
    `the reply names the picture's colour (${colour}); the prompt names only ${decoy}`,
    {
      build: (m, n) => visionRequest(m, colour, decoy, n),
      judge: (s, b, n) => judgeVision(s, b, colour, decoy, n, ctx.engine.probes),
      prompt: 'vision',
    },
    { colour, decoy },
  )
}
