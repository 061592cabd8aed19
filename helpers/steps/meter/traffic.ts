// The traffic a knob's meter moves only under, sent by the meter step itself, bounded: vLLM's
// prefix cache counts hits in tokens of whole cached KV blocks, capped at the prompt's length
// minus one, so the probes' own prompts (short, each its own) never hit it. Two chat completions
// sharing a prompt prefix of at least one whole block do: the second finds the first's blocks.
// A block is as long as the engine says (`block_size` of vllm:cache_config_info, on the page the
// meter already read): 16 tokens on most GPU builds, 128 on the CPU build (fixtures/real/vllm/
// 9aaf83ef5: a 64-word prefix never moved its hits, one filling a block moved them 0 → 256);
// where the engine does not say, a block of 256 is assumed, and the evidence says which. The
// prefix stays within the served context (max_model_len of /v1/models). Deterministic (no random
// choice): a replay sends the same two requests.
import { HttpError } from '../../seams/http.ts'
import type { Engine } from '../../profiles/types.ts'
import { endpointUrl, v1Headers, type RunContext } from '../context.ts'
import type { TrafficSent } from './evidence.ts'
import type { MetricsReading } from './reading.ts'

export type { TrafficSent } from './evidence.ts'

/** What each kind of traffic costs the endpoint: completions and their max_tokens (pnpm perf counts them). */
export const KNOB_TRAFFIC = { 'shared-prefix': { completions: 2, maxTokens: 8 } } as const

/** The block assumed where the engine does not say its own: larger than vLLM's GPU (16) and CPU (128) builds choose. */
export const DEFAULT_BLOCK_TOKENS = 256
/** Whole blocks the prefix is sized for (each word at least one token): two, so one stays whole whatever the chat template puts before it. */
const BLOCKS = 2
/** At most this many tokens per prefix word (`amber17`: a word and a number), for keeping the prompt within the served context. */
const TOKENS_PER_WORD = 3
/** The prompt's tokens besides the prefix: the question, the chat template's own. */
const PROMPT_REST = 64
const WORDS = ['amber', 'basalt', 'cobalt', 'delta', 'ember', 'fjord', 'garnet', 'harbor']

/** How long the shared prefix must be, from what the engine says about itself. */
export interface TrafficSizing {
  blockSize: number
  /** Where the block size came from, in words for the evidence. */
  blockSizeFrom: string
  /** The served context (GET /v1/models), when it said. */
  maxModelLen?: number
}

/** The block size from the engine's info gauge on a page the meter read (vLLM's cache_config_info `block_size`), else the assumed one. */
export function trafficSizing(engine: Engine, page: MetricsReading | undefined, maxModelLen: number | undefined): TrafficSizing {
  const context = maxModelLen === undefined ? {} : { maxModelLen }
  for (const source of engine.resolved) {
    if (source.shape !== 'info-metric' || !source.metric) continue
    const said = page?.series[source.metric]?.[0]?.labels.block_size
    const n = said === undefined ? Number.NaN : Number(said)
    if (Number.isSafeInteger(n) && n > 0) return { blockSize: n, blockSizeFrom: `${source.metric}{block_size="${said}"}`, ...context }
  }
  return {
    blockSize: DEFAULT_BLOCK_TOKENS,
    blockSizeFrom: `no block_size on the engine's /metrics: assumed ${DEFAULT_BLOCK_TOKENS} tokens, more than vLLM's builds choose`,
    ...context,
  }
}

/** The prefix's length in words: two blocks' worth, at most what fits the served context. */
export function prefixWords(s: TrafficSizing, maxTokens: number = KNOB_TRAFFIC['shared-prefix'].maxTokens): number {
  const wanted = BLOCKS * s.blockSize
  if (s.maxModelLen === undefined) return wanted
  return Math.max(1, Math.min(wanted, Math.floor((s.maxModelLen - maxTokens - PROMPT_REST) / TOKENS_PER_WORD)))
}

const prefixOf = (words: number): string => Array.from({ length: words }, (_, i) => WORDS[i % WORDS.length]! + String(i)).join(' ')

/** usage.prompt_tokens of a 200 reply; null when it does not say. */
function promptTokens(body: string): number | null {
  try {
    const n = (JSON.parse(body) as { usage?: { prompt_tokens?: unknown } } | null)?.usage?.prompt_tokens
    return typeof n === 'number' ? n : null
  } catch {
    return null
  }
}

/**
 * The engine's own words for a prompt past its context: how many tokens were asked and how many fit
 * (llama.cpp: "request (4774 tokens) exceeds the available context size (2048 tokens)"; vLLM:
 * "maximum context length is 1024 tokens. However, you requested 8 output tokens and your prompt
 * contains 1300 input tokens"). Null for any other answer.
 */
export function contextRefusal(status: number, body: string): { asked: number; context: number } | null {
  if (status !== 400) return null
  const llama = /request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)/.exec(body)
  if (llama) return { asked: Number(llama[1]), context: Number(llama[2]) }
  const vllm =
    /maximum context length is (\d+) tokens\. However, you requested (\d+) output tokens and your prompt contains (\d+) input tokens/.exec(
      body,
    )
  if (vllm) return { asked: Number(vllm[2]) + Number(vllm[3]), context: Number(vllm[1]) }
  return null
}

