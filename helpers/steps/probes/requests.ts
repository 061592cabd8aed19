// The three behaviour probes: request builders and judges of the reply (the vision reply's in
// ./vision.ts). Pure: no I/O.
// Judges accept every real wire variant (reasoning_content or reasoning, <think> left in
// content, tool arguments as a string or an object, flat or nested error bodies) and never pass
// a wrong answer.
import { encodeSolidPng, type Rgb } from './png.ts'
import type { ProbeEvidence } from './evidence.ts'

export const EXACT_WORDS = ['kestrel', 'obsidian', 'tangerine', 'marzipan', 'quasar', 'juniper', 'sextant', 'halcyon'] as const
export const PROBE_COLOURS = {
  red: [255, 0, 0],
  green: [0, 160, 0],
  blue: [0, 0, 255],
  yellow: [255, 255, 0],
  orange: [255, 140, 0],
  purple: [128, 0, 128],
} as const satisfies Record<string, Rgb>
export type ProbeColour = keyof typeof PROBE_COLOURS
export const COLOUR_NAMES = Object.keys(PROBE_COLOURS) as ProbeColour[]

export const PROBE_TOOL = {
  name: 'record_probe_token',
  description: 'Record the probe token the user gives.',
  parameters: { type: 'object', properties: { token: { type: 'string' } }, required: ['token'] },
} as const

export const MIN_VISION_MAX_TOKENS = 512
export const PROBE_MAX_TOKENS = 1024

export interface ChatRequest {
  model: string
  messages: unknown[]
  temperature: number
  max_tokens: number
  tools?: unknown[]
  tool_choice?: 'auto'
}

export function exactRequest(model: string, word: string): ChatRequest {
  return {
    model,
    messages: [{ role: 'user', content: `Reply with exactly this one word and nothing else: ${word}` }],
    temperature: 0,
    max_tokens: PROBE_MAX_TOKENS,
  }
}

export function toolsRequest(model: string, token: string): ChatRequest {
  return {
    model,
    messages: [{ role: 'user', content: `Call ${PROBE_TOOL.name} with the token "${token}".` }],
    temperature: 0,
    max_tokens: PROBE_MAX_TOKENS,
    tools: [{ type: 'function', function: PROBE_TOOL }],
    tool_choice: 'auto',
  }
}

/**
 * A solid-colour PNG as an `image_url` data-URL part (never the legacy `images` field). The text
 * names a decoy colour the picture contradicts, never the real one, so a blind reply cannot pass.
 */
export function visionRequest(model: string, colour: ProbeColour, decoy: ProbeColour, maxTokens = PROBE_MAX_TOKENS): ChatRequest {
  if (maxTokens < MIN_VISION_MAX_TOKENS) {
    throw new RangeError(`vision probe needs max_tokens ≥ ${MIN_VISION_MAX_TOKENS} (thinking eats a smaller budget and the model reads as blind), got ${maxTokens}`)
  }
  if (decoy === colour) throw new RangeError('the decoy colour must differ from the picture')
  const png = encodeSolidPng(64, 64, PROBE_COLOURS[colour])
  return {
    model,
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: `Is this square ${decoy}? Answer with the name of its colour in one word.` },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } },
        ],
      },
    ],
    temperature: 0,
    max_tokens: maxTokens,
  }
}

export interface ProbeReply {
  verdict: 'passed' | 'failed'
  observed: string
  next?: string
  evidence: ProbeEvidence
}

interface Message {
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
    if (err && typeof err === 'object' && typeof (err as Record<string, unknown>).message === 'string') return (err as Record<string, string>).message!
    if (typeof parsed.message === 'string') return parsed.message
    if (typeof err === 'string') return err
    return JSON.stringify(parsed).slice(0, 300)
  } catch {
    return body.trim() === '' ? '(empty body)' : body.slice(0, 300)
  }
}

function short(text: string, max = 160): string {
  const one = text.replace(/\s+/g, ' ').trim()
  return one.length > max ? `${one.slice(0, max)}…` : one
}

/** Reads the first choice of a 200 reply, or says what is wrong with it. */
export function readChoice(status: number, body: string): { message: Message; finish: string; usage?: unknown } | ProbeReply {
  if (status !== 200) {
    const msg = errorMessage(body)
    let next = 'read the engine log for this request; the endpoint refuses the probe'
    if (status === 401 || status === 403) next = 'the endpoint wants an API key: set VERIFY_API_KEY (env or .env) or pass --api-key-file PATH'
    if (status === 404 && /model/i.test(msg)) next = 'the model id is wrong: pass --model with an id from /v1/models'
    if (status === 429 || status === 503) next = 'the endpoint (or a gateway before it) answers "later": run again when it has room'
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
    return { verdict: 'failed', observed: `HTTP 200 without choices[0].message: ${short(body)}`, next: 'the reply is not an OpenAI chat completion: check --base-url points at the engine', evidence: { body: body.slice(0, 1000) } }
  }
  return { message: choice.message, finish: String(choice.finish_reason ?? ''), usage: (parsed as { usage?: unknown }).usage }
}

