// What the three probes record. One type for all three and every outcome: each sets the fields it
// saw. No report interprets these (the terminal, JSON and JUnit show them as recorded), but they
// are typed so that what a probe keeps is written down once and checked by the compiler.
import type { HttpFailure } from '../../seams/http.ts'
import type { CrashEvidence } from '../_host-evidence.ts'

/** A 429/503 answered with a wait: the Retry-After asked for and the wait taken. */
export interface ProbeRetry {
  status: number
  retryAfter: string | null
  waitedMs: number
}

export type ProbeEvidence = CrashEvidence & {
  /** What this run's probe asked for (chosen per run): the word, the tool token, the colour and the decoy named in the prompt. */
  word?: string
  token?: string
  colour?: string
  decoy?: string
  /** The model asked, the token budget, and the reply's time. */
  model?: string
  maxTokens?: number
  /** The context /v1/models says the model is served with (null: it did not say), and why the budget is below 512 or the probe not sent. */
  maxModelLen?: number | null
  budget?: string
  ms?: number
  /** A non-200 answer (or one without a chat completion): its status and the head of its body. */
  status?: number
  body?: string
  /** The reply: content as sent (a string, null, or whatever the engine put there), finish_reason, reasoning length. */
  content?: unknown
  finish?: string
  reasoningChars?: number
  /** The vision reply as read: the colours it gives as its answer, and those it names only to deny. */
  asserted?: string[]
  denied?: string[]
  /** OpenAI's refusal field, when the model declined. */
  refusal?: string
  /** The first three tool_calls entries, as sent. */
  toolCalls?: unknown[]
  retries?: ProbeRetry[]
  /** What a 200 reply says of itself: the model that produced it, its id, when it was created (seconds). */
  reply?: { model: unknown; id: string | null; created: number | null }
  /** Why no reply was judged (the HTTP seam's failure kind). */
  failure?: HttpFailure
}
