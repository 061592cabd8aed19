// The exact-word probe passes only when the reply IS the word: after reasoning, whitespace,
// surrounding quotes/backticks/markdown emphasis and one final punctuation mark are removed, the
// reply equals the word (case-insensitive). Attacked with random wrappings that must pass and
// random sentences containing the word that must fail (seeded, so a failure replays).
import { describe, expect, test } from 'vitest'
import { loadConfig } from '../../../helpers/config/load.ts'
import type { HostClient } from '../../../helpers/seams/host.ts'
import type { HttpClient } from '../../../helpers/seams/http.ts'
import { EXACT_WORDS } from '../../../helpers/steps/probes/requests.ts'
import { bareAnswer, isExactWord, judgeExact } from '../../../helpers/steps/probes/exact.ts'
import { redactingHttp } from '../../../helpers/seams/redact.ts'
import { createContext } from '../../../helpers/steps/context.ts'
import { checkExact } from '../../../helpers/steps/probes/send.ts'
import { pick, prng as rng } from '../../support/prng.ts'
import { DEMO_ARM } from '../../support/demo-args.ts'

function chat(message: Record<string, unknown>, finish = 'stop'): string {
  return JSON.stringify({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
  })
}

const PAIRS: ReadonlyArray<readonly [string, string]> = [
  ['"', '"'],
  ["'", "'"],
  ['`', '`'],
  ['```', '```'],
  ['**', '**'],
  ['*', '*'],
  ['__', '__'],
  ['_', '_'],
  ['~~', '~~'],
  ['\u201c', '\u201d'],
  ['\u2018', '\u2019'],
  ['\u00ab', '\u00bb'],
]
const MARKS = ['.', '!', '?', ',', ';', ':', '\u2026', '\u3002']
const SPACE = ['', ' ', '\n', '\n\n', '\t', '  ']
const FILLER = [
  'I',
  'will',
  'not',
  'say',
  'the',
  'word',
  'is',
  'sure',
  'here',
  'it',
  'you',
  'asked',
  'answer',
  'ok',
  'Certainly',
  'bird',
  'a',
  'of',
]

function randomCase(r: () => number, word: string): string {
  const mode = Math.floor(r() * 4)
  if (mode === 0) return word
  if (mode === 1) return word.toUpperCase()
  if (mode === 2) return word[0]!.toUpperCase() + word.slice(1)
  return [...word].map((c) => (r() < 0.5 ? c.toUpperCase() : c)).join('')
}

/** The word in 0–3 random wrappers, with at most one final mark at a random layer, and random whitespace. */
function wrapped(r: () => number, core: string): string {
  let s = core
  const layers = Math.floor(r() * 4)
  const markAt = r() < 0.6 ? Math.floor(r() * (layers + 1)) : -1
  for (let layer = 0; layer <= layers; layer++) {
    if (layer === markAt) s = `${s}${pick(r, MARKS)}`
    if (layer === layers) break
    const [open, close] = pick(r, PAIRS)
    const inner = open === '```' && r() < 0.5 ? `${pick(r, ['', 'text', 'md'])}\n${s}\n` : `${pick(r, ['', ' '])}${s}${pick(r, ['', ' '])}`
    s = `${open}${inner}${close}`
  }
  return `${pick(r, SPACE)}${s}${pick(r, SPACE)}`
}

/** A reply as the wire carries it: sometimes a <think> block in content, sometimes reasoning in either field. */
function message(r: () => number, content: string, word: string): Record<string, unknown> {
  const shape = Math.floor(r() * 4)
  if (shape === 0) return { content }
  if (shape === 1) return { content: `<think>The user wants ${word}. Say ${word}.</think>${content}` }
  if (shape === 2) return { content, reasoning_content: `I should answer ${word}.` }
  return { content, reasoning: `I should answer ${word}.` }
}

