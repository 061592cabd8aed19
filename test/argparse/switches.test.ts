// A switch as an engine's parser reads it (helpers/argparse/, a profile's `negation:`): vLLM's bool
// fields are argparse BooleanOptionalActions, `--x` true and `--no-x` false, the last one winning,
// a unique prefix of either naming it. Case by case, then a property over random command lines
// (seeded) checked against python3's own argparse.BooleanOptionalAction, and against the reference
// engine's vLLM parser. Also: a flag's other spellings (llama.cpp's -np for --parallel).
import { execFileSync } from 'node:child_process'
import { describe, expect, test } from 'vitest'
import { resolveFlag } from '../../helpers/argparse/resolve.ts'
import { flagNames, type KnownFlag, type ParserRules } from '../../helpers/argparse/rules.ts'
import { builtinProfile } from '../../helpers/profiles/load.ts'
import { listFlags } from '../../helpers/steps/help/parse.ts'
import { parseVllmServe } from '../../engine/profiles/vllm-args.ts'
import { vllmServeHelp } from '../../engine/profiles/vllm-help.ts'
import { pick, prng } from '../support/prng.ts'
import { PY_DASHED } from '../support/python-dashed.ts'
import { pythonBin } from '../support/python.ts'

const vllm = builtinProfile('vllm')
const RULES: ParserRules = vllm.engine.parser
const EPC = vllm.knobs.get('ENABLE_PREFIX_CACHING')!.spec
const NAMES = flagNames(EPC, RULES)
// Two BooleanOptionalActions (each with its --no-), and two flags that take a value.
const KNOWN: KnownFlag[] = [
  ...['--enable-prefix-caching', '--enable-chunked-prefill']
    .flatMap((f) => [f, `--no-${f.slice(2)}`])
    .map((name) => ({ name, takesValue: false })),
  ...['--max-num-seqs', '--port'].map((name) => ({ name, takesValue: true })),
]
const read = (argv: readonly string[]) => resolveFlag(['vllm', 'serve', 'Qwen/Qwen3-0.6B', ...argv], NAMES, RULES, KNOWN)

describe('a switch and its negation', () => {
  test('the flag is true, its negation false, the last one wins, each is kept', () => {
    expect(NAMES).toEqual({ names: ['--enable-prefix-caching'], switch: { negated: '--no-enable-prefix-caching' } })
    expect(read(['--enable-prefix-caching']).value).toBe('true')
    expect(read(['--no-enable-prefix-caching']).value).toBe('false')
    const r = read(['--enable-prefix-caching', '--max-num-seqs', '8', '--no-enable-prefix-caching'])
    expect(r.value).toBe('false')
    expect(r.occurrences.map((o) => [o.written, o.value, o.won])).toEqual([
      ['--enable-prefix-caching', 'true', false],
      ['--no-enable-prefix-caching', 'false', true],
    ])
    expect(read([]).value).toBeUndefined()
  })

  test('a unique prefix names either; `_` is `-`; a value given to a switch is refused', () => {
    expect(read(['--no-enable-pre']).occurrences).toMatchObject([{ value: 'false', spelling: 'prefix' }])
    expect(read(['--enable_prefix_caching']).occurrences).toMatchObject([{ value: 'true', spelling: 'underscore' }])
    expect(read(['--enable']).problems).toEqual([
      'ambiguous option: --enable could match --enable-prefix-caching, --enable-chunked-prefill',
    ])
    expect(read(['--enable-prefix-caching=1']).problems).toEqual(["argument --enable-prefix-caching: ignored explicit argument '1'"])
  })

  test("without the build's flag list only the exact spellings decide; a switch takes no value there either", () => {
    const r = resolveFlag(['vllm', 'serve', 'm', '--no-enable-prefix-caching', '--max-num-seqs', '8'], NAMES, RULES, null)
    expect([r.value, r.unsure]).toEqual(['false', []])
    expect(resolveFlag(['vllm', 'serve', 'm', '--no-enable-pre'], NAMES, RULES, null).unsure).toEqual(['--no-enable-pre'])
  })

  test("a store_true switch (SGLang's --disable-*) has no negation: present is true, absent is the default", () => {
    const names = flagNames({ flag: '--disable-radix-cache', type: { kind: 'bool' } }, builtinProfile('sglang').engine.parser)
    expect(names).toEqual({ names: ['--disable-radix-cache'], switch: { negated: null } })
    expect(
      resolveFlag(['sglang', '--model-path', 'm', '--disable-radix-cache'], names, builtinProfile('sglang').engine.parser, null).value,
    ).toBe('true')
  })

  test("a flag's other spellings are the flag: -np is llama.cpp's --parallel, the last of either wins", () => {
    const llama = builtinProfile('llama.cpp')
    const spec = llama.knobs.get('PARALLEL')!.spec
    const names = flagNames(spec, llama.engine.parser)
    const known = [
      { name: '-np', takesValue: true },
      { name: '--parallel', takesValue: true },
      { name: '-m', takesValue: true },
    ]
    const r = resolveFlag(['llama-server', '-m', 'x.gguf', '-np', '2', '--parallel', '3'], names, llama.engine.parser, known)
    expect([r.value, r.occurrences.map((o) => o.written)]).toEqual(['3', ['-np 2', '--parallel 3']])
    // No prefixes in llama.cpp: --paral is no flag at all.
    expect(resolveFlag(['llama-server', '--paral', '2'], names, llama.engine.parser, known)).toMatchObject({
      value: undefined,
      refused: ['unrecognized arguments: --paral'],
    })
  })
})

