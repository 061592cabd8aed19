// A probe's reply read: its first choice, its answer text without reasoning, the error of a
// non-200 body, a reply that ended without an answer. What the three judges of the probes share
// (./exact.ts, ./tools.ts, ./vision.ts). Pure: no I/O.
// Every real wire variant is read (reasoning_content or reasoning, <think> left in content, flat or
// nested error bodies); a wrong answer never passes.
import type { ProbeEvidence } from './evidence.ts'
import { PROBE_MAX_TOKENS } from './requests.ts'

export interface ProbeReply {
  verdict: 'passed' | 'failed'
  observed: string
  next?: string
  evidence: ProbeEvidence
}

export interface Message {
  content?: unknown
  reasoning_content?: unknown
  reasoning?: unknown
  tool_calls?: unknown
  /** OpenAI's refusal field: set (content null) when the model declines. */
  refusal?: unknown
}

/**
 * A reply that ended without an answer for a reason the engine names itself: a refusal (OpenAI's
 * `refusal`), or `finish_reason` `abort` (SGLang and others, when the engine cancelled the request).
 * Said as such, never blamed on the reasoning or tool parser.
 */
export function endedWithoutAnswer(c: { message: Message; finish: string }): ProbeReply | undefined {
  const refusal = typeof c.message.refusal === 'string' && c.message.refusal.trim() !== '' ? c.message.refusal : undefined
  if (refusal !== undefined) {
    return {
      verdict: 'failed',
      observed: `the model refused: ${JSON.stringify(short(refusal))} (refusal set, finish_reason ${c.finish || 'none'})`,
      next: 'the model or a moderation layer declined the probe; the parsers are not at fault: check the served model, its system prompt and any moderation in front of the endpoint',
      evidence: { refusal: refusal.slice(0, 500), finish: c.finish },
    }
  }
  if (c.finish === 'abort') {
    return {
      verdict: 'failed',
      observed: `the engine aborted the request (finish_reason abort); content ${JSON.stringify(short(typeof c.message.content === 'string' ? c.message.content : String(c.message.content ?? null)))}`,
      next: 'the engine cancelled this request itself (out of memory or KV cache, a scheduler abort, a restart): read the engine log at this time, then run again',
      evidence: { finish: c.finish, content: c.message.content ?? null },
    }
  }
  return undefined
}

/** The error text of a non-200 body, whichever shape the engine uses (nested, flat, string). */
export function errorMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>
    const err = parsed.error
    if (err && typeof err === 'object' && typeof (err as Record<string, unknown>).message === 'string')
      return (err as Record<string, string>).message!
    if (typeof parsed.message === 'string') return parsed.message
    if (typeof err === 'string') return err
    return JSON.stringify(parsed).slice(0, 300)
  } catch {
    return body.trim() === '' ? '(empty body)' : body.slice(0, 300)
  }
}

export function short(text: string, max = 160): string {
  const one = text.replace(/\s+/g, ' ').trim()
  return one.length > max ? `${one.slice(0, max)}…` : one
}

/** Reads the first choice of a 200 reply, or says what is wrong with it. */
export function readChoice(status: number, body: string): { message: Message; finish: string; usage?: unknown } | ProbeReply {
  if (status !== 200) {
    const msg = errorMessage(body)
    let next = 'read the engine log for this request; the endpoint refuses the probe'
    if (status === 401 || status === 403)
      next = 'the endpoint wants an API key: set VERIFY_API_KEY (env or .env) or pass --api-key-file PATH'
    if (status === 404 && /model/i.test(msg)) next = 'the model id is wrong: pass --model with an id from /v1/models'
    if (status === 429 || status === 503) next = 'the endpoint (or a gateway before it) answers "later": run again when it has room'
    // vLLM: "This model's maximum context length is N tokens. However, you requested M output tokens …".
    if (status === 400 && /maximum context length|context length is/i.test(msg))
      next =
        "the probe's prompt and its max_tokens do not fit the context the model is served with: armproof keeps max_tokens within the max_model_len /v1/models reports, so check that /v1/models (or a gateway before it) reports the engine's real --max-model-len"
    return { verdict: 'failed', observed: `HTTP ${status}: ${short(msg, 300)}`, next, evidence: { status, body: body.slice(0, 1000) } }
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return {
      verdict: 'failed',
      observed: body.trim() === '' ? 'HTTP 200 with an empty body' : `HTTP 200 but the body is not JSON: ${short(body)}`,
      next: 'something between here and the engine (proxy, load balancer) or the engine itself answers garbage: curl the endpoint directly',
      evidence: { status, body: body.slice(0, 1000) },
    }
  }
  const choice = (parsed as { choices?: unknown[] })?.choices?.[0] as { message?: Message; finish_reason?: unknown } | undefined
  if (!choice?.message || typeof choice.message !== 'object') {
    return {
      verdict: 'failed',
      observed: `HTTP 200 without choices[0].message: ${short(body)}`,
      next: 'the reply is not an OpenAI chat completion: check --base-url points at the engine',
      evidence: { body: body.slice(0, 1000) },
    }
  }
  return { message: choice.message, finish: String(choice.finish_reason ?? ''), usage: (parsed as { usage?: unknown }).usage }
}

export function reasoningOf(m: Message): string {
  const r = typeof m.reasoning_content === 'string' ? m.reasoning_content : typeof m.reasoning === 'string' ? m.reasoning : ''
  return r
}

/** Content with any `<think>…</think>` block removed (left there when no reasoning parser runs), trimmed. */
export function answerText(content: unknown): string | null {
  if (typeof content !== 'string') return null
  return content
    .replace(/<think>[\s\S]*?<\/think>/gi, '')
    .replace(/^[\s\S]*<\/think>/i, '')
    .trim()
}

/** The lower-case words of a text. */
export function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9-]+/)
    .filter(Boolean)
}

/** The next step for an answer found only in reasoning: the token budget ran out, or the reasoning parser misreads, or `where`. */
export function budgetOrParser(finish: string, where: string): string {
  return finish === 'length'
    ? `finish_reason was "length": the token budget ran out inside reasoning; the probe asks max_tokens ${PROBE_MAX_TOKENS}, so the model thinks too long or ${where}`
    : `the answer is in reasoning only: the reasoning parser likely misclassifies the reply (check --reasoning-parser), or ${where}`
}
