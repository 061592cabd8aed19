// The one-flag law's record (helpers/config/arm-record.ts): the vault page's `engine:` line reads
// back to the very record it was written from (its digest the same) whatever hostile text the
// engine's command line holds, and stays one inert line; the comparison names every difference
// but the knob's; the whole command line is read as the engine's parser reads it.
import { describe, expect, test } from 'vitest'
import { knobRecordNames } from '../../../helpers/steps/one-flag/names.ts'
import {
  asArmRecord,
  parseRecordText,
  recordChanges,
  recordDigest,
  recordText,
  type ArmRecord,
} from '../../../helpers/config/arm-record.ts'
import { resolveCommandLine } from '../../../helpers/argparse/resolve.ts'
import { RADIANCE_PARSER } from '../../../helpers/argparse/rules.ts'
import { ENGINE_LINE, pageEntries, readMarker } from '../../../helpers/config/vault-page.ts'
import { entryLines, entryMarker } from '../../../helpers/writeback/entry.ts'
import { insertEntry } from '../../../helpers/writeback/page.ts'
import type { ReportFacts } from '../../../helpers/writeback/report.ts'
import { recordScript, parseRecordOutput } from '../../../helpers/steps/one-flag/read.ts'
import { prng } from '../../support/prng.ts'

const TOKENS = [
  '`',
  '``',
  ' ',
  '"',
  '\\',
  '=',
  '="',
  '-',
  '--',
  '$',
  '<!--',
  '-->',
  '<',
  '>',
  '&',
  '[x](y)',
  '\n',
  '\r',
  '\t',
  '\u202e',
  '\u2028',
  '\u0000',
  'é',
  '🙂',
  'a',
  'B',
  '0',
  '/',
  ':',
  '.',
  '·',
  '|',
  '*',
  '_',
]
const word = (next: () => number): string => {
  let s = ''
  for (let i = Math.floor(next() * 6); i >= 0; i--) s += TOKENS[Math.floor(next() * TOKENS.length)]
  return s
}

function randomRecord(next: () => number): ArmRecord {
  const flags: Record<string, string> = {}
  for (let i = Math.floor(next() * 5); i > 0; i--) flags[`--f${Math.floor(next() * 100)}`] = next() < 0.2 ? '' : word(next)
  if (next() < 0.5) flags['$LLAMA_ARG_X'] = word(next)
  return {
    flags,
    args: Array.from({ length: Math.floor(next() * 3) }, () => word(next)),
    binary:
      next() < 0.1 ? null : { path: `/${word(next)}`, size: Math.floor(next() * 1e9), mtime: 1_700_000_000 + Math.floor(next() * 1e8) },
    image: next() < 0.5 ? null : `sha256:${word(next)}`,
    model: next() < 0.1 ? null : word(next),
  }
}

const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/

