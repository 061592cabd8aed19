// `--engine`, `--catalog` and `--knob` by its flag, as the configuration reads them: the target
// carries the profile it is judged with (a catalog's knobs in it), every problem of a file is
// refused at once (exit 2, nothing contacted), and the env twins work as every option's do.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { loadConfig } from '../../helpers/config/load.ts'
import { targetProfile } from '../../helpers/profiles/target.ts'
import { tempDir } from '../support/temp-dir.ts'

const dir = tempDir('armproof-engine-option-')
const file = (name: string, text: string): string => {
  writeFileSync(join(dir, name), text)
  return name
}
const BASE = ['--svc', 'llm-7', '--base-url', 'http://gpu-7:8000']
const load = (argv: string[], env: Record<string, string> = {}) => loadConfig({ argv: [...BASE, ...argv], env, cwd: dir })
const messages = (r: ReturnType<typeof load>): string[] => (r.ok ? [] : r.problems.map((p) => p.message))

describe('--knob', () => {
  test.each(['PREFILL_INTERLEAVE', 'prefill-interleave', '--prefill-interleave'])(
    '%s names PREFILL_INTERLEAVE (its name, or its flag with or without dashes)',
    (asked) => {
      const r = load(['--knob', asked, '--value', '1'])
      expect(r.ok && [r.target.knob, r.target.fixtures]).toEqual(['PREFILL_INTERLEAVE', 'fixtures/llm-7/PREFILL_INTERLEAVE'])
    },
  )

  test('a flag no knob has is an unknown knob, with the known ones', () => {
    expect(messages(load(['--knob', '--no-such-flag']))).toEqual([
      '--knob: unknown knob "--no-such-flag"; known knobs: PREFILL_INTERLEAVE, BUSY_PREFILL_CHUNK, CHECKPOINT_POLICY, CHECKPOINT_SLOTS, STAGER_DEPTH',
    ])
  })
})

describe('--engine', () => {
  test('radiance by default: the target carries its profile, and its process and help command are the defaults', () => {
    const r = load(['--knob', 'PREFILL_INTERLEAVE'])
    if (!r.ok) throw new Error(messages(r).join('\n'))
    expect([r.target.engine.name, r.target.process, r.target.helpCmd]).toEqual([
      'radiance',
      'radiance',
      'podman exec {svc} radiance --help',
    ])
    expect(targetProfile(r.target).spec.flag).toBe('--prefill-interleave')
  })

  test.each([
    ['vllm', 'max-num-seqs', 'MAX_NUM_SEQS', 'vllm', 'podman exec {svc} vllm serve --help=all'],
    ['sglang', '--chunked-prefill-size', 'CHUNKED_PREFILL_SIZE', 'sglang', 'podman exec {svc} sglang serve --help'],
    ['llama.cpp', '-np', 'PARALLEL', 'llama-server', 'podman exec {svc} llama-server --help'],
    ['llama.cpp', 'parallel', 'PARALLEL', 'llama-server', 'podman exec {svc} llama-server --help'],
  ])("--engine %s --knob %s: %s, with the profile's process and help command", (engine, asked, name, processName, helpCmd) => {
    const r = load(['--knob', asked, '--engine', engine])
    if (!r.ok) throw new Error(messages(r).join('\n'))
    expect([r.target.knob, r.target.engine.name, r.target.process, r.target.helpCmd]).toEqual([name, engine, processName, helpCmd])
    // --process and --help-cmd still win.
    const mine = load(['--knob', asked, '--engine', engine, '--process', 'python3', '--help-cmd', 'docker exec {svc} x --help'])
    expect(mine.ok && [mine.target.process, mine.target.helpCmd]).toEqual(['python3', 'docker exec {svc} x --help'])
  })

  test("a knob of another engine is unknown to radiance's catalog, and the profile says whose knobs it lists", () => {
    expect(messages(load(['--knob', 'MAX_NUM_SEQS']))[0]).toMatch(/^--knob: unknown knob "MAX_NUM_SEQS"; known knobs: PREFILL_INTERLEAVE/)
    expect(messages(load(['--knob', 'PREFILL_INTERLEAVE', '--engine', 'vllm']))).toEqual([
      '--knob: unknown knob "PREFILL_INTERLEAVE"; known knobs (the vllm profile): MAX_NUM_SEQS, ENABLE_PREFIX_CACHING, KV_CACHE_DTYPE',
    ])
  })

  test("values fit the knob of the profile: a switch is true or false, auto or a number, the flag's own spelling of auto", () => {
    expect(messages(load(['--knob', 'ENABLE_PREFIX_CACHING', '--engine', 'vllm', '--value', 'yes']))).toEqual([
      '--value: "yes" does not fit ENABLE_PREFIX_CACHING: must be true or false',
    ])
    const off = load(['--knob', 'ENABLE_PREFIX_CACHING', '--engine', 'vllm', '--value', 'false'])
    expect(off.ok && off.target.value).toBe('false')
    const auto = load(['--knob', 'PARALLEL', '--engine', 'llama.cpp', '--value', '-1'])
    expect(auto.ok && auto.target.value).toBe('auto')
    expect(messages(load(['--knob', 'PARALLEL', '--engine', 'llama.cpp', '--value', '0']))).toEqual([
      '--value: "0" does not fit PARALLEL: must be ≥ 1',
    ])
    const chunk = load(['--knob', 'CHUNKED_PREFILL_SIZE', '--engine', 'sglang', '--value', '-1'])
    expect(chunk.ok && chunk.target.value).toBe('-1')
  })

  test('a name that is neither a built-in nor a file is refused, naming the built-ins', () => {
    expect(messages(load(['--knob', 'PREFILL_INTERLEAVE', '--engine', 'tgi']))).toEqual([
      '--engine: "tgi" is neither a built-in profile (radiance, vllm, sglang, llama.cpp) nor a profile file (no such file)',
    ])
    expect(messages(load(['--knob', 'PREFILL_INTERLEAVE'], { VERIFY_ENGINE: 'tgi' }))[0]).toMatch(/^VERIFY_ENGINE: "tgi" is neither/)
  })
})

