// Engine profiles and knob catalogs as data (helpers/profiles/): the built-ins load, radiance's is
// the catalog armproof was born with, and a file is checked whole: every problem at once with its
// file, line and key, hostile YAML refused as a targets file is.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import {
  BUILTIN_PROFILES,
  builtinProfile,
  builtinProfileData,
  builtinProfilesJson,
  loadProfile,
  problemText,
  profileFromText,
  withCatalog,
} from '../../helpers/profiles/load.ts'
import { array, literal, object, problemsOf, string } from '../../helpers/schema/schema.ts'
import { canonicalValue, meterStill, valueProblem } from '../../helpers/profiles/values.ts'
import { tempDir } from '../support/temp-dir.ts'

const dir = tempDir('armproof-profiles-')
const file = (name: string, text: string): string => {
  writeFileSync(join(dir, name), text)
  return name
}
const problems = (r: unknown): string[] => ((r as { problems?: Parameters<typeof problemText>[0][] }).problems ?? []).map(problemText)

describe('the built-in profiles', () => {
  test.each(BUILTIN_PROFILES)('%s loads, and names its process, help command and sources', (name) => {
    const p = builtinProfile(name)
    expect(p.engine.name).toBe(name)
    expect(p.engine.process).toMatch(/^[a-z]/)
    expect(p.engine.help.command).toContain('--help')
    expect(p.knobs.size).toBeGreaterThan(0)
    for (const [, k] of p.knobs)
      for (const id of Object.keys(k.spec.proof.sources ?? {})) expect(p.engine.resolved.map((s) => s.id)).toContain(id)
  })

  test('builtin.json, what a run reads, is each YAML file as armproof reads it (run pnpm faults-doc after changing a profile)', () => {
    const json = readFileSync(new URL('../../helpers/profiles/builtin.json', import.meta.url), 'utf8')
    expect(json).toBe(builtinProfilesJson())
    const docs = JSON.parse(json) as Record<string, unknown>
    expect(Object.keys(docs)).toEqual([...BUILTIN_PROFILES])
    for (const name of BUILTIN_PROFILES) {
      expect(docs[name], name).toEqual(builtinProfileData(name))
      expect(builtinProfile(name).doc, name).toEqual(builtinProfileData(name))
    }
  })

  test("radiance's is the catalog armproof was born with, entry for entry", () => {
    const knobs = Object.fromEntries([...builtinProfile('radiance').knobs].map(([n, k]) => [n, k.spec]))
    const ledger = (flag: string) => ({ sources: { ledger: flag } })
    expect(knobs).toEqual({
      PREFILL_INTERLEAVE: {
        env: 'PREFILL_INTERLEAVE',
        flag: '--prefill-interleave',
        type: { kind: 'int', min: 0 },
        default: '0',
        passedOnlyWhenNonDefault: true,
        proof: { meter: { name: 'radiance:engine_steps_held_total' }, ...ledger('--prefill-interleave') },
        summary: 'hold decode steps so prefill can interleave',
      },
      BUSY_PREFILL_CHUNK: {
        env: 'BUSY_PREFILL_CHUNK',
        flag: '--busy-prefill-chunk',
        type: { kind: 'int', min: 0, unit: 'tokens' },
        default: '0',
        passedOnlyWhenNonDefault: true,
        proof: { meter: { name: 'radiance:engine_prefill_chunks_capped_total' }, ...ledger('--busy-prefill-chunk') },
        summary: 'cap the prefill chunk while the engine is busy',
      },
      CHECKPOINT_POLICY: {
        env: 'CHECKPOINT_POLICY',
        flag: '--checkpoint-policy',
        type: { kind: 'enum' },
        default: null,
        passedOnlyWhenNonDefault: false,
        proof: {
          meter: { name: 'radiance:prefix_hit_cut_tokens_total', labels: { reason: 'no_snapshot' } },
          evidence: ['vllm:num_preemptions_total'],
          ...ledger('--checkpoint-policy'),
        },
        summary: 'prefix snapshot policy (prefix retention)',
      },
      CHECKPOINT_SLOTS: {
        env: 'CHECKPOINT_SLOTS',
        flag: '--checkpoint-slots',
        type: { kind: 'int-or-auto', min: 1 },
        default: 'auto',
        passedOnlyWhenNonDefault: false,
        proof: ledger('--checkpoint-slots'),
        summary: 'snapshot slots; no meter: the ledger resolved line is the proof',
      },
      STAGER_DEPTH: {
        env: 'STAGER_DEPTH',
        flag: '--stager-depth',
        type: { kind: 'int', min: 0 },
        default: '2',
        passedOnlyWhenNonDefault: false,
        proof: { stats: 'stager.depth', ...ledger('--stager-depth') },
        summary: 'prefill stager depth; no metric at all: ledger line and /stats field',
      },
    })
  })
})

