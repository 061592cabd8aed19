import { describe, expect, test } from 'vitest'
import { argvExcerpt } from '../../helpers/steps/argv/parse.ts'
import { parseCmdline } from '../../helpers/engine/proc.ts'
import { resolveFlag } from '../../helpers/argparse/resolve.ts'
import { RADIANCE_PARSER } from '../../helpers/argparse/rules.ts'
import { findHelpEntry } from '../../helpers/steps/help/parse.ts'
import { findResolved } from '../../helpers/steps/ledger/parse.ts'
import { parseDuration } from '../../helpers/config/duration.ts'
import { quote, splitWords } from '../../helpers/config/shell.ts'
import { execFileSync } from 'node:child_process'

describe('argv from /proc/<pid>/cmdline', () => {
  const argv = parseCmdline(
    '/opt/radiance/bin/radiance\0serve\0--prefill-interleave\x001\0--checkpoint-policy=on_evict\0--prefill-interleave-max\x009\0',
  )
  const known = ['--prefill-interleave', '--prefill-interleave-max', '--checkpoint-policy', '--busy-prefill-chunk'].map((name) => ({
    name,
    takesValue: true,
  }))
  const read = (words: readonly string[], flag: string) => resolveFlag(words, flag, RADIANCE_PARSER, known)
  // Was findFlag (every `--flag V` / `--flag=V`); the occurrences are now read as the engine's parser reads them (helpers/argparse/resolve.ts).
  test.each([
    ['--prefill-interleave', ['1'], ['--prefill-interleave 1']],
    ['--checkpoint-policy', ['on_evict'], ['--checkpoint-policy=on_evict']],
    ['--busy-prefill-chunk', [], []],
  ])('finds %s in both --flag V and --flag=V forms, never a longer flag', (flag, values, written) => {
    const r = read(argv, flag)
    expect(r.occurrences.map((o) => o.value)).toEqual(values)
    expect(r.occurrences.map((o) => o.written)).toEqual(written)
  })
  test('a repeated flag keeps every value in order, and argparse keeps the last', () => {
    const r = read(['x', '--prefill-interleave', '1', '--prefill-interleave=2'], '--prefill-interleave')
    expect(r.occurrences.map((o) => o.value)).toEqual(['1', '2'])
    expect(r.value).toBe('2')
  })
  test('a flag that takes a value, given last without one, is refused as argparse refuses it (it was an empty value)', () => {
    expect(read(['x', '--prefill-interleave'], '--prefill-interleave').problems).toEqual([
      'argument --prefill-interleave: expected one argument',
    ])
  })
  test('the excerpt cuts long words and long lines', () => {
    expect(argvExcerpt(['a'.repeat(100)], 400, 10)).toBe('aaaaaaaaaa…')
    expect(argvExcerpt(Array(100).fill('word'), 20)).toBe('word word word word …')
  })
})

describe('the boot ledger', () => {
  const ledger = [
    'INFO 11-29 01:00:00.000 [ledger.py:58] --prefill-interleave 0 (default 0)',
    '2026-11-30T02:11:03.120Z \u001b[32mINFO\u001b[0m [ledger.py:58] --prefill-interleave 1 (default 0)',
    'INFO 11-30 02:11:03.122 [ledger.py:73] --checkpoint-slots 20 [auto] slots of 1.5 GiB each of a budget of 31.5 GiB, bound by None',
    'WARNING 11-30 02:11:03.123 [ledger.py:73] --checkpoint-slots=21 slots of 1.5 GiB each of a budget of 31.5 GiB, bound by checkpoint_budget.',
    'INFO model uses --prefill-interleave-max 4',
  ].join('\n')
  test('finds every boot, the last being the running engine, through log prefixes and colour codes', () => {
    const found = findResolved(ledger, '--prefill-interleave')
    expect(found.map((l) => l.value)).toEqual(['0', '1'])
    expect(found[1]).toMatchObject({ line: 2, auto: false, boundBy: null })
    expect(found[1]!.text).not.toContain('\u001b')
  })
  test('reports [auto] and what bound the value', () => {
    expect(findResolved(ledger, '--checkpoint-slots').map(({ value, auto, boundBy }) => ({ value, auto, boundBy }))).toEqual([
      { value: '20', auto: true, boundBy: null },
      { value: '21', auto: false, boundBy: 'checkpoint_budget' },
    ])
  })
  test('a flag the ledger never names is not found', () => {
    expect(findResolved(ledger, '--busy-prefill-chunk')).toEqual([])
  })
})

describe("the build's --help", () => {
  const help = `usage: radiance [-h] [--prefill-interleave PREFILL_INTERLEAVE]

options:
  -h, --help            show this help message and exit
  --prefill-interleave PREFILL_INTERLEAVE
                        Hold up to N decode steps to interleave prefill. (default: 0)
  --checkpoint-policy {always,on_evict,never}
                        Prefix snapshot policy. (default: always)
  --stager-depth STAGER_DEPTH
                        Depth. Unlike --busy-prefill-chunk, it has no meter.
  --mode MODE           Choices: fast, slow
                        Default: fast
`
  test('finds a defined flag with its default', () => {
    expect(findHelpEntry(help, '--prefill-interleave')).toMatchObject({ choices: null, default: '0' })
  })
  test('reads {a,b,c} choices', () => {
    expect(findHelpEntry(help, '--checkpoint-policy')).toMatchObject({ choices: ['always', 'on_evict', 'never'], default: 'always' })
  })
  test('reads "Choices:" and "Default:" lines', () => {
    expect(findHelpEntry(help, '--mode')).toMatchObject({ choices: ['fast', 'slow'], default: 'fast' })
  })
  test("a flag named only in another option's prose does not count", () => {
    expect(findHelpEntry(help, '--busy-prefill-chunk')).toBeUndefined()
  })
  test('a longer flag does not stand in for a shorter one', () => {
    expect(findHelpEntry('  --prefill-interleave-max N\n', '--prefill-interleave')).toBeUndefined()
  })
})

describe('durations', () => {
  test.each([
    ['15m', 900_000],
    ['90s', 90_000],
    ['1h30m', 5_400_000],
    ['500ms', 500],
    ['30', 30_000],
    ['2.5s', 2500],
  ])('%s is %i ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms)
  })
  test.each(['', 'soon', '5 m', '-1s', '1d'])('%j is not a duration', (text) => {
    expect(parseDuration(text)).toBeUndefined()
  })
})

describe('shell quoting', () => {
  const hostile = ["a'b", 'x; reboot', '$(id)', '`id`', 'a\nb', '--help', '', 'ä ö', '\\', '"', '*', '~root']
  test.each(hostile)('sh reads quote(%j) back as exactly that one word', (word) => {
    const out = execFileSync('sh', ['-c', `printf '%s' ${quote(word)}`], { encoding: 'utf8' })
    expect(out).toBe(word)
  })
  test('splits ssh options as a shell would', () => {
    expect(splitWords(`-i "/k/my key" -o 'A=b c' -p\\ 22`)).toEqual(['-i', '/k/my key', '-o', 'A=b c', '-p 22'])
  })
  test.each(['-i k; id', '$(id)', '"$HOME"', 'a | b', "'open"])('refuses %j, which a shell would act on', (text) => {
    expect(() => splitWords(text)).toThrow()
  })
})
