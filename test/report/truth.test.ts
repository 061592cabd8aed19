import { describe, expect, test } from 'vitest'
import { loadConfig } from '../../helpers/config/load.ts'
import { formatTruth, truthTable } from '../../helpers/report/truth.ts'
import type { StepResult } from '../../helpers/steps/verdict.ts'

function target(argv: string[]) {
  const r = loadConfig({ argv: ['--svc', 's', '--base-url', 'http://h:1', ...argv], env: {} })
  if (!r.ok) throw new Error(JSON.stringify(r.problems))
  return r.target
}

function step(id: StepResult['id'], verdict: StepResult['verdict'], evidence: Record<string, unknown>): StepResult {
  // Step help hands the build's default on as a typed field, beside its evidence.
  const handed = id === 'help' && typeof evidence.default === 'string' ? { buildDefault: evidence.default } : {}
  return { id, title: id, verdict, expected: '', observed: `${id} observed`, where: 'w', evidence, durationMs: 1, ...handed }
}

describe('the argv-vs-default truth table', () => {
  test('a zero→non-zero arm says the conditional flag was added to argv', () => {
    const t = truthTable(target(['--knob', 'PREFILL_INTERLEAVE', '--value', '1']), [
      step('help', 'passed', { default: '0' }),
      step('argv', 'passed', { flag: ['--prefill-interleave 1'] }),
      step('ledger', 'passed', { value: '1', auto: false, boundBy: null }),
    ])
    expect(t.rows.map((r) => [r.source, r.value, r.verdict])).toEqual([
      ['expected', '1', 'info'],
      ['default (catalog)', '0', 'info'],
      ['default (--help)', '0', 'holds'],
      ['argv', '--prefill-interleave 1', 'holds'],
      ['ledger', '1, bound by None', 'holds'],
    ])
    expect(t.notes).toEqual([
      'conditional flag: the serve script passes --prefill-interleave only when PREFILL_INTERLEAVE differs from 0, so this arm added "--prefill-interleave 1" to argv',
    ])
  })

  test('at the default, argv rightly lacks the conditional flag', () => {
    const t = truthTable(target(['--knob', 'PREFILL_INTERLEAVE']), [
      step('help', 'passed', { default: '0' }),
      step('argv', 'passed', { flag: [] }),
      step('ledger', 'passed', { value: '0', auto: false, boundBy: null }),
    ])
    expect(t.rows[0]!.value).toBe('0 (the default)')
    expect(t.rows[3]!.value).toBe('no --prefill-interleave')
    expect(t.notes).toContain('PREFILL_INTERLEAVE is at its default 0: argv rightly lacks --prefill-interleave (unset means default)')
  })

  test('[auto], a binding budget and a build default that differs from the catalog are all said', () => {
    const t = truthTable(target(['--knob', 'CHECKPOINT_SLOTS', '--value', '40']), [
      step('help', 'passed', { default: '16' }),
      step('argv', 'passed', { flag: ['--checkpoint-slots 40'] }),
      step('ledger', 'failed', { value: '21', auto: false, boundBy: 'checkpoint_budget' }),
    ])
    expect(t.rows.find((r) => r.source === 'ledger')).toEqual({
      source: 'ledger',
      value: '21, bound by checkpoint_budget',
      verdict: 'differs',
    })
    expect(t.rows.find((r) => r.source === 'default (--help)')!.verdict).toBe('differs')
    expect(t.notes.join('\n')).toMatch(/catalog's default for CHECKPOINT_SLOTS is auto, but this build's --help says 16/)
    expect(t.notes).toContain('the resolved value is bound by checkpoint_budget')
  })

  test('the enum default comes from --help, and steps that did not run read as unknown', () => {
    const t = truthTable(target(['--knob', 'CHECKPOINT_POLICY']), [step('help', 'passed', { default: 'always' })])
    expect(t.rows[0]!.value).toBe('always (the default)')
    expect(t.rows[1]!.value).toBe('from the build (--help)')
    expect(t.rows[3]).toEqual({ source: 'argv', value: 'not read', verdict: 'unknown' })
    expect(formatTruth(t)).toMatch(/^truth table for CHECKPOINT_POLICY \(--checkpoint-policy\):\n {4}expected {11}always \(the default\)/)
  })

  test('every occurrence of the flag is shown, where it came from, and which one the parser kept', () => {
    const occurrences = [
      { written: 'prefill_interleave: 4', value: '4', source: 'config', spelling: 'underscore', won: false },
      { written: '--prefill-interleave 1', value: '1', source: 'argv', spelling: 'exact', won: false },
      { written: '--prefill-inter 0', value: '0', source: 'argv', spelling: 'prefix', won: true },
    ]
    const t = truthTable(target(['--knob', 'PREFILL_INTERLEAVE', '--value', '1']), [
      step('help', 'passed', { default: '0' }),
      step('argv', 'failed', { flag: occurrences.map((o) => o.written), occurrences, configFile: 'serve.yaml' }),
    ])
    expect(t.rows[3]).toEqual({
      source: 'argv',
      value: 'prefill_interleave: 4 (in serve.yaml), --prefill-interleave 1, --prefill-inter 0 ← wins',
      verdict: 'differs',
    })
    expect(t.notes).toContain(
      "argv read as the engine's parser reads it: prefill_interleave in the config file is --prefill-interleave (_ read as -); --prefill-inter is --prefill-interleave (a unique prefix); the config file's flags come before the command line's, and the last occurrence wins (--prefill-inter 0)",
    )
  })
})