describe('--catalog', () => {
  const catalog = file(
    'catalog.yaml',
    [
      'knobs:',
      '  STAGER_DEPTH:',
      '    env: STAGER_DEPTH',
      '    flag: --stager-depth',
      '    type: int',
      '    default: 3',
      '    stats: stager.depth',
      '  COMPLETION_LATENCY:',
      '    env: COMPLETION_LATENCY_MS',
      '    flag: --completion-latency-ms',
      '    type: int',
      '    default: 0',
      '',
    ].join('\n'),
  )

  test("adds a knob, or replaces one of the same name; the target carries the catalog's entries", () => {
    const added = load(['--knob', 'completion-latency-ms', '--value', '5', '--catalog', catalog])
    if (!added.ok) throw new Error(messages(added).join('\n'))
    expect(added.target.knob).toBe('COMPLETION_LATENCY')
    expect(targetProfile(added.target).spec).toMatchObject({
      env: 'COMPLETION_LATENCY_MS',
      default: '0',
      proof: { sources: { ledger: '--completion-latency-ms' } },
    })
    const replaced = load(['--knob', 'STAGER_DEPTH'], { VERIFY_CATALOG: catalog })
    if (!replaced.ok) throw new Error(messages(replaced).join('\n'))
    expect(targetProfile(replaced.target).spec.default).toBe('3')
    expect(Object.keys(replaced.target.engine.knobs)).toEqual([
      'PREFILL_INTERLEAVE',
      'BUSY_PREFILL_CHUNK',
      'CHECKPOINT_POLICY',
      'CHECKPOINT_SLOTS',
      'STAGER_DEPTH',
      'COMPLETION_LATENCY',
    ])
  })

  // The knob is not looked up in a catalog that does not load: "unknown knob" would only be noise beside its problems.
  test("every problem of the file at once, each at its file:line and key, beside the command line's own", () => {
    const bad = file(
      'bad.yaml',
      'knobs:\n  X_KNOB:\n    env: X\n    flag: --x\n    type: float\n  Y_KNOB:\n    env: Y\n    flag: --y\n    type: int\n    default: many\n',
    )
    expect(messages(load(['--knob', 'X_KNOB', '--catalog', bad, '--mode', 'sideways']))).toEqual([
      '--catalog: bad.yaml:5: knobs.X_KNOB.type must be one of "int", "bool", "enum", "int-or-auto", found "float"',
      '--catalog: bad.yaml:10: knobs.Y_KNOB.default "many" must be a whole number ≥ 0',
      '--mode: invalid mode "sideways"; must be one of: live, record, replay',
    ])
  })
})
