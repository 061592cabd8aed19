// The three behaviour probes' requests: the words, colours and tool they ask about, and the chat
// requests that carry them. Pure: no I/O. The replies are judged by ./exact.ts, ./tools.ts and
// ./vision.ts, on what ./reply.ts reads of them; ./send.ts sends them.
import { encodeSolidPng, type Rgb } from './png.ts'

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

/** `maxTokens`: the budget within the served context (./budget.ts); 1024 where the context allows. */
export function exactRequest(model: string, word: string, maxTokens = PROBE_MAX_TOKENS): ChatRequest {
  return {
    model,
    messages: [{ role: 'user', content: `Reply with exactly this one word and nothing else: ${word}` }],
    temperature: 0,
    max_tokens: maxTokens,
  }
}

export function toolsRequest(model: string, token: string, maxTokens = PROBE_MAX_TOKENS): ChatRequest {
  return {
    model,
    messages: [{ role: 'user', content: `Call ${PROBE_TOOL.name} with the token "${token}".` }],
    temperature: 0,
    max_tokens: maxTokens,
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
    throw new RangeError(
      `vision probe needs max_tokens ≥ ${MIN_VISION_MAX_TOKENS} (thinking eats a smaller budget and the model reads as blind), got ${maxTokens}`,
    )
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
