// A command line as the engine's parser reads it (helpers/argparse/): the rules case by case,
// then two properties over random command lines (seeded): armproof's reading always equals
// Python's own argparse behind vLLM's FlexibleArgumentParser pre-pass (python3 runs a sample
// here), and equals the reference engine's own parser (engine/flags.ts) over radiance's flags.
import { execFileSync } from 'node:child_process'
import { describe, expect, test } from 'vitest'
import { configArgs, pythonFloat } from '../../helpers/argparse/config-file.ts'
import { dashed, findConfig, resolveFlag, type ConfigArgs } from '../../helpers/argparse/resolve.ts'
import { RADIANCE_PARSER, type KnownFlag } from '../../helpers/argparse/rules.ts'
import { listFlags } from '../../helpers/steps/help/parse.ts'
import { parseFlags } from '../../engine/flags.ts'
import { loadYaml } from '../../engine/profiles/yaml.ts'
import { helpText } from '../../engine/help.ts'
import { pick, prng } from '../support/prng.ts'
import { PY_DASHED } from '../support/python-dashed.ts'
import { pythonBin } from '../support/python.ts'

const FLAG = '--prefill-interleave'
// parseFlags reads a --config file with the YAML library an engine imports only when it is given one.
await loadYaml()
const KNOWN: KnownFlag[] = ['--host', '--port', FLAG, '--prefill-chunk', '--stager-depth', '--config']
  .map((name) => ({ name, takesValue: true }))
  .concat([{ name: '--enable-x', takesValue: false }])
const read = (argv: readonly string[], config?: ConfigArgs) =>
  resolveFlag(['/opt/radiance/bin/radiance', 'serve', ...argv], FLAG, RADIANCE_PARSER, KNOWN, config)

