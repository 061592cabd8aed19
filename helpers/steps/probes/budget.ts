// The probes' max_tokens, kept within the context the model is served with: /v1/models' card says
// `max_model_len` (vLLM, SGLang), and a request whose prompt and max_tokens pass it is refused with
// 400 before the model sees it (real vLLM at max_model_len 1024 refused the old fixed 1024). The
// budget is 1024 where the context allows, never below 512 for the vision probe (its contract: a
// thinking model eats a smaller budget and reads as blind), and said when the context is too
// small for 512. Pure.
import { MIN_VISION_MAX_TOKENS, PROBE_MAX_TOKENS } from './requests.ts'

/** The tokens left for a probe's prompt (the chat template's, the text's, an image's) out of the context. */
export const PROMPT_MARGIN = { text: 256, vision: 512 } as const
/** The budget below which a thinking model may spend it all on reasoning: said in the evidence. */
export const WANTED_MAX_TOKENS = 512

export interface ProbeBudget {
  /** What the request asks; absent when the context cannot hold the probe at all (not sent). */
  maxTokens?: number
  /** The served context /v1/models gave; null when it did not say. */
  maxModelLen: number | null
  /** Why the budget is below 512, or why the probe is not sent. */
  note?: string
}

export function probeBudget(maxModelLen: number | undefined, kind: keyof typeof PROMPT_MARGIN): ProbeBudget {
  if (maxModelLen === undefined) return { maxTokens: PROBE_MAX_TOKENS, maxModelLen: null }
  const margin = PROMPT_MARGIN[kind]
  const room = maxModelLen - margin
  const least = kind === 'vision' ? MIN_VISION_MAX_TOKENS : 1
  if (room < least)
    return {
      maxModelLen,
      note: `max_model_len ${maxModelLen} (GET /v1/models) leaves ${Math.max(0, room)} tokens for the reply after ${margin} for the prompt${kind === 'vision' ? ' and its image' : ''}, below the ${least} the probe needs: not sent`,
    }
  const maxTokens = Math.min(PROBE_MAX_TOKENS, room)
  if (maxTokens >= WANTED_MAX_TOKENS) return { maxTokens, maxModelLen }
  return {
    maxTokens,
    maxModelLen,
    note: `max_model_len ${maxModelLen} (GET /v1/models) leaves ${maxTokens} tokens for the reply after ${margin} for the prompt, below ${WANTED_MAX_TOKENS}: a model that reasons first may spend them all (finish_reason length)`,
  }
}