/**
 * Sends the knob's traffic, one request after the other (the second must find the first's blocks
 * cached). Where the engine refuses the first as longer than its context and says by how much (its
 * tokenizer counts more tokens a word than assumed: a byte-level vocabulary), the prefix is cut to
 * fit once, by the engine's own numbers, and both are sent again; the evidence says so.
 */
export async function sendKnobTraffic(
  ctx: RunContext,
  kind: 'shared-prefix',
  model: string | undefined,
  sizing: TrafficSizing,
): Promise<TrafficSent> {
  const first = await sendShared(ctx, kind, model, sizing, prefixWords(sizing))
  const refused = first.refusal
  if (!refused) return first.sent
  const maxTokens = KNOB_TRAFFIC[kind].maxTokens
  const fit = Math.floor((first.sent.prefixWords * (refused.context - maxTokens - PROMPT_REST)) / refused.asked)
  if (fit < 1 || fit >= first.sent.prefixWords) return first.sent
  const again = await sendShared(ctx, kind, model, { ...sizing, maxModelLen: sizing.maxModelLen ?? refused.context }, fit)
  return {
    ...again.sent,
    resized: `the engine refused a ${first.sent.prefixWords}-word prefix as ${refused.asked} tokens past its context of ${refused.context}: cut to ${fit} words and sent again`,
  }
}

async function sendShared(
  ctx: RunContext,
  kind: 'shared-prefix',
  model: string | undefined,
  sizing: TrafficSizing,
  words: number,
): Promise<{ sent: TrafficSent; refusal?: { asked: number; context: number } }> {
  const url = endpointUrl(ctx, '/v1/chat/completions')
  const prefix = prefixOf(words)
  let refusal: { asked: number; context: number } | undefined
  const out: TrafficSent = {
    kind,
    sent: 0,
    answered: 0,
    failures: [],
    prefixWords: words,
    blockSize: sizing.blockSize,
    blockSizeFrom: sizing.blockSizeFrom,
    ...(sizing.maxModelLen !== undefined ? { maxModelLen: sizing.maxModelLen } : {}),
    promptTokens: [],
  }
  for (const [i, ask] of [
    'Which word comes first in the list above? Answer with one word.',
    'Which word comes last in the list above? Answer with one word.',
  ].entries()) {
    const body = {
      ...(model ? { model } : {}),
      temperature: 0,
      max_tokens: KNOB_TRAFFIC[kind].maxTokens,
      messages: [{ role: 'user', content: `${prefix}\n${ask}` }],
    }
    out.sent++
    try {
      const res = await ctx.http.request({
        method: 'POST',
        url,
        headers: v1Headers(ctx),
        body: JSON.stringify(body),
        timeoutMs: ctx.target.probeTimeoutMs,
      })
      if (res.status === 200) {
        out.answered++
        out.promptTokens.push(promptTokens(res.body))
      } else {
        out.failures.push(`request ${i + 1}: HTTP ${res.status} ${res.body.slice(0, 160)}`)
        // Too long for the engine's context: the second would be refused the same way.
        refusal = i === 0 ? (contextRefusal(res.status, res.body) ?? undefined) : undefined
        if (refusal) return { sent: out, refusal }
      }
    } catch (error) {
      if (!(error instanceof HttpError)) throw error
      out.failures.push(`request ${i + 1}: ${error.message}`)
    }
  }
  return { sent: out }
}

/** Why this traffic could not fill one whole block, when it could not: a flat meter then proves nothing either way. */
export function trafficTooShort(t: TrafficSent): string | undefined {
  // The engine's own token counts, where it gave them, decide; else the words, at one token a word at least.
  const counted = t.promptTokens.some((n) => n !== null)
  if (!counted && t.prefixWords < t.blockSize)
    return `its ${t.prefixWords}-word prefix (all that fits max_model_len ${t.maxModelLen ?? '?'} beside the question) may be shorter than one KV block of ${t.blockSize} tokens`
  const fewest = Math.min(...t.promptTokens.map((n) => n ?? Number.POSITIVE_INFINITY))
  if (Number.isFinite(fewest) && fewest <= t.blockSize)
    return `the engine counted ${fewest} prompt tokens (usage.prompt_tokens), not more than one KV block of ${t.blockSize}: no whole block was shared`
  return undefined
}

/** The traffic in words, for the meter's messages. */
export function trafficText(t: TrafficSent): string {
  const tokens = t.promptTokens.filter((n): n is number => n !== null)
  const blocks = Math.floor(t.prefixWords / t.blockSize)
  const whole = blocks === 0 ? 'less than one KV block' : `at least ${blocks} KV block${blocks === 1 ? '' : 's'}`
  return `${t.answered} of ${t.sent} chat completions sharing a ${t.prefixWords}-word prompt prefix (${whole} of ${t.blockSize} tokens at one token a word; block size: ${t.blockSizeFrom}${tokens.length ? `; prompt_tokens ${tokens.join(', ')}` : ''}${t.resized ? `; ${t.resized}` : ''})${t.failures.length ? `; ${t.failures.join('; ')}` : ''}`
}