describe('the rules, case by case', () => {
  test('_ is -, in the name only and before its first "."', () => {
    expect(dashed('--prefill_interleave')).toBe('--prefill-interleave')
    expect(dashed('--max_num_seqs=a_b')).toBe('--max-num-seqs=a_b')
    expect(dashed('--spec_config.num_tokens')).toBe('--spec-config.num_tokens')
    expect(dashed('value_1')).toBe('value_1')
    expect(read(['--prefill_interleave', '1'])).toMatchObject({
      value: '1',
      occurrences: [{ spelling: 'underscore', written: '--prefill_interleave 1' }],
    })
  })

  test('a unique prefix is the flag; an ambiguous one is refused; an exact name beats a longer one', () => {
    expect(read(['--prefill-inter', '1'])).toMatchObject({ value: '1', occurrences: [{ spelling: 'prefix' }] })
    expect(read(['--prefill=1']).problems).toEqual(['ambiguous option: --prefill=1 could match --prefill-interleave, --prefill-chunk'])
    expect(resolveFlag(['x', '--port', '1'], '--port', RADIANCE_PARSER, [...KNOWN, { name: '--port-range', takesValue: true }]).value).toBe(
      '1',
    )
  })

  test('the last occurrence wins, each one is kept, and the parser keeps the one it keeps', () => {
    const r = read(['--prefill-interleave', '1', '--prefill-inter', '0'])
    expect(r.value).toBe('0')
    expect(r.occurrences.map((o) => [o.written, o.won])).toEqual([
      ['--prefill-interleave 1', false],
      ['--prefill-inter 0', true],
    ])
    expect(resolveFlag(['x', FLAG, '1', FLAG, '0'], FLAG, { ...RADIANCE_PARSER, lastWins: false }, KNOWN).value).toBe('1')
  })

  test('a value is the next word unless it is an option; a negative number is a value; a value-less flag takes none', () => {
    expect(read([FLAG, '-1']).value).toBe('-1')
    expect(read([FLAG, '--port', '1']).problems).toEqual([`argument ${FLAG}: expected one argument`])
    expect(read(['--enable-x', FLAG, '2']).value).toBe('2')
    expect(read(['--enable-x=1', FLAG, '2'])).toMatchObject({ value: '2', refused: ["argument --enable-x: ignored explicit argument '1'"] })
    expect(read(['--unknown', '5', FLAG, '3'])).toMatchObject({ value: '3', refused: ['unrecognized arguments: --unknown'] })
  })

  test("without the build's flag list, only the flag's own spellings are decided; a possible prefix is unsure", () => {
    const r = resolveFlag(['x', '--prefill_interleave', '1', '--prefill-inter', '0'], FLAG, RADIANCE_PARSER, null)
    expect(r).toMatchObject({ value: '1', unsure: ['--prefill-inter'] })
    expect(resolveFlag(['x', '--fault', 'a', FLAG, '2'], FLAG, RADIANCE_PARSER, null)).toMatchObject({ value: '2', unsure: [] })
  })

  test('--config FILE goes beneath the command line; named twice, or with no file, it is refused', () => {
    const config = configArgs('serve.yaml', 'prefill_interleave: 4\nport: 8000\n') as ConfigArgs
    expect(findConfig(['x', '--config', 'serve.yaml'], RADIANCE_PARSER)).toEqual({ path: 'serve.yaml', index: 1, inline: false })
    expect(findConfig(['x', '--config=/etc/r.yaml'], RADIANCE_PARSER)).toEqual({ path: '/etc/r.yaml', index: 1, inline: true })
    expect(read(['--config', 'serve.yaml'], config)).toMatchObject({
      value: '4',
      occurrences: [{ source: 'config', written: 'prefill_interleave: 4', spelling: 'underscore' }],
    })
    expect(read(['--config', 'serve.yaml', FLAG, '1'], config).occurrences.map((o) => [o.source, o.value, o.won])).toEqual([
      ['config', '4', false],
      ['argv', '1', true],
    ])
    expect(read(['--config', 'serve.yaml']).unsure).toEqual(['the flags of serve.yaml (not read)'])
    expect(findConfig(['x', '--config', 'a', '--config', 'b'], RADIANCE_PARSER)).toEqual({
      problem: '--config is given 2 times; the parser reads one config file only and refuses more',
    })
    expect(findConfig(['x', '--config'], RADIANCE_PARSER)).toEqual({ problem: '--config is not followed by a file name' })
  })

  test("a config file is read as PyYAML reads it, its values as Python's str() prints them", () => {
    const r = configArgs('c.yaml', 'a: 1\nb: 1.0\nc: on\nd: off\ne: 1e3\nf: "x y"\ng: [1, 2]\nh: 0x1F\ny: 7\ni: null\n')
    expect('entries' in r && r.entries.map((e) => e.words)).toEqual([
      ['--a', '1'],
      ['--b', '1.0'],
      ['--c'],
      ['--e', '1e3'],
      ['--f', 'x y'],
      ['--g', '1', '2'],
      ['--h', '31'],
      ['--y', '7'],
      ['--i', 'None'],
    ])
    expect(configArgs('c.yaml', '- a\n- b\n')).toEqual({ problem: 'c.yaml is not a YAML mapping of flag names to values' })
    expect(configArgs('c.yaml', 'a: {b: 1}\n')).toEqual({ problem: 'c.yaml: a holds a mapping; only plain values and lists become flags' })
    expect([1, 0.1, 1e16, 1e15, 0.0001, 0.00001, 2.5e20, -3.25].map(pythonFloat)).toEqual([
      '1.0',
      '0.1',
      '1e+16',
      '1000000000000000.0',
      '0.0001',
      '1e-05',
      '2.5e+20',
      '-3.25',
    ])
  })

  test("the build's flags come from its --help: entry lines with their metavars, and the usage line", () => {
    const help =
      'usage: radiance [-h] [--host HOST] [--quiet]\n\noptions:\n  -h, --help            show this help\n  --host HOST           Bind address.\n  --policy {a,b}        A choice.\n  --enable-x, --no-enable-x\n                        A switch.\n'
    expect(listFlags(help)).toEqual([
      { name: '-h', takesValue: false },
      { name: '--help', takesValue: false },
      { name: '--host', takesValue: true },
      { name: '--policy', takesValue: true },
      { name: '--enable-x', takesValue: false },
      { name: '--no-enable-x', takesValue: false },
      { name: '--quiet', takesValue: false },
    ])
  })
})

/** One random case: a parser's flags, a command line and maybe a config file. */
interface Case {
  flags: KnownFlag[]
  argv: string[]
  config: Array<[string, number | string]> | null
}

const NAMES = ['--prefill-interleave-max', '--prefill-chunk', '--prefix-cache', '--port', '--host', '--stager', '--stager-depth', '--pre']
const SWITCHES = ['--enable-x', '--prefill-fast', '--verbose']
const WORDS = ['auto', 'fast', 'x1', 'model-a', 'b_c']

