// The shared-prefix traffic sized from what the engine says about itself (helpers/steps/meter/
// traffic.ts): the block size from cache_config_info on the page the meter read, else an assumed
// large one (said), two blocks of words within the served context, and the cases where it cannot
// fill a block (a flat meter then proves nothing).
import { describe, expect, test } from 'vitest'
import { builtinProfile } from '../../../helpers/profiles/load.ts'
import type { MetricsReading } from '../../../helpers/steps/meter/reading.ts'
import { prefixWords, trafficSizing, trafficText, trafficTooShort, type TrafficSent } from '../../../helpers/steps/meter/traffic.ts'

const { engine } = builtinProfile('vllm')
const page = (blockSize: string | undefined): MetricsReading =>
  ({
    series:
      blockSize === undefined
        ? {}
        : { 'vllm:cache_config_info': [{ labels: { block_size: blockSize, engine: '0' }, value: 1, raw: '1.0', line: 1 }] },
  }) as unknown as MetricsReading
const sent = (over: Partial<TrafficSent>): TrafficSent => ({
  kind: 'shared-prefix',
  sent: 2,
  answered: 2,
  failures: [],
  prefixWords: 256,
  blockSize: 128,
  blockSizeFrom: 'vllm:cache_config_info{block_size="128"}',
  promptTokens: [268, 268],
  ...over,
})

describe('the shared prefix, sized from the engine', () => {
  test('block_size from cache_config_info: two blocks of words, within the served context', () => {
    const s = trafficSizing(engine, page('128'), 1024)
    expect(s).toEqual({ blockSize: 128, blockSizeFrom: 'vllm:cache_config_info{block_size="128"}', maxModelLen: 1024 })
    expect(prefixWords(s)).toBe(256)
    expect(prefixWords(trafficSizing(engine, page('16'), undefined))).toBe(32)
    // A context that holds fewer words: as many as fit beside the question, at three tokens a word.
    expect(prefixWords(trafficSizing(engine, page('128'), 600))).toBe(176)
  })

  test('a page without block_size (or none read): 256 assumed, and the evidence says so', () => {
    for (const p of [page(undefined), page('None'), undefined]) {
      const s = trafficSizing(engine, p, undefined)
      expect(s.blockSize).toBe(256)
      expect(s.blockSizeFrom).toBe("no block_size on the engine's /metrics: assumed 256 tokens, more than vLLM's builds choose")
      expect(prefixWords(s)).toBe(512)
    }
  })

  test('traffic that cannot fill one block is said (a flat meter proves nothing); traffic that can is not', () => {
    expect(trafficTooShort(sent({}))).toBeUndefined()
    // The engine's own token counts decide where it gave them; the words only where it did not.
    expect(trafficTooShort(sent({ prefixWords: 82, maxModelLen: 320, promptTokens: [94, 94] }))).toBe(
      'the engine counted 94 prompt tokens (usage.prompt_tokens), not more than one KV block of 128: no whole block was shared',
    )
    expect(trafficTooShort(sent({ prefixWords: 82, maxModelLen: 320, promptTokens: [null, null] }))).toBe(
      'its 82-word prefix (all that fits max_model_len 320 beside the question) may be shorter than one KV block of 128 tokens',
    )
    // Fewer words than a block, but the engine counted more tokens than a block (a byte-level vocabulary): a block was shared.
    expect(trafficTooShort(sent({ prefixWords: 82, promptTokens: [940, 941] }))).toBeUndefined()
    expect(trafficTooShort(sent({ promptTokens: [128, null] }))).toBe(
      'the engine counted 128 prompt tokens (usage.prompt_tokens), not more than one KV block of 128: no whole block was shared',
    )
    expect(trafficText(sent({}))).toBe(
      '2 of 2 chat completions sharing a 256-word prompt prefix (at least 2 KV blocks of 128 tokens at one token a word; block size: vllm:cache_config_info{block_size="128"}; prompt_tokens 268, 268)',
    )
  })
})