function reasoningOf(m: Message): string {
  const r = typeof m.reasoning_content === 'string' ? m.reasoning_content : typeof m.reasoning === 'string' ? m.reasoning : ''
  return r
}

/** Content with any `<think>…</think>` block removed (left there when no reasoning parser runs), trimmed. */
export function answerText(content: unknown): string | null {
  if (typeof content !== 'string') return null
  return content.replace(/<think>[\s\S]*?<\/think>/gi, '').replace(/^[\s\S]*<\/think>/i, '').trim()
}

function words(text: string): string[] {
  return text.toLowerCase().split(/[^a-z0-9-]+/).filter(Boolean)
}

/** Pairs that may wrap a one-word answer: quotes, backticks, markdown emphasis, brackets of emphasis. */
const WRAPPERS: ReadonlyArray<readonly [string, string]> = [
  ['```', '```'], ['**', '**'], ['__', '__'], ['~~', '~~'],
  ['"', '"'], ["'", "'"], ['`', '`'], ['*', '*'], ['_', '_'],
  ['\u201c', '\u201d'], ['\u2018', '\u2019'], ['\u00ab', '\u00bb'], ['\u201e', '\u201c'],
]
/** One final punctuation mark a one-word answer may end with. */
const FINAL_MARK = /[.!?,;:\u2026\u3002\uff01\uff1f]$/u

/**
 * The answer stripped the way the exact probe allows: whitespace, surrounding quotes, backticks
 * (a code fence with an optional language tag too) and markdown emphasis, in any nesting, and at
 * most one final punctuation mark inside or outside them. What is left must be the word itself.
 */
export function bareAnswer(answer: string): string {
  let s = answer.trim()
  let markUsed = false
  for (let round = 0; round < 32; round++) {
    const fence = /^```[A-Za-z0-9_-]*\n([\s\S]*?)\n?```$/.exec(s)
    if (fence) {
      s = fence[1]!.trim()
      continue
    }
    const pair = WRAPPERS.find(([open, close]) => s.length >= open.length + close.length + 1 && s.startsWith(open) && s.endsWith(close))
    if (pair) {
      s = s.slice(pair[0].length, s.length - pair[1].length).trim()
      continue
    }
    if (!markUsed && FINAL_MARK.test(s)) {
      s = s.slice(0, -1).trimEnd()
      markUsed = true
      continue
    }
    break
  }
  return s
}

/** The reply is the word: nothing else after reasoning, wrappers and one final mark are removed (case-insensitive). */
export function isExactWord(answer: string, word: string): boolean {
  return bareAnswer(answer).toLowerCase() === word.toLowerCase()
}

export function budgetOrParser(finish: string, where: string): string {
  return finish === 'length'
    ? `finish_reason was "length": the token budget ran out inside reasoning; the probe asks max_tokens ${PROBE_MAX_TOKENS}, so the model thinks too long or ${where}`
    : `the answer is in reasoning only: the reasoning parser likely misclassifies the reply (check --reasoning-parser), or ${where}`
}

export function judgeExact(status: number, body: string, word: string): ProbeReply {
  const c = readChoice(status, body)
  if ('verdict' in c) return c
  const ended = endedWithoutAnswer(c)
  if (ended) return ended
  const answer = answerText(c.message.content)
  const reasoning = reasoningOf(c.message)
  const evidence = { content: c.message.content ?? null, reasoningChars: reasoning.length, finish: c.finish }
  if (answer === null || answer === '') {
    const inReasoning = words(reasoning).includes(word)
    return {
      verdict: 'failed',
      observed: `content is ${answer === null ? 'null' : 'empty'}${inReasoning ? `; "${word}" appears only in reasoning` : ''} (finish_reason ${c.finish || 'none'})`,
      next: budgetOrParser(c.finish, 'the chat template swallows the answer'),
      evidence,
    }
  }
  if (!words(answer).includes(word)) {
    return { verdict: 'failed', observed: `content ${JSON.stringify(short(answer))} does not contain "${word}"`, next: 'the model does not follow a literal instruction at temperature 0: check the served model and chat template', evidence }
  }
  if (!isExactWord(answer, word)) {
    return {
      verdict: 'failed',
      observed: `answered with a sentence, not the word: content ${JSON.stringify(short(answer))}`,
      next: `the probe asks for exactly "${word}" and nothing else; a reply that only contains it (a refusal, an explanation, a chat template that adds text) is not a literal answer: check the served model, its chat template and system prompt`,
      evidence,
    }
  }
  return { verdict: 'passed', observed: `content ${JSON.stringify(short(answer, 60))}${reasoning ? ' (reasoning present, as expected)' : ''}`, evidence }
}

