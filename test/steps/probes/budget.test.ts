// The probes' max_tokens within the served context (helpers/steps/probes/budget.ts): 1024 where
// the context allows, the context minus a margin for the prompt where it does not, never below
// 512 beside an image, and said wherever it is below 512 or the probe cannot be sent.
import { describe, expect, test } from 'vitest'
import { probeBudget } from '../../../helpers/steps/probes/budget.ts'
import { judgeExact } from '../../../helpers/steps/probes/exact.ts'

describe('probeBudget', () => {
  test('1024 where /v1/models says nothing or the context holds it beside the prompt', () => {
    expect(probeBudget(undefined, 'text')).toEqual({ maxTokens: 1024, maxModelLen: null })
    expect(probeBudget(40960, 'vision')).toEqual({ maxTokens: 1024, maxModelLen: 40960 })
    expect(probeBudget(1280, 'text')).toEqual({ maxTokens: 1024, maxModelLen: 1280 })
  })

  test("at the real build's max_model_len 1024: 768 for a text probe, 512 beside an image (the fixed 1024 was refused)", () => {
    expect(probeBudget(1024, 'text')).toEqual({ maxTokens: 768, maxModelLen: 1024 })
    expect(probeBudget(1024, 'vision')).toEqual({ maxTokens: 512, maxModelLen: 1024 })
  })

  test('below 512 for a text probe is sent, and said; a context that holds no reply is not sent, and said', () => {
    expect(probeBudget(600, 'text')).toEqual({
      maxTokens: 344,
      maxModelLen: 600,
      note: 'max_model_len 600 (GET /v1/models) leaves 344 tokens for the reply after 256 for the prompt, below 512: a model that reasons first may spend them all (finish_reason length)',
    })
    expect(probeBudget(200, 'text')).toEqual({
      maxModelLen: 200,
      note: 'max_model_len 200 (GET /v1/models) leaves 0 tokens for the reply after 256 for the prompt, below the 1 the probe needs: not sent',
    })
  })

  test('the vision probe is never sent with less than 512 (its contract): not sent, said', () => {
    expect(probeBudget(1000, 'vision')).toEqual({
      maxModelLen: 1000,
      note: 'max_model_len 1000 (GET /v1/models) leaves 488 tokens for the reply after 512 for the prompt and its image, below the 512 the probe needs: not sent',
    })
  })
})

describe("vLLM's 400 for a prompt past the context", () => {
  test('is red with the served context as the cause, not a refusal of the probe', () => {
    const message =
      "This model's maximum context length is 1024 tokens. However, you requested 1024 output tokens and your prompt contains 111 characters (more than 0 characters, which is the upper bound for 0 input tokens). Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_text, value=111)"
    const j = judgeExact(400, JSON.stringify({ error: { message, type: 'BadRequestError', param: 'input_text', code: 400 } }), 'kestrel')
    expect(j.verdict).toBe('failed')
    expect(j.observed).toMatch(/^HTTP 400: This model's maximum context length is 1024 tokens/)
    expect(j.next).toBe(
      "the probe's prompt and its max_tokens do not fit the context the model is served with: armproof keeps max_tokens within the max_model_len /v1/models reports, so check that /v1/models (or a gateway before it) reports the engine's real --max-model-len",
    )
  })
})
