// Nothing forged: random untrusted text (control characters, line breaks, ANSI, bidi controls,
// Markdown link/image/HTML/wiki-link syntax, autolinks, fake entry markers) never gives a page
// entry a second line, a link, an image, an HTML tag, a bidi control or a second marker, and never
// gives a terminal line a control character or a line break. A seeded generator, so a failure
// names a case that reproduces.
import { describe, expect, test } from 'vitest'
import { entryLines, entryMarker } from '../../helpers/writeback/entry.ts'
import { escapeControls, showText } from '../../helpers/writeback/escape.ts'
import { formatRefusals } from '../../helpers/writeback/options.ts'
import type { ReportFacts } from '../../helpers/writeback/report.ts'
import { prng as rng } from '../support/prng.ts'

const TOKENS = [
  '\n',
  '\r',
  '\r\n',
  '\u001b',
  '\u001b[31m',
  '\u001b]8;;http://x\u0007',
  '\u0000',
  '\u0007',
  '\u0085',
  '\u009b',
  '\u007f',
  '\u2028',
  '\u2029',
  '\u202a',
  '\u202b',
  '\u202d',
  '\u202e',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
  '\u200e',
  '\u200f',
  '\u061c',
  '\u200b',
  '\ufeff',
  '[',
  ']',
  '(',
  ')',
  '!',
  '<',
  '>',
  '`',
  '``',
  '\\',
  '|',
  '*',
  '_',
  '#',
  ':',
  '/',
  '.',
  '"',
  "'",
  '&',
  ';',
  '{',
  '}',
  '=',
  '-',
  ' ',
  '~',
  '$',
  '[x](javascript:alert(1))',
  '![](http://t.example/p.png)',
  '[[Secrets]]',
  '<img src=x onerror=alert(1)>',
  '<script>',
  '</details>',
  '<!--',
  '-->',
  'http://evil.example',
  'https://',
  'www.evil.example',
  'mailto:a@b.c',
  'a@b.example',
  '&#91;',
  '&lt;',
  '\\[',
  '\\`',
  '<!-- armproof:llm-7:PREFILL_INTERLEAVE:2026-11-30T02:31:05.120Z -->',
  'PREFILL_INTERLEAVE',
  '1',
  '0',
  'abc',
  'é',
  '日本',
  '🙂',
]

function randomText(next: () => number): string {
  const n = Math.floor(next() * 12)
  let out = ''
  for (let i = 0; i < n; i++) out += TOKENS[Math.floor(next() * TOKENS.length)]
  return out
}

const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/
const FINISHED = '2026-11-30T02:31:05.120Z'
const CASES = 3000

function facts(texts: { knob: string; expected: string; previous: string; label: string; labelName: string; meter: string }): ReportFacts {
  return {
    svc: 'llm-7',
    knob: texts.knob,
    expected: texts.expected,
    previous: texts.previous,
    mode: 'live',
    verdict: 'green',
    exitCode: 0,
    finishedAt: FINISHED,
    finishedMs: Date.parse(FINISHED),
    meter: { name: texts.meter, first: 0, last: 3, movedAt: null, movedAfterMs: 5, labels: { [texts.labelName]: texts.label } },
  }
}

/** The line with its inline code spans removed (backticks only ever open and close our spans). */
function outsideCode(line: string): string {
  expect(line.match(/`/g)?.length ?? 0, line).toSatisfy((n: number) => n % 2 === 0)
  return line.replace(/`[^`]*`/g, '')
}

describe('property: a page entry built from random hostile text is inert', () => {
  test(`${CASES} seeded cases: two lines, no control or bidi character, no link, image, tag, wiki link, autolink or extra marker`, () => {
    const next = rng(11)
    for (let i = 0; i < CASES; i++) {
      const t = {
        knob: randomText(next),
        expected: randomText(next),
        previous: randomText(next),
        label: randomText(next),
        labelName: randomText(next),
        meter: randomText(next),
      }
      const lines = entryLines(facts(t))
      const context = `case ${i}: ${JSON.stringify(t)}`
      expect(lines, context).toHaveLength(2)
      const marker = entryMarker({ svc: 'llm-7', knob: t.knob, finishedAt: FINISHED })
      expect(lines[0]!.endsWith(` ${marker}`), context).toBe(true)
      for (const [n, line] of lines.entries()) {
        expect(line, context).not.toMatch(UNSAFE)
        expect(line, context).not.toMatch(/[\n\r]/)
        const plain = outsideCode(n === 0 ? line.slice(0, -marker.length) : line)
        expect(plain, context).not.toMatch(/[[\]<>]|\]\(|!\[|\[\[|:\/\/|www\.|&[#a-z]/i)
        // Inside the code spans: no backtick of the value's own, no angle bracket to fake a marker.
        for (const span of line.match(/`[^`]*`/g) ?? []) expect(span.slice(1, -1), context).not.toMatch(/[<>`]/)
      }
      expect(lines.join('\n').split('<!--').length - 1, context).toBe(1)
      expect(marker, context).toMatch(/^<!-- armproof:llm-7:[A-Za-z0-9_.:+-]*:2026-11-30T02:31:05\.120Z -->$/)
    }
  })
})

describe('property: terminal lines built from random hostile text stay one line each, without control characters', () => {
  test(`${CASES} seeded cases through escapeControls, showText and a refusal line`, () => {
    const next = rng(29)
    for (let i = 0; i < CASES; i++) {
      const [a, b, c, d] = [randomText(next), randomText(next), randomText(next), randomText(next)]
      const context = `case ${i}: ${JSON.stringify([a, b, c, d])}`
      expect(escapeControls(a), context).not.toMatch(UNSAFE)
      expect(showText(b), context).not.toMatch(UNSAFE)
      const text = formatRefusals([{ checked: a, where: b, found: c, next: d }])
      const lines = text.split('\n')
      expect(lines, context).toHaveLength(2)
      expect(text, context).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/)
    }
  })
})
