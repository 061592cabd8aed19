// Where engines print what they resolved (helpers/steps/resolved/): the Python-repr reader against
// python3's own repr() of random values (seeded), the log sources of each profile read from the
// reference engine's own boot lines, and the one agreement rule: every source agrees, the strongest
// is said, a value the engine resolved otherwise than asked is red unless the catalog allows it.
import { describe, expect, test } from 'vitest'
import { builtinProfile, withCatalog } from '../../../helpers/profiles/load.ts'
import { isLogSource } from '../../../helpers/profiles/convert.ts'
import type { KnobSpec } from '../../../helpers/profiles/types.ts'
import { pyAt, pyText, readPyCall, readPyDict, readPyKeywords, type Py } from '../../../helpers/steps/resolved/pyrepr.ts'
import { bootBeforePid, messageOf, readAssignments, readLogSources } from '../../../helpers/steps/resolved/log-sources.ts'
import { agree } from '../../../helpers/steps/resolved/agree.ts'
import type { ProfileFaultName } from '../../../engine/profiles/faults.ts'
import { PROFILES } from '../../../engine/profiles/index.ts'
import type { EmulatedProfile } from '../../../engine/profiles/types.ts'
import { pick, prng } from '../../support/prng.ts'
import { python } from '../../support/python.ts'

/** A Python value as JSON can carry it (a tuple becomes a list in both). */
type J = null | boolean | number | string | J[] | { [k: string]: J }

function randomValue(random: () => number, depth = 0): J {
  const r = random()
  if (depth < 3 && r < 0.15) return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(random, depth + 1))
  if (depth < 3 && r < 0.25)
    return Object.fromEntries(
      Array.from({ length: Math.floor(random() * 4) }, () => [randomString(random), randomValue(random, depth + 1)]),
    )
  if (r < 0.35) return null
  if (r < 0.45) return random() < 0.5
  if (r < 0.6) return Math.floor((random() - 0.5) * 1e6)
  if (r < 0.7) return pick(random, [0.9, 1e-5, 2.5e16, -0.0001, 3.0, 1234.5678])
  return randomString(random)
}

function randomString(random: () => number): string {
  const parts = [
    'a',
    'Qwen/Qwen3-0.6B',
    "it's",
    '"quoted"',
    'back\\slash',
    'new\nline',
    'tab\t',
    'café',
    '日本',
    '\u0001',
    ', ',
    ': ',
    '(',
    ')',
    '{',
    '}',
    '=',
    "'",
    '"',
  ]
  return Array.from({ length: Math.floor(random() * 4) }, () => pick(random, parts)).join('')
}

/** A parsed value as JSON, as python3 gives it back (`json.dumps` of the same value). */
function asJson(v: Py): J {
  switch (v.t) {
    case 'str':
      return v.v
    case 'num':
      return Number(v.v)
    case 'bool':
      return v.v
    case 'none':
      return null
    case 'list':
      return v.v.map(asJson)
    case 'dict':
      return Object.fromEntries(v.v.map(([k, x]) => [pyText(k), asJson(x)]))
    default:
      return `<${v.t}>`
  }
}