describe('the exact reply is the word', () => {
  test('2000 random wrappings of the word (quotes, backticks, fences, emphasis, one final mark, any case) pass', () => {
    const r = rng(0x6b657374)
    for (let i = 0; i < 2000; i++) {
      const word = pick(r, EXACT_WORDS)
      const content = wrapped(r, randomCase(r, word))
      const verdict = judgeExact(200, chat(message(r, content, word)), word)
      expect(verdict.verdict, JSON.stringify(content)).toBe('passed')
    }
  })

  test('2000 random sentences that contain the word fail as "a sentence, not the word"', () => {
    const r = rng(0x72656c)
    for (let i = 0; i < 2000; i++) {
      const word = pick(r, EXACT_WORDS)
      const before = Array.from({ length: Math.floor(r() * 4) }, () => pick(r, FILLER))
      const after = Array.from({ length: before.length === 0 ? 1 + Math.floor(r() * 3) : Math.floor(r() * 3) }, () => pick(r, FILLER))
      const glue = () => pick(r, [' ', ' ', ', ', ': ', ' - ', '\n'])
      const core = [...before, randomCase(r, word), ...after].join(glue())
      const content = wrapped(r, core)
      const verdict = judgeExact(200, chat(message(r, content, word)), word)
      expect(verdict.verdict, JSON.stringify(content)).toBe('failed')
      expect(verdict.observed, JSON.stringify(content)).toContain('answered with a sentence, not the word')
    }
  })

  test.each([
    ['I will not say kestrel.'],
    ['kestrel kestrel'],
    ['kestrel!!'],
    ['kestrel?!'],
    ['"kestrel.".'],
    ['The word is **kestrel**.'],
    ['kestrel\n\nLet me know if you need anything else.'],
    ['`kestrel` (as requested)'],
    ['Sure: kestrel'],
    ['- kestrel'],
    ['1. kestrel'],
  ])('%j is red', (content) => {
    const r = judgeExact(200, chat({ content }), 'kestrel')
    expect(r.verdict).toBe('failed')
  })

  test.each([
    ['kestrel'],
    ['"kestrel".'],
    ['Kestrel.'],
    ['KESTREL!'],
    ['"kestrel"'],
    ['**Kestrel**'],
    ['**Kestrel.**'],
    ['**Kestrel**.'],
    ['`kestrel`'],
    ['```\nkestrel\n```'],
    ['```text\nkestrel\n```'],
    ['_kestrel_'],
    ['\u201cKestrel.\u201d'],
    ['\n\n  kestrel  \n'],
    ['<think>hmm, kestrel?</think>\n\nKestrel'],
  ])('%j passes', (content) => {
    expect(judgeExact(200, chat({ content }), 'kestrel').verdict).toBe('passed')
  })

  test('the real wire variants stay green: reasoning_content, reasoning, a <think> block left in content', () => {
    expect(judgeExact(200, chat({ content: '\n\nkestrel', reasoning_content: 'The user wants kestrel.' }), 'kestrel').verdict).toBe(
      'passed',
    )
    expect(judgeExact(200, chat({ content: '\n\nkestrel', reasoning: 'The user wants kestrel.' }), 'kestrel').verdict).toBe('passed')
    expect(judgeExact(200, chat({ content: '<think>The user wants kestrel.</think>\n\nkestrel' }), 'kestrel').verdict).toBe('passed')
  })

  test('the sentence verdict shows what came back and says what to check', () => {
    const r = judgeExact(200, chat({ content: '\n\nI will not say kestrel.' }), 'kestrel')
    expect(r.observed).toBe('answered with a sentence, not the word: content "I will not say kestrel."')
    expect(r.next).toMatch(/chat template/)
  })

  test('bareAnswer removes one final mark only, and wrappers in any nesting', () => {
    expect(bareAnswer('**"kestrel."**')).toBe('kestrel')
    expect(bareAnswer('kestrel..')).toBe('kestrel.')
    expect(isExactWord('*', 'kestrel')).toBe(false)
    expect(isExactWord('', 'kestrel')).toBe(false)
    expect(isExactWord('""', 'kestrel')).toBe(false)
  })
})

describe('step probe.exact, in-process against a fake endpoint', () => {
  const KEY = 'sk-inproc-Hy7Gt6Fr5De4Sw3'
  function ctxWith(reply: (body: string) => { status: number; body: string }) {
    const r = loadConfig({
      argv: [...DEMO_ARM, '--base-url', 'http://gpu-7:8000', '--model', 'm'],
      env: { VERIFY_API_KEY: KEY },
    })
    if (!r.ok) throw new Error('config')
    const sent: Array<{ headers: Record<string, string> | undefined; body: string | undefined }> = []
    const http: HttpClient = {
      async request(req) {
        sent.push({ headers: req.headers, body: req.body })
        const out = reply(req.body ?? '')
        return { ...out, headers: {}, url: req.url, redirects: [], durationMs: 1 }
      },
    }
    const host: HostClient = { where: 'local', run: () => Promise.reject(new Error('no host in this test')) }
    const ctx = createContext({
      target: r.target,
      http: redactingHttp(http, KEY),
      host,
      clock: { now: () => 0, sleep: async () => {} },
      choices: { pick: (_n, o) => o[0]! },
    })
    return { ctx, sent }
  }
  const word = EXACT_WORDS[0]

  test('the word passes; the key goes in the Authorization header', async () => {
    const { ctx, sent } = ctxWith(() => ({
      status: 200,
      body: chat({ content: `\n\n**${word[0]!.toUpperCase()}${word.slice(1)}.**`, reasoning: 'thinking' }),
    }))
    const j = await checkExact(ctx, { healthy: true })
    expect(j.verdict).toBe('passed')
    expect(sent[0]!.headers!.authorization).toBe(`Bearer ${KEY}`)
  })

  test('a sentence containing the word is red, with where and next', async () => {
    const { ctx } = ctxWith(() => ({ status: 200, body: chat({ content: `I will not say ${word}.` }) }))
    const j = await checkExact(ctx, { healthy: true })
    expect(j).toMatchObject({ verdict: 'failed', where: 'POST http://gpu-7:8000/v1/chat/completions (model m)' })
    expect(j.observed).toContain('answered with a sentence, not the word')
    expect(j.next).toBeTruthy()
  })

  test("a 401 body quoting the key across the 300-character cut leaves no piece of it; the key given is the operator's mistake, never red", async () => {
    const body = JSON.stringify({ error: { message: `${'-'.repeat(280)} Authorization: Bearer ${KEY} ${'-'.repeat(700)} Bearer ${KEY}` } })
    const { ctx } = ctxWith(() => ({ status: 401, body }))
    const j = await checkExact(ctx, { healthy: true })
    expect(j.verdict).toBe('inconclusive')
    // The fake answers /v1/models (asked first, for the model's context) with the same 401.
    expect(j.mistake).toBe(
      "/v1/models answers HTTP 401 (the key): the key given is refused: check VERIFY_API_KEY or the --api-key-file it came from (expired, another endpoint's key?)",
    )
    expect(j.next).toBe(j.mistake)
    const text = JSON.stringify(j)
    for (let i = 0; i + 8 <= KEY.length; i++) expect(text).not.toContain(KEY.slice(i, i + 8))
  })
})