describe('the engine line of a vault entry', () => {
  test('2000 seeded hostile records read back to the same record and digest; the line is one inert line', () => {
    const next = prng(38)
    for (let i = 0; i < 2000; i++) {
      const r = randomRecord(next)
      const text = recordText(r)
      const context = `case ${i}: ${JSON.stringify(r)}`
      expect(text, context).not.toMatch(UNSAFE)
      expect(text, context).not.toMatch(/[\n\r]|<!--|-->/)
      const spans = text.match(/`[^`]*`/g) ?? []
      for (const span of spans) expect(span.slice(1, -1), context).not.toMatch(/[<>&`]/)
      const back = parseRecordText(text)
      expect(back, context).toEqual(r)
      expect(recordDigest(back as ArmRecord), context).toBe(recordDigest(r))
    }
  })

  test('an edited line does not read back as the record its marker names', () => {
    const r: ArmRecord = {
      flags: { '--port': '8000' },
      args: [],
      binary: { path: '/usr/bin/x', size: 1, mtime: 2 },
      image: null,
      model: 'm',
    }
    const edited = parseRecordText(recordText(r).replace('--port=8000', '--port=8001')) as ArmRecord
    expect(recordDigest(edited)).not.toBe(recordDigest(r))
    expect(parseRecordText('model `m` · image none')).toEqual({ problem: expect.stringContaining('is not the line armproof writes') })
  })

  test('writeback writes it as a third line, its digest in the marker; the page reads back as entries, older ones without it too', () => {
    const record: ArmRecord = {
      flags: { '--port': '8000', '--api-key': '[redacted]' },
      args: ['serve', 'm'],
      binary: null,
      image: 'sha256:ab',
      model: 'm',
    }
    const facts: ReportFacts = {
      svc: 'llm-7',
      knob: 'PREFILL_INTERLEAVE',
      expected: '1',
      previous: '0',
      mode: 'live',
      verdict: 'green',
      exitCode: 0,
      finishedAt: '2026-11-30T02:31:05.120Z',
      finishedMs: Date.parse('2026-11-30T02:31:05.120Z'),
      meter: null,
      endpoint: 'http://gpu-7:8000',
      record,
    }
    const lines = entryLines(facts)
    expect(lines).toHaveLength(3)
    expect(entryMarker(facts)).toBe(
      `<!-- armproof:llm-7:PREFILL_INTERLEAVE:2026-11-30T02:31:05.120Z:http:__gpu-7:8000:record=${recordDigest(record)} -->`,
    )
    expect(lines[2]).toBe(
      `  ${ENGINE_LINE}model \`m\` · image \`sha256:ab\` · binary unread · command line \`serve m --api-key=[redacted] --port=8000\``,
    )
    const old = entryLines({ ...facts, record: null, finishedAt: '2026-11-29T01:00:00Z', finishedMs: Date.parse('2026-11-29T01:00:00Z') })
    expect(old).toHaveLength(2)
    const page = insertEntry(insertEntry('# llm-7\n\n## Knob log\n', old), lines)
    const entries = pageEntries(page)
    expect(entries.map((e) => [e.marker.finishedAt, e.marker.endpoint, e.marker.record])).toEqual([
      ['2026-11-29T01:00:00Z', 'http:__gpu-7:8000', null],
      ['2026-11-30T02:31:05.120Z', 'http:__gpu-7:8000', recordDigest(record)],
    ])
    expect(parseRecordText(entries[1]!.under[1]!.slice(ENGINE_LINE.length))).toEqual(record)
    expect(readMarker('<!-- armproof:llm-7:PREFILL_INTERLEAVE:2026-11-30T02:31:05.120Z -->')).toMatchObject({
      endpoint: null,
      record: null,
    })
  })
})

describe('the comparison', () => {
  const base: ArmRecord = {
    flags: { '--port': '8000', '--prefill-interleave': '0', '--api-key': '[redacted]' },
    args: ['engine.py'],
    binary: { path: '/usr/bin/node', size: 10, mtime: 1_700_000_000 },
    image: null,
    model: 'radiance-ref-8b',
  }
  const knob = knobRecordNames({ flag: '--prefill-interleave', type: { kind: 'int', min: 0 }, envTwin: 'PI' }, RADIANCE_PARSER)

  test("the knob's flag and its env twin may differ; nothing else may", () => {
    expect(knob).toEqual(['--prefill-interleave', '$PI'])
    const armed = { ...base, flags: { ...base.flags, '--prefill-interleave': '1', $PI: '1' } }
    expect(recordChanges(base, armed, knob)).toEqual([])
    const two = { ...armed, flags: { ...armed.flags, '--port': '8001' }, model: 'other', args: ['engine2.py'], image: 'sha256:1' }
    expect(recordChanges(base, two, knob)).toEqual([
      { what: 'served model', before: 'radiance-ref-8b', now: 'other' },
      { what: 'image', before: 'none (not a container)', now: 'sha256:1' },
      { what: 'positional arguments', before: 'engine.py', now: 'engine2.py' },
      { what: '--port', before: '--port=8000', now: '--port=8001' },
    ])
    expect(recordChanges(base, { ...base, binary: { ...base.binary!, size: 11 } }, knob)).toEqual([
      {
        what: 'binary',
        before: '/usr/bin/node (10 bytes, modified 2023-11-14T22:13:20Z)',
        now: '/usr/bin/node (11 bytes, modified 2023-11-14T22:13:20Z)',
      },
    ])
  })

  test('an untrusted value is a record only when it has the record shape', () => {
    expect(asArmRecord(base)).toEqual(base)
    for (const bad of [
      null,
      'x',
      { ...base, flags: { 'not a flag': 'x' } },
      { ...base, binary: { path: '/x', size: 'big', mtime: 1 } },
      { ...base, args: [1] },
    ])
      expect(asArmRecord(bad)).toBeNull()
  })
})

