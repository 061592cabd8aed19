// The exact probe's reply judged: the content is the word asked for, nothing else (reasoning,
// wrappers and one final mark aside). Pure: no I/O.
import { answerText, budgetOrParser, endedWithoutAnswer, reasoningOf, readChoice, short, words, type ProbeReply } from './reply.ts'

/** Pairs that may wrap a one-word answer: quotes, backticks, markdown emphasis, brackets of emphasis. */
const WRAPPERS: ReadonlyArray<readonly [string, string]> = [
  ['```', '```'],
  ['**', '**'],
  ['__', '__'],
  ['~~', '~~'],
  ['"', '"'],
  ["'", "'"],
  ['`', '`'],
  ['*', '*'],
  ['_', '_'],
  ['\u201c', '\u201d'],
  ['\u2018', '\u2019'],
  ['\u00ab', '\u00bb'],
  ['\u201e', '\u201c'],
]
/** One final punctuation mark a one-word answer may end with. */
const FINAL_MARK = /[.!?,;:\u2026\u3002\uff01\uff1f]$/u

/**
 * The answer stripped the way the exact probe allows: whitespace, surrounding quotes, backticks
 * (a code fence with an optional language tag too) and markdown emphasis, in any nesting, and at
 * most one final punctuation mark inside or outside them. What is left must be the word itself.
 */
export function bareAnswer(answer: string): string {
  let s = answer.trim()
  let markUsed = false
  for (let round = 0; round < 32; round++) {
    const fence = /^```[A-Za-z0-9_-]*\n([\s\S]*?)\n?```$/.exec(s)
    if (fence) {
      s = fence[1]!.trim()
      continue
    }
    const pair = WRAPPERS.find(([open, close]) => s.length >= open.length + close.length + 1 && s.startsWith(open) && s.endsWith(close))
    if (pair) {
      s = s.slice(pair[0].length, s.length - pair[1].length).trim()
      continue
    }
    if (!markUsed && FINAL_MARK.test(s)) {
      s = s.slice(0, -1).trimEnd()
      markUsed = true
      continue
    }
    break
  }
  return s
}

/** The reply is the word: nothing else after reasoning, wrappers and one final mark are removed (case-insensitive). */
export function isExactWord(answer: string, word: string): boolean {
  return bareAnswer(answer).toLowerCase() === word.toLowerCase()
}

export function judgeExact(status: number, body: string, word: string): ProbeReply {
  const c = readChoice(status, body)
  if ('verdict' in c) return c
  const ended = endedWithoutAnswer(c)
  if (ended) return ended
  const answer = answerText(c.message.content)
  const reasoning = reasoningOf(c.message)
  const evidence = { content: c.message.content ?? null, reasoningChars: reasoning.length, finish: c.finish }
  if (answer === null || answer === '') {
    const inReasoning = words(reasoning).includes(word)
    return {
      verdict: 'failed',
      observed: `content is ${answer === null ? 'null' : 'empty'}${inReasoning ? `; "${word}" appears only in reasoning` : ''} (finish_reason ${c.finish || 'none'})`,
      next: budgetOrParser(c.finish, 'the chat template swallows the answer'),
      evidence,
    }
  }
  if (!words(answer).includes(word)) {
    return {
      verdict: 'failed',
      observed: `content ${JSON.stringify(short(answer))} does not contain "${word}"`,
      next: 'the model does not follow a literal instruction at temperature 0: check the served model and chat template',
      evidence,
    }
  }
  if (!isExactWord(answer, word)) {
    return {
      verdict: 'failed',
      observed: `answered with a sentence, not the word: content ${JSON.stringify(short(answer))}`,
      next: `the probe asks for exactly "${word}" and nothing else; a reply that only contains it (a refusal, an explanation, a chat template that adds text) is not a literal answer: check the served model, its chat template and system prompt`,
      evidence,
    }
  }
  return {
    verdict: 'passed',
    observed: `content ${JSON.stringify(short(answer, 60))}${reasoning ? ' (reasoning present, as expected)' : ''}`,
    evidence,
  }
}