function spell(random: () => number, name: string): string {
  let w = name
  const roll = random()
  // A prefix of the name (it may be ambiguous, or no flag at all).
  if (roll < 0.25) w = name.slice(0, Math.max(3, Math.floor(name.length / 2)) + Math.floor(random() * (name.length / 2)))
  // Some dashes of the name written as underscores.
  if (random() < 0.35) w = `--${w.slice(2).replace(/-/g, (d) => (random() < 0.6 ? '_' : d))}`
  return w
}

function value(random: () => number): string {
  return pick(random, [String(Math.floor(random() * 9)), String(Math.floor(random() * 200)), '-1', pick(random, WORDS)])
}

function randomCase(random: () => number): Case {
  const flags: KnownFlag[] = [
    { name: FLAG, takesValue: true },
    { name: '--config', takesValue: true },
  ]
  for (const n of NAMES) if (random() < 0.5) flags.push({ name: n, takesValue: true })
  for (const n of SWITCHES) if (random() < 0.4) flags.push({ name: n, takesValue: false })
  const argv: string[] = []
  const n = 1 + Math.floor(random() * 6)
  for (let i = 0; i < n; i++) {
    const f =
      random() < 0.5
        ? { name: FLAG, takesValue: true }
        : random() < 0.05
          ? { name: '--unknown-flag', takesValue: true }
          : pick(
              random,
              flags.filter((x) => x.name !== '--config'),
            )
    const word = spell(random, f.name)
    if (!f.takesValue) argv.push(random() < 0.05 ? `${word}=1` : word)
    else if (random() < 0.25) argv.push(`${word}=${value(random)}`)
    else if (random() < 0.05) argv.push(word)
    else argv.push(word, value(random))
  }
  let config: Case['config'] = null
  if (random() < 0.35) {
    config = []
    const keys = 1 + Math.floor(random() * 3)
    for (let i = 0; i < keys; i++) {
      const f =
        random() < 0.6
          ? FLAG
          : pick(
              random,
              flags.filter((x) => x.takesValue && x.name !== '--config').map((x) => x.name),
            )
      config.push([spell(random, f).slice(2), random() < 0.7 ? Math.floor(random() * 50) : pick(random, WORDS)])
    }
    const at = Math.floor(random() * (argv.length + 1))
    argv.splice(at, 0, ...(random() < 0.5 ? ['--config', 'serve.yaml'] : ['--config=serve.yaml']))
    if (random() < 0.03) argv.push('--config', 'other.yaml')
  }
  // A command line starts with an option (the program's own words come before it, and are not the parser's).
  if (!argv[0]!.startsWith('-')) argv.unshift(FLAG, '0')
  return { flags, argv, config }
}

/** The config as YAML text (keys and values plain), as an operator writes it. */
const yamlOf = (config: NonNullable<Case['config']>): string => config.map(([k, v]) => `${k}: ${v}`).join('\n') + '\n'

function ours(c: Case): { error: boolean; value: string | null } {
  const config = c.config ? configArgs('serve.yaml', yamlOf(c.config)) : undefined
  if (config && 'problem' in config) throw new Error(config.problem)
  const r = resolveFlag(['radiance', ...c.argv], FLAG, RADIANCE_PARSER, c.flags, config)
  return { error: r.problems.length + r.refused.length > 0, value: r.value ?? null }
}

/**
 * Python's argparse for each case, behind FlexibleArgumentParser's pre-pass as vLLM writes it:
 * the config file's `--key str(value)` first (the file named once, by `--config FILE` or, for
 * radiance, `--config=FILE`), then `_` → `-` in every `--` word's name before its first ".".
 */
const PYTHON = String.raw`
import argparse, json, sys, io, contextlib
${PY_DASHED}
out = []
for case in json.load(sys.stdin):
    args = list(case['argv'])
    try:
        at = [i for i, a in enumerate(args) if a == '--config' or a.startswith('--config=')]
        if len(at) > 1:
            raise ValueError('twice')
        if at:
            i = at[0]
            inline = args[i] != '--config'
            if not inline and (i + 1 >= len(args) or args[i + 1].startswith('-')):
                raise ValueError('no file')
            pulled = []
            # yaml.safe_load gives a dict: a key given twice keeps its first place and its last value.
            for key, value in dict(case['config'] or []).items():
                pulled += ['--' + key, str(value)]
            args = pulled + args[:i] + args[i + (1 if inline else 2):]
        args = [dashed(a) for a in args]
        p = argparse.ArgumentParser(add_help=False, allow_abbrev=True, exit_on_error=False)
        for j, f in enumerate(case['flags']):
            if f['takesValue']:
                p.add_argument(f['name'], dest='d%d' % j)
            else:
                p.add_argument(f['name'], dest='d%d' % j, action='store_true')
        with contextlib.redirect_stderr(io.StringIO()):
            ns = p.parse_args(args)
        out.append({'error': False, 'value': getattr(ns, 'd0')})
    except (argparse.ArgumentError, SystemExit, ValueError):
        out.append({'error': True, 'value': None})
print(json.dumps(out))
`

