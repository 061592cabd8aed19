// One command-line parser and one set of yes/no words for verify and writeback (helpers/config/command-line.ts).
import { describe, expect, test } from 'vitest'
import { envBoolean, FALSE_WORDS, parseCommandLine, TRUE_WORDS } from '../../helpers/config/command-line.ts'
import { loadConfig } from '../../helpers/config/load.ts'
import { parseWritebackOptions } from '../../helpers/writeback/options.ts'

const VERIFY_ENV = { VERIFY_SVC: 'demo', VERIFY_KNOB: 'PREFILL_INTERLEAVE', VERIFY_BASE_URL: 'http://127.0.0.1:8000' }

describe('the yes/no words of an env twin', () => {
  test.each([...TRUE_WORDS.map((w) => [w, true] as const), ...FALSE_WORDS.map((w) => [w, false] as const)])(
    '%j means %s, whatever its case and spaces',
    (word, yes) => {
      expect(envBoolean(word)).toBe(yes)
      expect(envBoolean(` ${word.toUpperCase()} `)).toBe(yes)
    },
  )

  test.each(['2', 'y', 'nope', 'truee'])('%j is neither', (word) => {
    expect(envBoolean(word)).toBeUndefined()
  })

  test.each([...TRUE_WORDS.filter((w) => w !== ''), ...FALSE_WORDS.filter((w) => w !== '')])(
    'verify (VERIFY_DROPIN_CHECK) and writeback (WRITEBACK_DRY_RUN) read %j alike',
    (word) => {
      const verify = loadConfig({ argv: [], env: { ...VERIFY_ENV, VERIFY_DROPIN_CHECK: word } })
      const writeback = parseWritebackOptions([], { WRITEBACK_REPORT: 'r.json', WRITEBACK_VAULT: 'v', WRITEBACK_DRY_RUN: word }, '/')
      expect(verify.ok && writeback.ok).toBe(true)
      expect(verify.ok && verify.target.dropinCheck).toBe(envBoolean(word))
      expect(writeback.ok && writeback.options.dryRun).toBe(envBoolean(word))
    },
  )
})

describe('the parser', () => {
  const table = [
    { flag: 'name', kind: 'string' },
    { flag: 'quiet', kind: 'boolean' },
  ] as const

  test('reads values and flags, and collects every problem in order', () => {
    const r = parseCommandLine(['--name', 'a', '--quiet', 'stray', '--quiet=1', '--nope', '--name'], table)
    expect(r.values.get('quiet')).toBe(true)
    expect(r.problems).toEqual([
      { kind: 'positional', value: 'stray' },
      { kind: 'takes-no-value', flag: 'quiet' },
      { kind: 'unknown', rawName: '--nope', swallowed: false },
      { kind: 'needs-value', flag: 'name' },
    ])
  })

  test('takes the word after an unknown secret-sounding option as its value, and a refused option with its value', () => {
    const r = parseCommandLine(['--token', 'sk-1', '--api-key', 'sk-2', '-h'], table, ['api-key'])
    expect(r.problems).toEqual([
      { kind: 'unknown', rawName: '--token', swallowed: true },
      { kind: 'refused', flag: 'api-key' },
    ])
    expect(r.help).toBe(true)
  })
})