describe("property: the Python-repr reader reads what python3's repr() prints", () => {
  const CASES = 400
  test(`${CASES} random dicts (seeded): strings with quotes, escapes and brackets, numbers, None, nesting`, async () => {
    const cases = Array.from({ length: CASES }, (_, i) => {
      const random = prng(31_000 + i)
      return Object.fromEntries(Array.from({ length: 1 + Math.floor(random() * 5) }, (_, j) => [`key_${j}`, randomValue(random)]))
    })
    const printed = (await python('import json, sys\nprint(json.dumps([repr(c) for c in json.load(sys.stdin)]))', cases)) as string[]
    let quoted = 0
    for (const [i, text] of printed.entries()) {
      const parsed = readPyDict(text)
      expect(parsed, `seed ${31_000 + i}: ${text}`).toBeDefined()
      expect(asJson(parsed!), `seed ${31_000 + i}: ${text}`).toEqual(cases[i])
      if (/\\'|"/.test(text)) quoted++
    }
    expect(quoted).toBeGreaterThan(CASES / 4)
  })

  test('a dataclass repr, key=value pairs, and what is no literal (torch.bfloat16, a nested call) read as written', () => {
    const call = readPyCall(
      "ServerArgs(model_path='qwen/x', chunked_prefill_size=8192, mem_fraction_static=0.88, speculative_algorithm=None, lora=[], x={'a': (1, 2)})",
      'ServerArgs',
    )!
    expect(
      ['model_path', 'chunked_prefill_size', 'mem_fraction_static', 'speculative_algorithm'].map((k) => pyText(pyAt(call, k)!)),
    ).toEqual(['qwen/x', '8192', '0.88', 'None'])
    expect(readPyCall('ServerArgs(a=1)', 'Other')).toBeUndefined()
    const kv = readPyKeywords(
      "model='Qwen/Qwen3-0.6B', dtype=torch.bfloat16, observability_config=ObservabilityConfig(show_hidden_metrics_for_version=None, kv_cache_metrics=False), served_model_name=Qwen/Qwen3-0.6B, enable_prefix_caching=True, compilation_config={'mode': 3, 'custom_ops': ['none']}",
    )!
    expect(
      ['dtype', 'observability_config.kv_cache_metrics', 'served_model_name', 'enable_prefix_caching', 'compilation_config.mode'].map((k) =>
        pyText(pyAt(kv, k)!),
      ),
    ).toEqual(['torch.bfloat16', 'False', 'Qwen/Qwen3-0.6B', 'True', '3'])
    // Not a whole dict, or text after it that is none of it: not read as one.
    expect(readPyDict("{'a': 1")).toBeUndefined()
    expect(readPyKeywords('Chunked prefill is enabled with max_num_batched_tokens=8192.')).toBeUndefined()
    expect([...readAssignments('using n_parallel = 4 and kv_unified = true')]).toEqual([
      ['n_parallel', '4'],
      ['kv_unified', 'true'],
    ])
  })
})

/** The engine's boot lines for `argv`, as its process prints them. */
function bootLog(profile: EmulatedProfile, argv: string[], faults: ProfileFaultName[] = []): string {
  const def = PROFILES[profile]
  const started = def.start([...def.leading(argv), ...argv, '--port', '8000'], {}, new Set(faults), 4242)
  if (started.kind !== 'engine') throw new Error(`${profile} ${argv.join(' ')} does not start: ${started.stderr}`)
  const e = started.engine
  return [
    ...e.bootLines(new Date(2026, 5, 19, 15, 35)),
    ...e.listeningLines(new Date(), 8000),
    ...(e.loadedLines?.(new Date(), 8000) ?? []),
  ].join('\n')
}

function judged(profile: 'vllm' | 'sglang' | 'llama.cpp', knob: string, value: string | null, log: string, spec?: KnobSpec) {
  const p = builtinProfile(profile)
  const s = spec ?? p.knobs.get(knob)!.spec
  const sources = p.engine.resolved
    .filter((x) => isLogSource(x) && s.proof.sources?.[x.id])
    .map((source) => ({ source, key: s.proof.sources![source.id]! }))
  const expected = value ?? s.default!
  return agree(s, expected, expected === s.default, readLogSources(log, p.engine, sources))
}

describe("each profile's log sources, read from the reference engine's boot lines", () => {
  test("the log prefix grammars: vLLM's process tag, level, date and file; SGLang's bracketed time; llama.cpp's tags", () => {
    const vllm = new RegExp(`^(?:${builtinProfile('vllm').engine.log.prefix})`)
    expect(messageOf("(APIServer pid=1) INFO 06-19 15:35:00 [api_utils.py:273] non-default args: {'port': 3456}", vllm)).toBe(
      "non-default args: {'port': 3456}",
    )
    expect(
      messageOf('2026-06-19T15:35:00.123456789Z (EngineCore_DP0 pid=28059) INFO 06-19 15:35:12 [core.py:129] Initializing', vllm),
    ).toBe('Initializing')
    expect(messageOf('INFO 05-01 12:00:00 api_server.py:123] old format', vllm)).toBe('old format')
    expect(messageOf('+ exec vllm serve --max-num-seqs 8', vllm)).toBeUndefined()
    const sglang = new RegExp(`^(?:${builtinProfile('sglang').engine.log.prefix})`)
    expect(messageOf('[2026-03-20 03:17:14] INFO server_args.py:2222: Attention backend', sglang)).toBe('Attention backend')
    expect(messageOf('[2026-03-20 03:17:15.120 TP0] max_total_num_tokens=1', sglang)).toBe('max_total_num_tokens=1')
    expect(messageOf('Nov 30 02:11:03 gpu-7 llama-server[812]: srv    load_model: initializing slots, n_slots = 2', null)).toBe(
      'srv    load_model: initializing slots, n_slots = 2',
    )
    const llama = new RegExp(`^(?:${builtinProfile('llama.cpp').engine.log.prefix})`)
    expect(messageOf('Nov 30 02:11:03 gpu-7 llama-server[812]: 0.00.020.523 I srv    load_model: initializing, n_slots = 2', llama)).toBe(
      'srv    load_model: initializing, n_slots = 2',
    )
  })

  test('vLLM: MAX_NUM_SEQS from non-default args (the config line has no max_num_seqs); left out at the default, as the parser default is None', () => {
    const armed = judged('vllm', 'MAX_NUM_SEQS', '8', bootLog('vllm', ['--max-num-seqs', '8']))
    expect([armed.verdict, armed.strongest?.reading.source.id, armed.observed]).toEqual([
      'passed',
      'non-default-args',
      'non-default args (what the parser resolved): max_num_seqs=8',
    ])
    // Given explicitly at 256, the parser's default being None, it still appears.
    expect(judged('vllm', 'MAX_NUM_SEQS', '256', bootLog('vllm', ['--max-num-seqs', '256'])).observed).toBe(
      'non-default args (what the parser resolved): max_num_seqs=256',
    )
    const rollback = judged('vllm', 'MAX_NUM_SEQS', null, bootLog('vllm', []))
    expect([rollback.verdict, rollback.observed]).toEqual([
      'passed',
      "non-default args (what the parser resolved): max_num_seqs left out (the parser's default)",
    ])
    expect(judged('vllm', 'MAX_NUM_SEQS', '8', bootLog('vllm', []))).toMatchObject({
      verdict: 'failed',
      observed: "non-default args (what the parser resolved): max_num_seqs left out (the parser's default)",
    })
  })

  test('vLLM: ENABLE_PREFIX_CACHING passes on the engine config line, the args line agreeing; a later --no- flag, and a line that lies, are red', () => {
    const on = judged('vllm', 'ENABLE_PREFIX_CACHING', null, bootLog('vllm', []))
    expect([on.verdict, on.strongest?.reading.source.id]).toEqual(['passed', 'engine-config'])
    expect(on.observed).toBe(
      "the engine config line (what the engine runs): enable_prefix_caching=True; agreeing: non-default args (what the parser resolved): enable_prefix_caching left out (the parser's default)",
    )
    const explicit = judged('vllm', 'ENABLE_PREFIX_CACHING', 'true', bootLog('vllm', ['--enable-prefix-caching']))
    expect(explicit.observed).toBe(
      'the engine config line (what the engine runs): enable_prefix_caching=True; agreeing: non-default args (what the parser resolved): enable_prefix_caching=True',
    )
    const later = judged(
      'vllm',
      'ENABLE_PREFIX_CACHING',
      'true',
      bootLog('vllm', ['--enable-prefix-caching', '--no-enable-prefix-caching']),
    )
    expect([later.verdict, later.observed]).toEqual([
      'failed',
      'non-default args (what the parser resolved): enable_prefix_caching=False; the engine config line (what the engine runs): enable_prefix_caching=False',
    ])
    const lie = judged('vllm', 'ENABLE_PREFIX_CACHING', 'true', bootLog('vllm', ['--enable-prefix-caching'], ['vllm_args_line_differs']))
    expect(lie).toMatchObject({
      verdict: 'failed',
      observed:
        'non-default args (what the parser resolved): enable_prefix_caching=True; the engine config line (what the engine runs): enable_prefix_caching=False',
    })
    expect(lie.next).toContain('the engine resolved --enable-prefix-caching to false, not the true its parser took')
  })

  test('vLLM: an fp8 KV cache falling back to auto is red, both said; a catalog that allows it makes it green, saying so', () => {
    const log = bootLog('vllm', ['--kv-cache-dtype', 'fp8'], ['vllm_kv_fp8_fallback'])
    const fallback = judged('vllm', 'KV_CACHE_DTYPE', 'fp8', log)
    expect([fallback.verdict, fallback.observed]).toEqual([
      'failed',
      'non-default args (what the parser resolved): kv_cache_dtype=fp8; the engine config line (what the engine runs): kv_cache_dtype=auto',
    ])
    const allowing = withCatalog(
      builtinProfile('vllm'),
      'knobs:\n  KV_CACHE_DTYPE:\n    env: KV_CACHE_DTYPE\n    flag: --kv-cache-dtype\n    type: enum\n    default: auto\n    allow: { fp8: [auto] }\n    sources: { non-default-args: kv_cache_dtype, engine-config: kv_cache_dtype }\n',
      'c.yaml',
    )
    if ('problems' in allowing) throw new Error(JSON.stringify(allowing.problems))
    const allowed = judged('vllm', 'KV_CACHE_DTYPE', 'fp8', log, allowing.knobs.get('KV_CACHE_DTYPE')!.spec)
    expect([allowed.verdict, allowed.observed]).toEqual([
      'passed',
      'the engine config line (what the engine runs): kv_cache_dtype=auto (auto where fp8 was asked, as the catalog allows); agreeing: non-default args (what the parser resolved): kv_cache_dtype=fp8',
    ])
  })

  test("SGLang: the ServerArgs line and the scheduler's line agree; the ServerArgs line lying is red", () => {
    const ok = judged('sglang', 'CHUNKED_PREFILL_SIZE', '4096', bootLog('sglang', ['--chunked-prefill-size', '4096']))
    expect([ok.verdict, ok.observed]).toEqual([
      'passed',
      "the scheduler's max_total_num_tokens=… line (what the engine runs): chunked_prefill_size=4096; agreeing: the server_args=ServerArgs(…) line (what the parser resolved): chunked_prefill_size=4096",
    ])
    const auto = judged('sglang', 'MAX_RUNNING_REQUESTS', null, bootLog('sglang', []))
    expect([auto.verdict, auto.observed]).toEqual([
      'passed',
      "the scheduler's max_total_num_tokens=… line (what the engine runs): max_running_requests=128 (auto resolved to 128, as the catalog allows); agreeing: the server_args=ServerArgs(…) line (what the parser resolved): max_running_requests=None (left to the engine: auto)",
    ])
    expect(
      judged('sglang', 'MAX_RUNNING_REQUESTS', '8', bootLog('sglang', ['--max-running-requests', '8'], ['sglang_args_line_differs'])),
    ).toMatchObject({
      verdict: 'failed',
      observed:
        "the server_args=ServerArgs(…) line (what the parser resolved): max_running_requests=9; the scheduler's max_total_num_tokens=… line (what the engine runs): max_running_requests=8",
    })
  })

  test('llama.cpp: -np 2 in the n_slots line (and n_seq_max at -lv 4); -1 is auto, resolved to 4 and said at -lv 4; an n_slots line that lies is red', () => {
    const two = judged('llama.cpp', 'PARALLEL', '2', bootLog('llama.cpp', ['-np', '2']))
    expect([two.verdict, two.observed]).toEqual(['passed', 'the load_model: initializing, n_slots line (what the engine runs): n_slots=2'])
    const traced = judged('llama.cpp', 'PARALLEL', '2', bootLog('llama.cpp', ['-np', '2', '-lv', '4']))
    expect(traced.observed).toBe(
      'the load_model: initializing, n_slots line (what the engine runs): n_slots=2; agreeing: the llama_context: n_seq_max line (what the engine runs): n_seq_max=2',
    )
    const auto = judged('llama.cpp', 'PARALLEL', 'auto', bootLog('llama.cpp', ['-np', '-1', '-lv', '4']))
    expect(auto.verdict).toBe('passed')
    expect(auto.observed).toContain('the `n_parallel is set to auto` line (what the engine runs): n_parallel=4 [auto]')
    // Asked 4, but the engine chose 4 itself (its trace line says auto): the explicit value did not reach it.
    expect(judged('llama.cpp', 'PARALLEL', '4', bootLog('llama.cpp', ['-lv', '4']))).toMatchObject({ verdict: 'failed' })
    expect(judged('llama.cpp', 'PARALLEL', '2', bootLog('llama.cpp', ['-np', '2'], ['llamacpp_log_differs']))).toMatchObject({
      verdict: 'failed',
      observed: 'the load_model: initializing, n_slots line (what the engine runs): n_slots=3',
    })
  })

  test('only the latest boot is read: a line of an earlier boot that the latest does not print says nothing', () => {
    const log = `${bootLog('llama.cpp', ['-np', '-1', '-lv', '4'])}\n${bootLog('llama.cpp', ['-np', '2'])}`
    const r = judged('llama.cpp', 'PARALLEL', '2', log)
    expect([r.verdict, r.rows.find((x) => x.reading.source.id === 'auto-line')?.standing]).toEqual(['passed', 'silent'])
  })

  test("a log stamped with times (podman logs -t): a latest boot stamped before the pid argv read started is an earlier process's, said; one at or after it is this pid's", () => {
    const llama = builtinProfile('llama.cpp').engine
    const boot = (at: string, slots: number) =>
      [
        `${at} 0.00.000.398 I srv  llama_server: initializing ...`,
        `${at} 0.00.020.523 I srv    load_model: initializing, n_slots = ${slots}, n_ctx_slot = 2048, kv_unified = 'false'`,
      ].join('\n')
    const log = `${boot('2026-12-02T05:00:00.000000000+00:00', 3)}\n${boot('2026-12-02T06:00:00.000000000+00:00', 2)}`
    const at = (iso: string) => Date.parse(iso) / 1000
    // The pid started with the latest boot (within the /proc start's second): this pid's.
    expect(bootBeforePid(log, llama, '812', at('2026-12-02T06:00:01Z'))).toBeUndefined()
    // The pid started an hour later, and the log holds no boot of it: an earlier process's.
    expect(bootBeforePid(log, llama, '812', at('2026-12-02T07:00:00Z'))).toBe(
      "the log's latest boot began at 2026-12-02T06:00:00.000Z (line 3), before pid 812 started at 2026-12-02T07:00:00.000Z: it is an earlier process's boot, and this process's is not in the log",
    )
    // No times in the log, no start time, or an engine without a boot marker: nothing tells.
    expect(bootBeforePid(log.replace(/^\S+ /gm, ''), llama, '812', at('2026-12-02T07:00:00Z'))).toBeUndefined()
    expect(bootBeforePid(log, llama, '812', null)).toBeUndefined()
    expect(bootBeforePid(log, builtinProfile('radiance').engine, '812', at('2026-12-02T07:00:00Z'))).toBeUndefined()
  })
})
