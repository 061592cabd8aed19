// The traffic a knob's meter moves only under, sent by the meter step itself, bounded: vLLM's
// prefix cache counts hits in tokens of whole cached KV blocks (16 tokens each), capped at the
// prompt's length minus one, so the probes' own prompts (short, each its own) never hit it. Two
// chat completions sharing a prompt prefix far longer than one block do: the second finds the
// first's blocks. Deterministic (no random choice): a replay sends the same two requests.
import { HttpError } from '../../seams/http.ts'
import { endpointUrl, v1Headers, type RunContext } from '../context.ts'
import type { TrafficSent } from './evidence.ts'

export type { TrafficSent } from './evidence.ts'

/** What each kind of traffic costs the endpoint: completions and their max_tokens (pnpm perf counts them). */
export const KNOB_TRAFFIC = { 'shared-prefix': { completions: 2, maxTokens: 8 } } as const

/**
 * The shared prefix: 64 words, each at least one token in any tokenizer, so well past one 16-token
 * block (four blocks even if a tokenizer merged every pair of words), the chat template's own tokens aside.
 */
const SHARED_PREFIX = Array.from(
  { length: 64 },
  (_, i) => ['amber', 'basalt', 'cobalt', 'delta', 'ember', 'fjord', 'garnet', 'harbor'][i % 8]! + String(i),
).join(' ')

/** Sends the knob's traffic, one request after the other (the second must find the first's blocks cached). */
export async function sendKnobTraffic(ctx: RunContext, kind: 'shared-prefix', model: string | undefined): Promise<TrafficSent> {
  const url = endpointUrl(ctx, '/v1/chat/completions')
  const out: TrafficSent = { kind, sent: 0, answered: 0, failures: [], prefixWords: SHARED_PREFIX.split(' ').length }
  for (const [i, ask] of [
    'Which word comes first in the list above? Answer with one word.',
    'Which word comes last in the list above? Answer with one word.',
  ].entries()) {
    const body = {
      ...(model ? { model } : {}),
      temperature: 0,
      max_tokens: KNOB_TRAFFIC[kind].maxTokens,
      messages: [{ role: 'user', content: `${SHARED_PREFIX}\n${ask}` }],
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
      if (res.status === 200) out.answered++
      else out.failures.push(`request ${i + 1}: HTTP ${res.status} ${res.body.slice(0, 120)}`)
    } catch (error) {
      if (!(error instanceof HttpError)) throw error
      out.failures.push(`request ${i + 1}: ${error.message}`)
    }
  }
  return out
}

/** The traffic in words, for the meter's messages. */
export function trafficText(t: TrafficSent): string {
  return `${t.answered} of ${t.sent} chat completions sharing a ${t.prefixWords}-word prompt prefix (more than one 16-token KV block)${t.failures.length ? `; ${t.failures.join('; ')}` : ''}`
}
