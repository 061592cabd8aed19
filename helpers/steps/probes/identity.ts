// Whether a 200 reply is this engine's answer to this request (issue 20): its `model` is the model
// that produced it (OpenAI's API; vLLM echoes its served name), and it was made for this request,
// not served from a cache. Pure: ./send.ts brings the reply, the model cards and
// what the other probes' replies carried.
//
// The real variants accepted: the very id asked (vLLM before 0.10, SGLang, llama.cpp, a LoRA
// adapter's name); another name of the same served model, both listed by /v1/models with one
// `root` (vLLM with `--served-model-name a b` answers with its first name whichever was asked);
// OpenAI's dated snapshot of the id asked (`gpt-4o` → `gpt-4o-2024-08-06`). Anything else is
// another model, whatever it answered.
import type { ModelCard } from '../../seams/models.ts'
import type { Judgement } from '../verdict.ts'

/** How far a reply's `created` may lie before the request was sent: the two clocks may differ this much. */
export const CLOCK_SKEW_MS = 5 * 60_000

/** What a reply says about itself, read from a chat completion's top level. */
export interface ReplyMeta {
  model: unknown
  /** `id`; null when absent or empty (TGI sends ""). */
  id: string | null
  /** `created`, seconds since the epoch; null when absent or not a number. */
  created: number | null
}

/** The meta of a 200 chat completion; undefined when the body is none (the content judge says why). */
export function replyMeta(body: string): ReplyMeta | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return undefined
  }
  if (!parsed || typeof parsed !== 'object' || !Array.isArray((parsed as { choices?: unknown }).choices)) return undefined
  const p = parsed as { model?: unknown; id?: unknown; created?: unknown }
  return {
    model: p.model,
    id: typeof p.id === 'string' && p.id !== '' ? p.id : null,
    created: typeof p.created === 'number' && Number.isFinite(p.created) ? p.created : null,
  }
}

/** A reply model the id asked names without the cards: the id itself, or its dated snapshot. */
export function sameWithoutCards(asked: string, replied: string): boolean {
  return replied === asked || (replied.startsWith(`${asked}-`) && /^\d{4}-\d{2}-\d{2}$/.test(replied.slice(asked.length + 1)))
}

/** Another served name of the model asked: both listed, with one root. */
export function aliasOf(asked: string, replied: string, cards: readonly ModelCard[]): ModelCard | undefined {
  const a = cards.find((c) => c.id === asked)
  const r = cards.find((c) => c.id === replied)
  return a?.root && r?.root === a.root ? r : undefined
}

type Verdict = Pick<Judgement, 'verdict' | 'observed' | 'next'>

/** Red unless the reply names the model asked (or a real variant of it); `cards` only when the reply names another id. */
export function judgeModel(asked: string, meta: ReplyMeta, cards: readonly ModelCard[] | undefined): Verdict | undefined {
  if (typeof meta.model !== 'string' || meta.model === '') {
    return {
      verdict: 'failed',
      observed: `the reply carries no "model" (${JSON.stringify(meta.model ?? null)}), though a chat completion names the model that produced it`,
      next: 'something between armproof and the engine rewrites its replies, or this is no OpenAI-compatible engine: curl POST /v1/chat/completions on the engine itself and read "model"',
    }
  }
  if (sameWithoutCards(asked, meta.model) || (cards && aliasOf(asked, meta.model, cards))) return undefined
  return {
    verdict: 'failed',
    observed: `another model answered: the reply says "model": ${JSON.stringify(meta.model)}, the probe asked for ${JSON.stringify(asked)}${
      cards
        ? ` (/v1/models lists ${
            cards
              .map((c) => JSON.stringify(c.id))
              .slice(0, 10)
              .join(', ') || 'nothing'
          })`
        : ''
    }`,
    next: `this reply is not the engine's behaviour: a gateway's fallback or a router before the engine answered with another model, or --base-url reaches another engine; point --base-url at the engine that serves ${JSON.stringify(asked)}, or fix the gateway's route, then run again`,
  }
}

/** Red when another probe's reply, to another request, carried this reply's id. */
export function judgeSharedId(meta: ReplyMeta, sharedWith: readonly string[]): Verdict | undefined {
  if (meta.id === null || sharedWith.length === 0) return undefined
  return {
    verdict: 'failed',
    observed: `the reply's id ${JSON.stringify(meta.id)} is also the id of ${sharedWith.join(' and ')}'s reply, to another request: one stored reply answered distinct requests`,
    next: "red, not inconclusive: an endpoint that hands one request another request's reply serves wrong answers whatever sits in front; a response cache before the engine (or the engine) keys its replies wrongly: bypass it for /v1/chat/completions (point --base-url at the engine itself) and fix its cache key",
  }
}

/** Inconclusive when the reply was made well before the request was sent (`sentAtMs`, this machine's clock). */
export function judgeFresh(meta: ReplyMeta, sentAtMs: number | undefined): Verdict | undefined {
  if (meta.created === null || sentAtMs === undefined) return undefined
  const olderMs = sentAtMs - meta.created * 1000
  if (olderMs <= CLOCK_SKEW_MS) return undefined
  const age =
    olderMs >= 86_400_000
      ? `${(olderMs / 86_400_000).toFixed(1)} days`
      : olderMs >= 3_600_000
        ? `${(olderMs / 3_600_000).toFixed(1)} h`
        : `${Math.round(olderMs / 1000)} s`
  return {
    verdict: 'inconclusive',
    observed: `the reply was created ${new Date(meta.created * 1000).toISOString()}, ${age} before this request was sent (${new Date(sentAtMs).toISOString()}; clocks may differ by ${CLOCK_SKEW_MS / 60_000} min): a reply stored before, not one made for this request`,
    next: `inconclusive, not red: a response cache before the engine answered (the engine was not observed), or the engine host's clock is ${age} behind; bypass the cache for /v1/chat/completions (point --base-url at the engine itself) or fix the clock, then run again`,
  }
}