describe("property: armproof reads argv as Python's argparse does", () => {
  const CASES = 600
  test(`${CASES} random command lines and config files (seeded), each checked against python3`, () => {
    const cases = Array.from({ length: CASES }, (_, i) => randomCase(prng(i + 1)))
    const python = JSON.parse(execFileSync(pythonBin(), ['-c', PYTHON], { input: JSON.stringify(cases), encoding: 'utf8' })) as Array<{
      error: boolean
      value: string | null
    }>
    const tally = { errors: 0, values: 0, prefixes: 0, configs: 0, lastWon: 0 }
    for (const [i, c] of cases.entries()) {
      const mine = ours(c)
      const want = python[i]!
      expect(mine, `seed ${i + 1}: ${JSON.stringify(c)}`).toEqual(want.error ? { error: true, value: mine.value } : want)
      if (want.error) tally.errors++
      else if (want.value !== null) tally.values++
      const r = resolveFlag(
        ['radiance', ...c.argv],
        FLAG,
        RADIANCE_PARSER,
        c.flags,
        c.config ? (configArgs('serve.yaml', yamlOf(c.config)) as ConfigArgs) : undefined,
      )
      if (!want.error && r.occurrences.some((o) => o.spelling === 'prefix')) tally.prefixes++
      if (!want.error && r.occurrences.some((o) => o.source === 'config')) tally.configs++
      if (!want.error && r.occurrences.length > 1) tally.lastWon++
    }
    // The sample reaches every rule, and both answers: the property is not vacuous.
    expect(tally.errors).toBeGreaterThan(CASES / 10)
    expect(tally.values).toBeGreaterThan(CASES / 3)
    expect(tally.prefixes).toBeGreaterThan(10)
    expect(tally.configs).toBeGreaterThan(10)
    expect(tally.lastWon).toBeGreaterThan(10)
  })
})

describe('property: the reference engine parses as armproof reads (engine/flags.ts against its own --help)', () => {
  const CASES = 300
  const known = listFlags(helpText(new Set()))
  const INTS = ['--prefill-interleave', '--busy-prefill-chunk', '--stager-depth', '--load-closed-ms', '--port']
  test(`${CASES} random command lines over radiance's flags (seeded)`, () => {
    let values = 0
    for (let seed = 1; seed <= CASES; seed++) {
      const random = prng(10_000 + seed)
      const argv: string[] = []
      const n = 1 + Math.floor(random() * 5)
      for (let i = 0; i < n; i++) {
        const name = random() < 0.5 ? FLAG : pick(random, INTS)
        const word = spell(random, name)
        const v = String(Math.floor(random() * 9))
        if (random() < 0.3) argv.push(`${word}=${v}`)
        else argv.push(word, v)
      }
      // A key may come twice (PyYAML keeps its first place and its last value).
      const yaml =
        random() < 0.3
          ? Array.from(
              { length: 1 + Math.floor(random() * 2) },
              () => `${spell(random, FLAG).slice(2)}: ${Math.floor(random() * 9)}\n`,
            ).join('')
          : undefined
      if (yaml) argv.splice(Math.floor(random() * (argv.length + 1)), 0, '--config', 'serve.yaml')
      const engine = parseFlags(argv, () => yaml!)
      const config = yaml ? (configArgs('serve.yaml', yaml) as ConfigArgs) : undefined
      const r = resolveFlag(['radiance', ...argv], FLAG, RADIANCE_PARSER, known, config)
      const context = `seed ${10_000 + seed}: ${JSON.stringify({ argv, yaml })} → engine ${JSON.stringify(engine.kind === 'config' ? engine.config.prefillInterleave : engine)}`
      if (engine.kind === 'config') {
        values++
        expect(r.problems.concat(r.refused), context).toEqual([])
        expect(r.value ?? '0', context).toBe(String(engine.config.prefillInterleave))
      } else {
        expect(engine.kind, context).toBe('error')
        expect(r.problems.length + r.refused.length, context).toBeGreaterThan(0)
      }
    }
    expect(values).toBeGreaterThan(CASES / 3)
  })
})