/** One random command line over a few switches and flags, the knob's switch among them. */
function randomArgv(random: () => number, flags: readonly KnownFlag[] = KNOWN): string[] {
  const argv: string[] = []
  const n = 1 + Math.floor(random() * 6)
  for (let i = 0; i < n; i++) {
    const f = pick(random, [...flags, KNOWN[0]!, KNOWN[1]!])
    let word = f.name
    if (random() < 0.3) word = word.slice(0, Math.max(6, Math.floor(word.length * (0.4 + random() * 0.6))))
    if (random() < 0.25) word = `--${word.slice(2).replace(/-/g, (d) => (random() < 0.5 ? '_' : d))}`
    if (!f.takesValue) argv.push(random() < 0.04 ? `${word}=1` : word)
    else argv.push(word, String(Math.floor(random() * 300)))
  }
  return argv
}

const PYTHON = String.raw`
import argparse, json, sys, io, contextlib
${PY_DASHED}
out = []
for argv in json.load(sys.stdin):
    p = argparse.ArgumentParser(add_help=False, allow_abbrev=True, exit_on_error=False)
    p.add_argument('--enable-prefix-caching', action=argparse.BooleanOptionalAction, default=None, dest='epc')
    p.add_argument('--enable-chunked-prefill', action=argparse.BooleanOptionalAction, default=None)
    p.add_argument('--max-num-seqs')
    p.add_argument('--port')
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            ns = p.parse_args([dashed(a) for a in argv])
        out.append({'error': False, 'value': None if ns.epc is None else ('true' if ns.epc else 'false')})
    except (argparse.ArgumentError, SystemExit):
        out.append({'error': True, 'value': None})
print(json.dumps(out))
`

describe("property: a switch read as Python's argparse.BooleanOptionalAction reads it", () => {
  const CASES = 500
  test(`${CASES} random command lines (seeded), each checked against python3`, () => {
    const cases = Array.from({ length: CASES }, (_, i) => randomArgv(prng(70_000 + i)))
    const python = JSON.parse(execFileSync(pythonBin(), ['-c', PYTHON], { input: JSON.stringify(cases), encoding: 'utf8' })) as Array<{
      error: boolean
      value: string | null
    }>
    const tally = { errors: 0, on: 0, off: 0, prefixes: 0 }
    for (const [i, argv] of cases.entries()) {
      const r = read(argv)
      const mine = { error: r.problems.length + r.refused.length > 0, value: r.value ?? null }
      const want = python[i]!
      expect(mine, `seed ${70_000 + i}: ${JSON.stringify(argv)}`).toEqual(want.error ? { error: true, value: mine.value } : want)
      if (want.error) tally.errors++
      else if (want.value === 'true') tally.on++
      else if (want.value === 'false') tally.off++
      if (!want.error && r.occurrences.some((o) => o.spelling === 'prefix')) tally.prefixes++
    }
    expect(tally.errors).toBeGreaterThan(CASES / 20)
    expect(tally.on).toBeGreaterThan(CASES / 10)
    expect(tally.off).toBeGreaterThan(CASES / 10)
    expect(tally.prefixes).toBeGreaterThan(10)
  })

  test("the reference engine's vLLM parser resolves what armproof reads, over its own --help=all", () => {
    const known = listFlags(vllmServeHelp('all'))
    let decided = 0
    for (let seed = 1; seed <= 200; seed++) {
      // The launcher owns --port: not the engine's to read twice.
      const argv = randomArgv(
        prng(80_000 + seed),
        KNOWN.filter((f) => f.name !== '--port'),
      )
      const engine = parseVllmServe(['serve', 'Qwen/Qwen3-0.6B', ...argv])
      const r = resolveFlag(['vllm', 'serve', 'Qwen/Qwen3-0.6B', ...argv], NAMES, RULES, known)
      const context = `seed ${80_000 + seed}: ${JSON.stringify(argv)}`
      if (engine.kind !== 'ok') {
        expect(r.problems.length + r.refused.length, context).toBeGreaterThan(0)
        continue
      }
      decided++
      const v = engine.values.get('enable_prefix_caching')
      expect(r.value ?? null, context).toBe(v === null || v === undefined ? null : v ? 'true' : 'false')
    }
    expect(decided).toBeGreaterThan(50)
  })
})
