import { describe, expect, test } from 'vitest'
import { decodePng } from '../../../engine/png.ts'
import { encodeSolidPng } from '../../../helpers/steps/probes/png.ts'
import { PROBE_COLOURS, exactRequest, toolsRequest, visionRequest } from '../../../helpers/steps/probes/requests.ts'
import { errorMessage } from '../../../helpers/steps/probes/reply.ts'
import { judgeExact } from '../../../helpers/steps/probes/exact.ts'
import { judgeTools } from '../../../helpers/steps/probes/tools.ts'
import { builtinProfile } from '../../../helpers/profiles/load.ts'
import { judgeVision } from '../../../helpers/steps/probes/vision.ts'

function chat(message: Record<string, unknown>, finish = 'stop'): string {
  return JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
  })
}

describe('the solid-colour PNG', () => {
  test.each(Object.entries(PROBE_COLOURS))('a %s PNG decodes back to its colour', (_name, rgb) => {
    const png = decodePng(encodeSolidPng(64, 48, rgb))
    expect([png.width, png.height]).toEqual([64, 48])
    expect(png.at(0, 0)).toEqual(rgb)
    expect(png.at(63, 47)).toEqual(rgb)
  })
  test('matches the known bytes of a 1×1 red PNG', () => {
    // zlib-independent parts: signature, IHDR with its CRC, IEND with its CRC.
    const hex = encodeSolidPng(1, 1, [255, 0, 0]).toString('hex')
    expect(hex.startsWith('89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de')).toBe(true)
    expect(hex.endsWith('0000000049454e44ae426082')).toBe(true)
  })
  test('a corrupted chunk is refused by its CRC', () => {
    const png = encodeSolidPng(4, 4, [0, 0, 255])
    png[20] = png[20]! ^ 0xff
    expect(() => decodePng(png)).toThrow(/bad CRC/)
  })
})

describe('probe requests', () => {
  test('the exact probe asks at temperature 0 for one literal word', () => {
    const r = exactRequest('m', 'kestrel')
    expect(r.temperature).toBe(0)
    expect(JSON.stringify(r.messages)).toContain('kestrel')
  })
  test('the tools probe uses tool_choice auto, so a server without its parser fails', () => {
    expect(toolsRequest('m', 'x').tool_choice).toBe('auto')
  })
  test('the vision probe sends only an image_url data URL, never the legacy images field', () => {
    const r = visionRequest('m', 'blue', 'red')
    const text = JSON.stringify(r)
    expect(text).toContain('"type":"image_url"')
    expect(text).toContain('data:image/png;base64,')
    expect(r).not.toHaveProperty('images')
    expect(r.max_tokens).toBeGreaterThanOrEqual(512)
  })
  test('the vision prompt names the decoy colour, never the real one', () => {
    const r = visionRequest('m', 'blue', 'red')
    const prompt = JSON.stringify(
      (r.messages[0] as { content: Array<{ type: string; text?: string }> }).content.filter((p) => p.type === 'text'),
    )
    expect(prompt).toContain('red')
    expect(prompt).not.toContain('blue')
  })
  test('the request builder refuses max_tokens below 512', () => {
    expect(() => visionRequest('m', 'blue', 'red', 256)).toThrow(/max_tokens ≥ 512/)
  })
})

describe('judging the exact reply', () => {
  test.each([
    ['content with leading newlines', { content: '\n\nkestrel', reasoning_content: 'thinking' }],
    ['reasoning under the new name', { content: 'kestrel.', reasoning: 'thinking' }],
    ['a <think> block left in content', { content: '<think>I should say kestrel</think>\n\nKestrel' }],
  ])('passes %s', (_name, message) => {
    expect(judgeExact(200, chat(message), 'kestrel').verdict).toBe('passed')
  })
  test('content null with the answer only in reasoning is red, naming the budget', () => {
    const r = judgeExact(200, chat({ content: null, reasoning_content: 'the word is kestrel' }, 'length'), 'kestrel')
    expect(r.verdict).toBe('failed')
    expect(r.observed).toMatch(/content is null; "kestrel" appears only in reasoning/)
    expect(r.next).toMatch(/token budget ran out inside reasoning/)
  })
  test('content null that ended normally points at the reasoning parser', () => {
    expect(judgeExact(200, chat({ content: null, reasoning: 'kestrel' }), 'kestrel').next).toMatch(/reasoning parser/)
  })
  test('a <think> block that holds the word does not pass an answer without it', () => {
    expect(judgeExact(200, chat({ content: '<think>kestrel</think>hello' }), 'kestrel').verdict).toBe('failed')
  })
  test.each([
    [
      500,
      JSON.stringify({ object: 'error', message: 'engine overloaded', type: 'InternalServerError', code: 500 }),
      /HTTP 500: engine overloaded/,
    ],
    [
      500,
      JSON.stringify({ error: { message: 'engine overloaded', type: 'InternalServerError', code: 500 } }),
      /HTTP 500: engine overloaded/,
    ],
    [401, JSON.stringify({ error: 'Unauthorized' }), /HTTP 401: Unauthorized/],
    [200, '', /empty body/],
    [200, '<html>upstream error</html>', /not JSON/],
    [200, '{"choices":[]}', /without choices\[0\]\.message/],
  ])('an HTTP %i reply with a bad body is red and shows what came back', (status, body, observed) => {
    const r = judgeExact(status, body, 'kestrel')
    expect(r.verdict).toBe('failed')
    expect(r.observed).toMatch(observed)
  })
  test('error messages are read from flat, nested and string forms', () => {
    expect(errorMessage('{"error":{"message":"a"}}')).toBe('a')
    expect(errorMessage('{"object":"error","message":"b"}')).toBe('b')
    expect(errorMessage('{"error":"c"}')).toBe('c')
  })
})