describe('the schema toolkit collects every problem when asked', () => {
  test('a container goes on past its first problem; without the list it stops at the first', () => {
    const s = object({ a: string(), b: array(literal('x')), c: object({ d: string() }, { closed: true }) }, { closed: true })
    const value = { a: 1, b: ['x', 'y', 'z'], c: { d: 2, e: 3 }, f: 4 }
    expect(problemsOf(s, value)).toEqual([
      { path: 'a', problem: 'must be a string, found 1' },
      { path: 'b[1]', problem: 'must be "x", found "y"' },
      { path: 'b[2]', problem: 'must be "x", found "z"' },
      { path: 'c.d', problem: 'must be a string, found 2' },
      { path: 'c.e', problem: 'is not a key here; the keys are d' },
      { path: 'f', problem: 'is not a key here; the keys are a, b, c' },
    ])
    const first = s.check(value, '')
    expect(first).toEqual({ ok: false, path: 'a', problem: 'must be a string, found 1' })
  })
})

describe('a profile or catalog file is checked whole', () => {
  const radiance = builtinProfile('radiance')

  test('every problem at once, each with its file, line and key', () => {
    const text = [
      'knobs:', //                                        1
      '  MAX_NUM_SEQS:', //                               2
      '    env: MAX_NUM_SEQS', //                         3
      '    flag: max-num-seqs', //                        4
      '    type: integer', //                             5
      '    default: 256', //                              6
      '  bad name:', //                                   7
      '    env: X', //                                    8
      '    flag: --x', //                                 9
      '    type: bool', //                                10
      '    default: yes', //                              11
      '    sources: { args-line: x }', //                 12
      '    metre: { name: "x" }', //                      13
    ].join('\n')
    const r = withCatalog(radiance, text, 'mine.yaml')
    expect(problems(r)).toEqual([
      'mine.yaml:4: knobs.MAX_NUM_SEQS.flag must be a long flag, e.g. --max-num-seqs, found "max-num-seqs"',
      'mine.yaml:5: knobs.MAX_NUM_SEQS.type must be one of "int", "bool", "enum", "int-or-auto", found "integer"',
      'mine.yaml:7: knobs.bad name key must be a knob name in capitals, e.g. MAX_NUM_SEQS',
    ])
    // Once the shapes fit, what only the engine can say: a source it lacks, a value the type refuses, a key misspelt.
    const second = withCatalog(
      radiance,
      text.replace('max-num-seqs', '--max-num-seqs').replace('integer', 'int').replace('bad name', 'BAD'),
      'mine.yaml',
    )
    expect(problems(second)).toEqual([
      'mine.yaml:13: knobs.BAD.metre is not a key here; the keys are env, flag, aliases, env-twin, type, min, unit, default, passed-only-when-non-default, off, read-as, allow, meter, evidence, stats, sources, traffic, no-resolved-line, summary',
    ])
    const third = withCatalog(
      radiance,
      text
        .replace('max-num-seqs', '--max-num-seqs')
        .replace('integer', 'int')
        .replace('bad name', 'BAD')
        .replace('    metre: { name: "x" }', ''),
      'mine.yaml',
    )
    expect(problems(third)).toEqual([
      'mine.yaml:11: knobs.BAD.default "yes" must be true or false',
      'mine.yaml:12: knobs.BAD.sources.args-line the radiance profile has no source args-line; its sources are ledger',
    ])
  })

  test('hostile YAML is refused as a targets file is: aliases past the cap, tags, duplicate keys, a file too large', () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      ...Array.from(
        { length: 8 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}]`,
      ),
      'knobs: {}',
    ].join('\n')
    expect(problems(withCatalog(radiance, bomb, 'bomb.yaml')).join('\n')).toMatch(/^bomb\.yaml: refused: .*alias/i)
    expect(problems(withCatalog(radiance, 'knobs: !!python/object:os.system {}\n', 'tag.yaml'))).toEqual([
      expect.stringMatching(/^tag\.yaml:1: refused: .*tag/i),
    ])
    expect(problems(withCatalog(radiance, 'knobs:\n  X:\n    env: X\n  X:\n    env: Y\n', 'twice.yaml'))).toEqual([
      expect.stringMatching(/^twice\.yaml:4: not valid YAML: Map keys must be unique/),
    ])
    const big = file('big.yaml', `knobs: {}\n${'#'.repeat(300 * 1024)}\n`)
    expect(problems(loadProfile('radiance', big, dir))).toEqual([
      'big.yaml: is larger than 256 KiB; a profile or catalog is a few KiB of YAML',
    ])
    expect(problems(loadProfile('no-such.yaml', null, dir))).toEqual(['no-such.yaml: no such file'])
  })

  test('a whole profile from a file: its engine and knobs, the problems of both at once', () => {
    const text = file(
      'mine.yaml',
      'name: mine\nsummary: x\nprocess: mine\nhelp: { command: mine --help, layout: argparse }\nparser: { underscore-is-dash: true, abbreviations: false, last-wins: true }\nresolved:\n  - { id: ledger, label: the ledger, says: engine, shape: flag-line }\nhealth: {}\nmetrics: {}\nknobs:\n  KNOB:\n    env: KNOB\n    flag: --knob\n    type: int\n    default: 1\n',
    )
    const p = loadProfile(text, null, dir)
    if ('problems' in p) throw new Error(problems(p).join('\n'))
    expect([p.engine.name, p.engine.parser.abbreviations, [...p.knobs.keys()], p.knobs.get('KNOB')!.spec.proof.sources]).toEqual([
      'mine',
      false,
      ['KNOB'],
      { ledger: '--knob' },
    ])
    const broken = profileFromText(
      "name: mine\nsummary: x\nprocess: mine\nhelp: { command: mine --help, layout: argparse }\nparser: { underscore-is-dash: true, abbreviations: false, last-wins: true }\nlog: { prefix: '([' }\nresolved:\n  - { id: args, label: x, says: parser, shape: python-dict }\nhealth: {}\nmetrics: {}\nknobs:\n  KNOB: { env: KNOB, flag: --knob, type: int, default: -1, min: 0 }\n",
      'broken.yaml',
    )
    expect(problems(broken)).toEqual([
      expect.stringMatching(/^broken\.yaml:6: log\.prefix is not a regular expression: /),
      'broken.yaml:8: resolved[0].marker is required for a python-dict source (what the message of its log line starts with)',
      'broken.yaml:12: knobs.KNOB.default "-1" must be a whole number ≥ 0',
    ])
  })
})

describe("a knob's values, and where its meter must stay at zero", () => {
  const vllm = builtinProfile('vllm')
  const llama = builtinProfile('llama.cpp')
  const epc = vllm.knobs.get('ENABLE_PREFIX_CACHING')!.spec
  const parallel = llama.knobs.get('PARALLEL')!.spec
  const radiance = builtinProfile('radiance').knobs.get('PREFILL_INTERLEAVE')!.spec

  test("a switch is true or false (Python's True reads as true); an int-or-auto takes its flag's own spelling of auto", () => {
    expect([valueProblem(epc, 'true'), valueProblem(epc, 'on')]).toEqual([undefined, 'must be true or false'])
    expect([canonicalValue(epc, 'True'), canonicalValue(epc, 'False')]).toEqual(['true', 'false'])
    expect([
      valueProblem(parallel, '-1'),
      canonicalValue(parallel, '-1'),
      canonicalValue(parallel, '007'),
      valueProblem(parallel, '0'),
    ]).toEqual([undefined, 'auto', '7', 'must be ≥ 1'])
    const chunk = builtinProfile('sglang').knobs.get('CHUNKED_PREFILL_SIZE')!.spec
    expect([valueProblem(chunk, '-1'), valueProblem(chunk, '-2'), valueProblem(radiance, '-1')]).toEqual([
      undefined,
      'must be ≥ -1',
      'must be a whole number ≥ 0',
    ])
  })

  test("the meter stays still at a value in the knob's off list; without one, at its default: radiance's rollbacks, unchanged", () => {
    // Prefix caching is on by default in vLLM V1: at the default its meter must move.
    expect([meterStill(epc, null), meterStill(epc, 'true'), meterStill(epc, 'false')]).toEqual([false, false, true])
    expect([meterStill(radiance, null), meterStill(radiance, '0'), meterStill(radiance, '1')]).toEqual([true, true, false])
    const policy = builtinProfile('radiance').knobs.get('CHECKPOINT_POLICY')!.spec
    expect([meterStill(policy, null), meterStill(policy, 'always', 'always'), meterStill(policy, 'on_evict', 'always')]).toEqual([
      true,
      true,
      false,
    ])
  })
})
