// The /v1/models list as the wire carries it (vLLM's ModelList: `data` of cards with `id`, `root`,
// `parent`, `max_model_len`), read once for first contact (a --model not listed) and for the probes
// (the model to probe, the names one served model goes by, and the context it is served with).

/** A card of /v1/models, as far as armproof reads it. */
export interface ModelCard {
  id: string
  /** The model path the served names of one model share (vLLM's ModelCard.root); null when absent. */
  root: string | null
  /** The context one request may use, prompt and reply together (vLLM's and SGLang's `max_model_len`, llama.cpp's per-slot `meta.n_ctx`); absent when the card does not say. */
  maxModelLen?: number
}

/** The cards of a /v1/models body, in its order; undefined when the body is no model list. */
export function modelCards(body: string): ModelCard[] | undefined {
  let data: unknown
  try {
    data = (JSON.parse(body) as { data?: unknown } | null)?.data
  } catch {
    return undefined
  }
  if (!Array.isArray(data)) return undefined
  return data.flatMap((m) => {
    const card = m as { id?: unknown; root?: unknown; max_model_len?: unknown; meta?: { n_ctx?: unknown } } | null
    if (typeof card?.id !== 'string') return []
    // vLLM's and SGLang's max_model_len; llama.cpp's meta.n_ctx (the context of one slot, what one request may use).
    const len = card.max_model_len ?? card.meta?.n_ctx
    return [
      {
        id: card.id,
        root: typeof card.root === 'string' && card.root !== '' ? card.root : null,
        ...(typeof len === 'number' && Number.isSafeInteger(len) && len > 0 ? { maxModelLen: len } : {}),
      },
    ]
  })
}
