// The 400s a real vLLM answers before any token is generated, in its words (fixtures/real/vllm/
// 9aaf83ef5/live: chat-tools.json, chat-image.json, and the VLLMValidationError its log prints for
// a prompt past the context), and the reply's fields as the real build writes them. Pure.
import { hasImagePart } from '../vision.ts'
import { json } from './types.ts'
import type { Reply } from './types.ts'

/** What the served engine was started with that decides a refusal. */
export interface VllmServing {
  /** The context: prompt and reply together (max_model_len). */
  maxModelLen: number
  /** --enable-auto-tool-choice and --tool-call-parser both given. */
  autoToolChoice: boolean
  /** The served model takes images (its config has a vision tower); the emulation's model does unless REF_TEXT_ONLY_MODEL=1. */
  multimodal: boolean
  /** The first served name: what the image refusal names. */
  servedName: string
}

const badRequest = (message: string, param: string | null = null): Reply =>
  json(400, { error: { message, type: 'BadRequestError', param, code: 400 } })

/** The prompt's characters as vLLM's renderer counts them before tokenizing (the messages' text). */
function promptChars(messages: readonly unknown[]): number {
  const text = (c: unknown): string =>
    typeof c === 'string'
      ? c
      : Array.isArray(c)
        ? c.map((p) => (typeof (p as { text?: unknown })?.text === 'string' ? (p as { text: string }).text : '')).join('')
        : ''
  return messages.reduce<number>((n, m) => n + text((m as { content?: unknown })?.content).length, 0)
}

/**
 * vLLM's 400 for this request, or null when it is served. `promptTokens`: the prompt's tokens as
 * the reference model counts them. In vLLM's order: the tool choice (the serving layer), the image
 * (the renderer), then the context: max_tokens that leaves no room for the prompt is refused by
 * the renderer's character check (the real text); a prompt that does not fit beside max_tokens by
 * the token check (that text is not in the corpus: written in the same words, unconfirmed).
 */
export function vllmRefusal(body: Record<string, unknown>, promptTokens: number, s: VllmServing): Reply | null {
  const tools = Array.isArray(body.tools) && body.tools.length > 0
  const choice = body.tool_choice
  if (tools && (choice === undefined || choice === null || choice === 'auto') && !s.autoToolChoice)
    return badRequest('"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set')
  const messages = Array.isArray(body.messages) ? body.messages : []
  if (!s.multimodal && hasImagePart(messages)) return badRequest(`${s.servedName} is not a multimodal model`)
  const maxTokens =
    typeof body.max_tokens === 'number'
      ? body.max_tokens
      : typeof body.max_completion_tokens === 'number'
        ? body.max_completion_tokens
        : null
  if (maxTokens === null) return null
  const room = s.maxModelLen - maxTokens
  const chars = promptChars(messages)
  if (room <= 0 && chars > 0)
    return badRequest(
      `This model's maximum context length is ${s.maxModelLen} tokens. However, you requested ${maxTokens} output tokens and your prompt contains ${chars} characters (more than 0 characters, which is the upper bound for 0 input tokens). Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_text, value=${chars})`,
      'input_text',
    )
  if (promptTokens + maxTokens > s.maxModelLen)
    return badRequest(
      `This model's maximum context length is ${s.maxModelLen} tokens. However, you requested ${maxTokens} output tokens and your prompt contains ${promptTokens} input tokens, for a total of ${promptTokens + maxTokens} tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=${promptTokens})`,
      'input_tokens',
    )
  return null
}

/** A chat completion as the real build writes it: every field of its ChatCompletionResponse, null where the reference model has nothing to say. */
export function vllmReply(response: Record<string, unknown>, version: string): Record<string, unknown> {
  const choices = (response.choices as Array<Record<string, unknown>>).map((c) => {
    const m = c.message as Record<string, unknown>
    const message = {
      role: m.role,
      content: m.content ?? null,
      refusal: m.refusal ?? null,
      annotations: null,
      audio: null,
      function_call: null,
      tool_calls: m.tool_calls ?? [],
      reasoning: m.reasoning ?? m.reasoning_content ?? null,
    }
    return {
      index: c.index,
      message,
      logprobs: c.logprobs ?? null,
      finish_reason: c.finish_reason,
      stop_reason: c.stop_reason ?? null,
      token_ids: null,
    }
  })
  return {
    id: response.id,
    object: response.object,
    created: response.created,
    model: response.model,
    choices,
    service_tier: null,
    system_fingerprint: `vllm-${version}`,
    usage: response.usage,
    prompt_logprobs: null,
    prompt_token_ids: null,
    prompt_text: null,
    kv_transfer_params: null,
  }
}