describe('the whole command line as the parser reads it', () => {
  const known = [
    { name: '--port', takesValue: true },
    { name: '--prefill-interleave', takesValue: true },
    { name: '--enable-x', takesValue: false },
    { name: '--max-num-seqs', takesValue: true },
    { name: '--max-model-len', takesValue: true },
  ]
  test('prefixes and _ spellings resolve to the listed names, the last occurrence wins, a config file sits beneath, positionals kept', () => {
    const r = resolveCommandLine(
      [
        '/usr/bin/python3',
        'serve.py',
        'serve',
        '--port',
        '8000',
        '--prefill_interleave=1',
        '--enable-x',
        '--max-num',
        '4',
        '--port=8001',
        '--config',
        'c.yaml',
        '--weird=1',
      ],
      RADIANCE_PARSER,
      known,
      { file: 'c.yaml', entries: [{ words: ['--max-model-len', '4096'], written: 'max-model-len: 4096' }] },
    )
    expect(Object.fromEntries(r.flags)).toEqual({
      '--max-model-len': '4096',
      '--port': '8001',
      '--prefill-interleave': '1',
      '--enable-x': '',
      '--max-num-seqs': '4',
      '--weird': '1',
    })
    expect(r.positionals).toEqual(['serve.py', 'serve'])
    expect(r.unlisted).toEqual(['--weird=1'])
    expect(r.problems).toEqual([])
  })
  test('an ambiguous prefix is a problem: the parser would refuse the command line', () => {
    expect(resolveCommandLine(['x', '--max', '4'], RADIANCE_PARSER, known).problems).toEqual([
      'ambiguous option: --max could match --max-num-seqs, --max-model-len',
    ])
  })
})

describe("the host read of the engine's binary and twins", () => {
  test('prints the exe and only the named variables; its output reads back', () => {
    const script = recordScript('42', ['LLAMA_ARG_N_PARALLEL'])
    expect(script).toContain("stat -L -c '%s %Y' /proc/$P/exe")
    expect(script).toContain("grep -a -E '^(LLAMA_ARG_N_PARALLEL)='")
    expect(() => recordScript('42; rm -rf /', [])).toThrow()
    expect(() => recordScript('42', ['A;B'])).toThrow()
    expect(parseRecordOutput('123 1700000000\n/usr/bin/llama-server\nLLAMA_ARG_N_PARALLEL=2\nOTHER=1\n', ['LLAMA_ARG_N_PARALLEL'])).toEqual(
      {
        binary: { path: '/usr/bin/llama-server', size: 123, mtime: 1_700_000_000 },
        env: new Map([['LLAMA_ARG_N_PARALLEL', '2']]),
      },
    )
  })

  test("a replay's exe path as the recorder kept it (<cwd>/…, <node>) reads back; a relative or empty one does not", () => {
    expect(parseRecordOutput('9 1700000000\n<cwd>/.tools/node_modules/node/bin/node\n', [])).toEqual({
      binary: { path: '<cwd>/.tools/node_modules/node/bin/node', size: 9, mtime: 1_700_000_000 },
      env: new Map(),
    })
    expect(parseRecordOutput('9 1700000000\n<node>\n', [])).toMatchObject({ binary: { path: '<node>' } })
    expect(parseRecordOutput('9 1700000000\n<node>/x\n', [])).toMatch(/^stat and readlink of the exe printed/)
    expect(parseRecordOutput('9 1700000000\nbin/node\n', [])).toMatch(/^stat and readlink of the exe printed/)
    expect(parseRecordOutput('9 1700000000\n<cwdx>/node\n', [])).toMatch(/^stat and readlink of the exe printed/)
    expect(parseRecordOutput('9 1700000000\n\n', [])).toMatch(/^stat and readlink of the exe printed/)
  })
})