describe('judging the tool call', () => {
  const call = (args: unknown, name = 'record_probe_token') =>
    chat({ content: null, tool_calls: [{ id: 't', type: 'function', function: { name, arguments: args } }] }, 'tool_calls')
  test('passes arguments as a JSON string', () => {
    expect(judgeTools(200, call('{"token": "quasar"}'), 'quasar').verdict).toBe('passed')
  })
  test('passes arguments as an object (TGI, some llama.cpp builds)', () => {
    expect(judgeTools(200, call({ token: 'quasar' }), 'quasar').verdict).toBe('passed')
  })
  test('a call written as text in content is red as a misconfigured tool parser', () => {
    const r = judgeTools(
      200,
      chat({ content: '<tool_call>{"name": "record_probe_token", "arguments": {"token": "quasar"}}</tool_call>' }),
      'quasar',
    )
    expect(r.verdict).toBe('failed')
    expect(r.next).toMatch(/tool parser misconfigured/)
  })
  test('arguments that are not JSON are red', () => {
    expect(judgeTools(200, call('{"token": "quasar"'), 'quasar').observed).toMatch(/arguments are not JSON/)
  })
  test('the wrong function or the wrong token is red', () => {
    expect(judgeTools(200, call('{"token":"quasar"}', 'other'), 'quasar').verdict).toBe('failed')
    expect(judgeTools(200, call('{"token":"kestrel"}'), 'quasar').verdict).toBe('failed')
  })
  test('a server without its tool parser answers 400, which is red with the fix', () => {
    const body = JSON.stringify({
      error: { message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set', code: 400 },
    })
    // The fix in the engine's own flags (its profile's probes: words); a profile with none names no engine's flags.
    expect(judgeTools(400, body, 'quasar', builtinProfile('vllm').engine.probes).next).toMatch(
      /--enable-auto-tool-choice --tool-call-parser/,
    )
    expect(judgeTools(400, body, 'quasar', builtinProfile('llama.cpp').engine.probes).next).toMatch(/--jinja .*--chat-template-file/)
    expect(judgeTools(400, body, 'quasar').next).not.toMatch(/--(?!skip )[a-z]/)
  })
})

describe('judging the vision reply', () => {
  test('passes when the reply names the colour of the picture', () => {
    expect(judgeVision(200, chat({ content: '\n\nThe square is blue.' }), 'blue', 'red').verdict).toBe('passed')
  })
  test('naming the decoy from the prompt is red: the model did not see the picture', () => {
    const r = judgeVision(200, chat({ content: 'It is red.' }), 'blue', 'red')
    expect(r.verdict).toBe('failed')
    expect(r.next).toMatch(/did not see the image/)
  })
  test('a wrong colour is red', () => {
    expect(judgeVision(200, chat({ content: 'green' }), 'blue', 'red').verdict).toBe('failed')
  })
  test('a list of colours does not pass', () => {
    expect(judgeVision(200, chat({ content: 'red, green, blue or yellow' }), 'blue', 'red').verdict).toBe('failed')
  })
  test('finish_reason length with null content is red: thinking ate the budget', () => {
    expect(judgeVision(200, chat({ content: null, reasoning_content: 'hmm' }, 'length'), 'blue', 'red').next).toMatch(
      /thinking ate the budget/,
    )
  })
})