/** An endpoint served without tools on purpose may say so (helpers/config/skips.ts). */
const NO_TOOLS_ON_PURPOSE = '; or, if this endpoint serves no tool calls on purpose, run again with --skip probe.tools (shown skipped, never passed)'

export function judgeTools(status: number, body: string, token: string): ProbeReply {
  // llama.cpp answers tools without --jinja with HTTP 500 "tools param requires --jinja flag" (not 400).
  if (status >= 400 && /--jinja|\bjinja\b/i.test(errorMessage(body))) {
    return {
      verdict: 'failed',
      observed: `HTTP ${status}: ${short(errorMessage(body), 300)}`,
      next: `the server (llama.cpp) was started without --jinja, so it refuses tools: restart llama-server with --jinja (and a chat template that knows tools)${NO_TOOLS_ON_PURPOSE}`,
      evidence: { status, body: body.slice(0, 1000) },
    }
  }
  if (status === 400 && /tool.choice|tool-call-parser|tool_call_parser|--jinja/i.test(errorMessage(body))) {
    return {
      verdict: 'failed',
      observed: `HTTP 400: ${short(errorMessage(body), 300)}`,
      next: `tool parser misconfigured: start the engine with --enable-auto-tool-choice --tool-call-parser <parser for this model>${NO_TOOLS_ON_PURPOSE}`,
      evidence: { status, body: body.slice(0, 1000) },
    }
  }
  const c = readChoice(status, body)
  if ('verdict' in c) return c
  const ended = endedWithoutAnswer(c)
  if (ended) return ended
  const calls = Array.isArray(c.message.tool_calls) ? (c.message.tool_calls as Array<{ function?: { name?: unknown; arguments?: unknown } }>) : []
  const content = typeof c.message.content === 'string' ? c.message.content : ''
  const evidence = { toolCalls: calls.slice(0, 3), content: content.slice(0, 500), finish: c.finish }
  if (calls.length === 0) {
    const asText = /<tool_call>|"name"\s*:|\bfunctions?\.|record_probe_token\s*\(/.test(content)
    return {
      verdict: 'failed',
      observed: asText ? `no tool_calls; the call is written as text in content: ${short(content)}` : `no tool_calls; content ${JSON.stringify(short(content))} (finish_reason ${c.finish || 'none'})`,
      next: asText
        ? 'tool parser misconfigured: the model emits the call but the server does not parse it; set --tool-call-parser to the one for this model (e.g. hermes) with --enable-auto-tool-choice'
        : 'the model did not call the tool with tool_choice auto: check --enable-auto-tool-choice, --tool-call-parser and the chat template',
      evidence,
    }
  }
  const call = calls[0]!
  const name = call.function?.name
  if (name !== PROBE_TOOL.name) {
    return { verdict: 'failed', observed: `tool_calls[0] calls ${JSON.stringify(name)}, not ${PROBE_TOOL.name}`, next: 'the tool parser or model mangles function names: check --tool-call-parser', evidence }
  }
  const raw = call.function?.arguments
  let args: unknown = raw
  if (typeof raw === 'string') {
    try {
      args = JSON.parse(raw)
    } catch {
      return { verdict: 'failed', observed: `arguments are not JSON: ${short(raw)}`, next: 'the tool parser cuts or garbles arguments (a known hermes-parser failure): update the parser or the chat template', evidence }
    }
  }
  if (!args || typeof args !== 'object' || Array.isArray(args)) {
    return { verdict: 'failed', observed: `arguments are not an object: ${short(JSON.stringify(raw))}`, next: 'the tool parser returns malformed arguments: check --tool-call-parser', evidence }
  }
  const got = (args as Record<string, unknown>).token
  if (got !== token) {
    return { verdict: 'failed', observed: `arguments ${short(JSON.stringify(args))} do not carry token "${token}"`, next: 'the call is parsed but its arguments are wrong: check the model and chat template', evidence }
  }
  return { verdict: 'passed', observed: `tool_calls[0] ${PROBE_TOOL.name}(${JSON.stringify(args)})${typeof raw === 'string' ? '' : ' (arguments as an object)'}`, evidence }
}
