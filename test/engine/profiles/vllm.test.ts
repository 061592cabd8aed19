// The reference engine speaking vLLM (engine/profiles/vllm*.ts): its command line against Python's
// own argparse, its startup lines in vLLM's shapes (a non-default args dict Python's
// ast.literal_eval reads back), its endpoints, a /metrics page helpers/prom reads with no error, a
// prefix cache that hits only past one 128-token block (the real CPU build's), its --help, and each
// of its faults. test/real/vllm-emulation.test.ts compares its output with the real build's.
import { afterAll, describe, expect, test } from 'vitest'
import { parsePrometheusText } from '../../../helpers/prom/parse.ts'
import { parseArgs } from '../../../engine/profiles/argparse.ts'
import type { ProfileFaultName } from '../../../engine/profiles/faults.ts'
import { faultsOf } from '../../../engine/profiles/faults.ts'
import { dashed, VLLM_OPTIONS, VLLM_PARSER } from '../../../engine/profiles/vllm-args.ts'
import { pick, prng } from '../../support/prng.ts'
import { complete, exitOf, serveProfile, tokens } from '../../support/profile-in-process.ts'
import { python } from '../../support/python.ts'
import type { InProcessProfile } from '../../support/profile-in-process.ts'

const served: InProcessProfile[] = []
const serve = async (argv: string[], options: Parameters<typeof serveProfile>[2] = {}) => {
  const e = await serveProfile('vllm', ['serve', 'Qwen/Qwen3-0.6B', '--port', '8000', ...argv], options)
  served.push(e)
  return e
}
afterAll(async () => Promise.all(served.map((e) => e.stop())))

const PREFIX = /^\((APIServer|EngineCore|Worker) pid=\d+\) (INFO|WARNING) \d\d-\d\d \d\d:\d\d:\d\d \[[a-z_]+\.py:\d+\] /
const lineOf = (log: readonly string[], what: string): string => log.find((l) => l.includes(what)) ?? ''
const argsDict = (log: readonly string[]): string => lineOf(log, 'non-default args: ').split('non-default args: ')[1]!
const configLine = (log: readonly string[]): string => lineOf(log, 'with config: ').split('with config: ')[1]!
const page = async (e: InProcessProfile) => (await fetch(`${e.baseUrl}/metrics`)).text()
const value = (text: string, name: string): number | undefined => parsePrometheusText(text).samples(name)[0]?.value

describe('vLLM command line', () => {
  test("resolves a seeded sample of command lines exactly as Python argparse does after FlexibleArgumentParser's _ → - rewrite", async () => {
    const random = prng(23)
    const spellings = (o: (typeof VLLM_OPTIONS)[number]): string[] => {
      const long = o.strings[0]!
      const out = [
        long,
        long.replace(/^--/, '--').replaceAll('-', '_').replace(/^__/, '--'),
        long.slice(0, Math.max(4, long.length - 3)),
        ...o.strings.slice(1),
      ]
      if (o.action === 'boolean_optional') out.push(`--no-${long.slice(2)}`, `--no_${long.slice(2).replaceAll('-', '_')}`)
      return out
    }
    const valuesFor = (o: (typeof VLLM_OPTIONS)[number]): string[] =>
      o.type?.kind === 'choice'
        ? [...o.type.choices.slice(0, 3), 'fp9']
        : o.type?.kind === 'int'
          ? ['8', '-1', '0x10', 'x', '1_000']
          : o.type?.kind === 'float'
            ? ['0.5', '1e-3', 'nan', 'half']
            : ['m', 'a b']
    const cases: string[][] = []
    for (let i = 0; i < 300; i++) {
      const argv: string[] = random() < 0.7 ? ['Qwen/Qwen3-0.6B'] : []
      for (let n = Math.floor(random() * 5); n > 0; n--) {
        const o = pick(random, VLLM_OPTIONS)
        const flag = pick(random, spellings(o))
        const r = random()
        if (o.action !== 'store') argv.push(r < 0.1 ? `${flag}=1` : flag)
        else if (r < 0.3) argv.push(`${flag}=${pick(random, valuesFor(o))}`)
        else if (r < 0.95) argv.push(flag, pick(random, valuesFor(o)))
        else argv.push(flag)
      }
      if (random() < 0.05) argv.push(pick(random, ['--nope', 'stray', '--max', '--en', '--']))
      cases.push(argv)
    }
    const spec = VLLM_OPTIONS.map((o) => ({
      strings: o.strings,
      dest: o.dest,
      action: o.action,
      nargs: o.nargs ?? null,
      type: o.type?.kind ?? 'str',
      choices: o.type?.kind === 'choice' ? o.type.choices : null,
      default: o.default,
    }))
    const theirs = await python(
      String.raw`
import argparse, io, json, re, sys, contextlib
data = json.load(sys.stdin)
p = argparse.ArgumentParser(prog='vllm serve', usage='vllm serve [model_tag] [options]')
p.add_argument('model_tag', nargs='?', default=None)
types = {'int': int, 'float': float, 'str': str, 'choice': str}
for o in data['spec']:
    kw = {'dest': o['dest'], 'default': o['default']}
    if o['action'] == 'store_true': kw['action'] = 'store_true'
    elif o['action'] == 'boolean_optional': kw['action'] = argparse.BooleanOptionalAction
    else:
        kw['type'] = types[o['type']]
        if o['choices']: kw['choices'] = o['choices']
        if o['nargs']: kw['nargs'] = o['nargs']
    p.add_argument(*o['strings'], **kw)
pattern = re.compile(r"(?<=--)[^\.]*")
repl = lambda m: m.group(0).replace("_", "-")
def proc(arg):
    if not arg.startswith("--"): return arg
    if "=" in arg:
        key, value = arg.split("=", 1)
        return pattern.sub(repl, key, count=1) + "=" + value
    return pattern.sub(repl, arg, count=1)
out = []
for argv in data['cases']:
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            ns = vars(p.parse_args([proc(a) for a in argv]))
        out.append({'ok': {k: (None if isinstance(v, float) and v != v else v) for k, v in ns.items()}})
    except SystemExit:
        out.append({'error': err.getvalue().strip().split(': error: ', 1)[-1]})
print(json.dumps(out))
`,
      { spec, cases },
    )
    const ours = cases.map((argv) => {
      const r = parseArgs(VLLM_PARSER, argv.map(dashed))
      if (r.kind === 'ok')
        return { ok: Object.fromEntries([...r.values].map(([k, v]) => [k, typeof v === 'number' && Number.isNaN(v) ? null : v])) }
      return r.kind === 'error' ? { error: r.message } : { help: true }
    })
    cases.forEach((argv, i) => expect(ours[i], `seed 23 case ${i}: ${JSON.stringify(argv)}`).toEqual(theirs[i]))
    expect(theirs.filter((t: { error?: string }) => t.error).length).toBeGreaterThan(20)
    expect(theirs.filter((t: { ok?: unknown }) => t.ok).length).toBeGreaterThan(100)
  })

  test('`--enable-prefix-caching` then `--no-enable-prefix-caching`: the last wins, and a repeated flag is warned about', async () => {
    const e = await serve(['--enable_prefix_caching', '--max-num-seqs', '4', '--max_num_seqs', '8', '--no-enable-prefix-caching'])
    expect(e.engine.stats()).toMatchObject({ resolved: { max_num_seqs: 8, enable_prefix_caching: false } })
    expect(lineOf(e.log, 'Found duplicate keys')).toMatch(/WARNING .*\[argparse_utils\.py:\d+\] Found duplicate keys --max-num-seqs$/)
    expect(configLine(e.log)).toContain(', enable_prefix_caching=False, ')
  })

  test("an error exits 2 with argparse's usage and message; --model moves to the positional with its warning", () => {
    expect(exitOf('vllm', ['serve', 'm', '--max-num-seqs', 'x'])).toEqual({
      code: 2,
      stdout: '',
      stderr: "usage: vllm serve [model_tag] [options]\nvllm serve: error: argument --max-num-seqs: invalid int value: 'x'\n",
    })
    expect(exitOf('vllm', ['serve', 'm', '--max', '1'])!.stderr).toContain(
      'vllm serve: error: ambiguous option: --max could match --max-model-len, --max-num-batched-tokens, --max-num-seqs',
    )
    expect(exitOf('vllm', ['serve', 'm', '--kv-cache-dtype', 'fp9'])!.stderr).toContain(
      "argument --kv-cache-dtype: invalid choice: 'fp9' (choose from 'auto', 'bfloat16', 'float16', 'fp8'",
    )
    expect(exitOf('vllm', ['--version'])).toEqual({ code: 0, stdout: '0.23.0\n', stderr: '' })
    expect(exitOf('vllm', ['serve', '--model', 'x/y', '--port', '8000'])).toBeNull()
  })

  test('--help lists the config groups only; --help=<flag> (either spelling) prints that flag; a group title prints its flags', () => {
    const plain = exitOf('vllm', ['serve', '--help'])!
    expect(plain.code).toBe(0)
    expect(plain.stdout).toMatch(/^usage: vllm serve \[model_tag\] \[options\]\n/)
    expect(plain.stdout).toContain('\nConfig Groups:\n  positional arguments\n  options\n  Frontend ')
    expect(plain.stdout).toContain('  CacheConfig          Configuration for the KV cache.\n')
    expect(plain.stdout).toContain('For a flag:               vllm serve --help=max-model-len  (_ or - accepted)\n')
    expect(plain.stdout).not.toContain('--max-num-seqs')
    for (const kw of ['max-num-seqs', 'max_num_seqs', 'MAX-NUM-SEQS']) {
      const one = exitOf('vllm', ['serve', `--help=${kw}`])!
      expect(one.stdout, kw).toMatch(
        /^Arguments matching 'max-num-seqs':\n {2}--max-num-seqs MAX_NUM_SEQS\n {24}Maximum number of sequences[\s\S]*\(default: None\)\n\nWhen passing JSON CLI arguments/,
      )
    }
    expect(exitOf('vllm', ['serve', '--help=enable-prefix'])!.stdout).toContain('  --enable-prefix-caching, --no-enable-prefix-caching\n')
    expect(exitOf('vllm', ['serve', '--help=cacheconfig'])!.stdout).toMatch(
      /^CacheConfig:\n {2}Configuration for the KV cache\.\n\n {2}--block-size BLOCK_SIZE/,
    )
    expect(exitOf('vllm', ['serve', '--help=zzz'])!.stdout).toBe(
      "No group or arguments matching 'zzz'.\nUse '--help' to see available groups or '--help=all' to see all available parameters.\n",
    )
  })
})

describe('vLLM startup log', () => {
  test("every line has vLLM's prefix; non-default args is a Python dict literal keyed by dest with only non-defaults, the key redacted", async () => {
    const e = await serve([
      '--max-num-seqs',
      '8',
      '--kv_cache_dtype',
      'fp8',
      '--api-key',
      'sk-secret',
      '--served-model-name',
      'qwen',
      'qwen-b',
      '--gpu-memory-utilization',
      '0.92',
    ])
    for (const line of e.log.filter((l) => l.startsWith('('))) if (!line.includes('INFO:     ')) expect(line).toMatch(PREFIX)
    expect(e.log.join('\n')).not.toContain('sk-secret')
    const dict = argsDict(e.log)
    expect(dict).toBe(
      "{'model_tag': 'Qwen/Qwen3-0.6B', 'api_key': '***', 'served_model_name': ['qwen', 'qwen-b'], 'kv_cache_dtype': 'fp8', 'max_num_seqs': 8}",
    )
    const back = await python('import ast, json, sys\nprint(json.dumps([ast.literal_eval(s) for s in json.load(sys.stdin)]))', [
      dict,
      "{'a': 'it\\'s', 'b': None, 'c': 1e-05, 'd': True}",
    ])
    expect(back[0]).toEqual({
      model_tag: 'Qwen/Qwen3-0.6B',
      api_key: '***',
      served_model_name: ['qwen', 'qwen-b'],
      kv_cache_dtype: 'fp8',
      max_num_seqs: 8,
    })
    expect(lineOf(e.log, 'Using fp8 data type to store kv cache.')).toMatch(PREFIX)
  })

  test('the engine config line is VllmConfig.__str__: resolved values (prefix caching on by default in V1), never max_num_seqs', async () => {
    const e = await serve([])
    const line = lineOf(e.log, 'Initializing a V1 LLM engine (v0.23.0) with config: ')
    expect(line).toMatch(/^\(EngineCore pid=\d+\) INFO \d\d-\d\d \d\d:\d\d:\d\d \[core\.py:109\] Initializing/)
    const config = configLine(e.log)
    expect(config).toMatch(/^model='Qwen\/Qwen3-0\.6B', speculative_config=None, tokenizer='Qwen\/Qwen3-0\.6B', /)
    for (const part of [
      'kv_cache_dtype=auto',
      'enable_prefix_caching=True',
      'enable_chunked_prefill=True',
      'served_model_name=Qwen/Qwen3-0.6B',
    ])
      expect(config).toContain(part)
    expect(config).not.toContain('max_num_seqs')
    expect(argsDict(e.log)).toBe("{'model_tag': 'Qwen/Qwen3-0.6B'}")
    expect(lineOf(e.log, 'GPU KV cache size: ')).toMatch(/\[kv_cache_utils\.py:1733\] GPU KV cache size: 1,048,576 tokens$/)
  })
})

describe('vLLM endpoints and meters', () => {
  test("/health is an empty 200, /version, /v1/models cards, a 404 in FastAPI's shape; /server_info only under VLLM_SERVER_DEV_MODE=1", async () => {
    const e = await serve(['--served-model-name', 'a', 'b'])
    const health = await fetch(`${e.baseUrl}/health`)
    expect([health.status, await health.text()]).toEqual([200, ''])
    expect(await (await fetch(`${e.baseUrl}/version`)).json()).toEqual({ version: '0.23.0' })
    const models = (await (await fetch(`${e.baseUrl}/v1/models`)).json()) as { data: Array<Record<string, unknown>> }
    expect(models.data.map((m) => [m.id, m.owned_by, m.root, m.max_model_len])).toEqual([
      ['a', 'vllm', 'Qwen/Qwen3-0.6B', 40960],
      ['b', 'vllm', 'Qwen/Qwen3-0.6B', 40960],
    ])
    expect((await complete(e.baseUrl, 'hello', 'b')).json.model).toBe('a')
    expect(await (await fetch(`${e.baseUrl}/server_info`)).json()).toEqual({ detail: 'Not Found' })
    const dev = await serve([], { env: { VLLM_SERVER_DEV_MODE: '1', VLLM_API_KEY_X: 'x' } })
    const info = (await (await fetch(`${dev.baseUrl}/server_info`)).json()) as { vllm_config: string; vllm_env: Record<string, string> }
    expect(info.vllm_config).toBe(configLine(dev.log))
    expect(info.vllm_env).toEqual({ VLLM_SERVER_DEV_MODE: '1' })
    expect(lineOf(dev.log, 'SECURITY WARNING: Development endpoints are enabled!')).toMatch(PREFIX)
  })

  test('the page parses with no error: counters with _total, model_name and engine on every series, cache_config_info in str() values', async () => {
    const e = await serve(['--kv-cache-dtype', 'fp8_e5m2'])
    await complete(e.baseUrl, tokens(20))
    const text = await page(e)
    const parsed = parsePrometheusText(text)
    expect(parsed.errors).toEqual([])
    expect(parsed.prefixes()).toEqual(['vllm'])
    // prometheus_client's default registry: each counter and histogram followed by its _created gauge.
    expect(parsed.family('vllm:prompt_tokens_created')?.type).toBe('gauge')
    for (const f of parsed.families)
      for (const s of f.samples)
        if (f.name.startsWith('vllm:') && f.name !== 'vllm:cache_config_info')
          expect(s.labels, s.name).toMatchObject({ engine: '0', model_name: 'Qwen/Qwen3-0.6B' })
    expect(parsed.family('vllm:iteration_tokens_total')?.type).toBe('histogram')
    const info = parsed.samples('vllm:cache_config_info')[0]!
    expect(info.value).toBe(1)
    expect(info.labels).toMatchObject({
      enable_prefix_caching: 'True',
      cache_dtype: 'fp8_e5m2',
      block_size: '128',
      gpu_memory_utilization: '0.92',
      num_gpu_blocks: '8192',
      engine: '0',
      sliding_window: 'None',
    })
    expect(Object.keys(info.labels).join(',')).toBe(Object.keys(info.labels).sort().join(','))
    expect(
      parsed
        .samples('vllm:time_to_first_token_seconds_bucket')
        .map((s) => s.labels.le)
        .slice(0, 3),
    ).toEqual(['0.001', '0.005', '0.01'])
    expect(value(text, 'vllm:request_success_total')).toBe(1)
  })

  test('prefix cache hits count tokens, only for a shared prefix of a whole 128-token block (the CPU build), and only with caching on', async () => {
    const on = await serve([])
    await complete(on.baseUrl, tokens(128, 'a'))
    await complete(on.baseUrl, `${tokens(128, 'a')} other words`)
    expect([value(await page(on), 'vllm:prefix_cache_queries_total'), value(await page(on), 'vllm:prefix_cache_hits_total')]).toEqual([
      258, 128,
    ])
    // 127 shared words, or the 64 of the old meter traffic, never fill a block: no hit.
    await complete(on.baseUrl, `${tokens(127, 'b')} x`)
    await complete(on.baseUrl, `${tokens(127, 'b')} y`)
    await complete(on.baseUrl, `${tokens(64, 'd')} x`)
    await complete(on.baseUrl, `${tokens(64, 'd')} y`)
    expect(value(await page(on), 'vllm:prefix_cache_hits_total')).toBe(128)
    await complete(on.baseUrl, tokens(300, 'c'))
    await complete(on.baseUrl, tokens(300, 'c'))
    expect(value(await page(on), 'vllm:prefix_cache_hits_total')).toBe(128 + 256)
    // --block-size 16 (a GPU build's): a 40-word prefix hits two blocks.
    const small = await serve(['--block-size', '16'])
    await complete(small.baseUrl, tokens(40, 'c'))
    await complete(small.baseUrl, tokens(40, 'c'))
    expect(value(await page(small), 'vllm:prefix_cache_hits_total')).toBe(32)
    const off = await serve(['--no-enable-prefix-caching'])
    await complete(off.baseUrl, tokens(300, 'c'))
    await complete(off.baseUrl, tokens(300, 'c'))
    expect([value(await page(off), 'vllm:prefix_cache_queries_total'), value(await page(off), 'vllm:prefix_cache_hits_total')]).toEqual([
      0, 0,
    ])
    expect(value(await page(off), 'vllm:prompt_tokens_total')).toBe(600)
  })
})

const CHECKS: Record<Extract<ProfileFaultName, `vllm_${string}`>, { args: string[]; check(e: InProcessProfile): Promise<void> }> = {
  vllm_args_line_differs: {
    args: ['--max-num-seqs', '8'],
    async check(e) {
      expect(argsDict(e.log)).toContain("'max_num_seqs': 9")
      expect(configLine(e.log)).toContain('enable_prefix_caching=False')
      expect(configLine(e.log)).toContain('kv_cache_dtype=fp8')
      expect(parsePrometheusText(await page(e)).samples('vllm:cache_config_info')[0]!.labels).toMatchObject({
        enable_prefix_caching: 'True',
        cache_dtype: 'auto',
      })
    },
  },
  vllm_cache_info_differs: {
    args: [],
    async check(e) {
      expect(parsePrometheusText(await page(e)).samples('vllm:cache_config_info')[0]!.labels).toMatchObject({
        enable_prefix_caching: 'False',
        cache_dtype: 'fp8',
      })
      expect(configLine(e.log)).toContain('enable_prefix_caching=True')
    },
  },
  vllm_kv_fp8_fallback: {
    args: ['--kv-cache-dtype', 'fp8'],
    async check(e) {
      expect(argsDict(e.log)).toContain("'kv_cache_dtype': 'fp8'")
      expect(configLine(e.log)).toContain('kv_cache_dtype=auto')
      expect(parsePrometheusText(await page(e)).samples('vllm:cache_config_info')[0]!.labels.cache_dtype).toBe('auto')
    },
  },
  vllm_prefix_cache_still: {
    args: [],
    async check(e) {
      // Two blocks' worth shared: an engine that counts would show 256.
      await complete(e.baseUrl, tokens(300))
      await complete(e.baseUrl, tokens(300))
      const text = await page(e)
      expect([value(text, 'vllm:prefix_cache_queries_total'), value(text, 'vllm:prefix_cache_hits_total')]).toEqual([600, 0])
    },
  },
  vllm_old_metric_names: {
    args: [],
    async check(e) {
      await complete(e.baseUrl, tokens(300))
      await complete(e.baseUrl, tokens(300))
      const parsed = parsePrometheusText(await page(e))
      expect(parsed.errors).toEqual([])
      expect(parsed.samples('vllm:prefix_cache_hits_total')).toEqual([])
      expect(parsed.samples('vllm:gpu_prefix_cache_hits_total')[0]).toMatchObject({ value: 2, labels: { model_name: 'Qwen/Qwen3-0.6B' } })
      expect(parsed.samples('vllm:gpu_prefix_cache_queries_total')[0]!.value).toBe(4)
      expect(parsed.family('vllm:time_per_output_token_seconds')?.type).toBe('histogram')
      expect(parsed.family('vllm:inter_token_latency_seconds')).toBeUndefined()
      expect(parsed.samples('vllm:gpu_cache_usage_perc')[0]!.labels).toEqual({ model_name: 'Qwen/Qwen3-0.6B' })
    },
  },
}

describe('vLLM faults', () => {
  test('every vllm fault has its check here', () => {
    expect(Object.keys(CHECKS).sort()).toEqual(faultsOf('vllm').sort())
  })
  test.each(Object.entries(CHECKS))('%s', async (name, { args, check }) => {
    await check(await serve(args, { faults: [name as ProfileFaultName] }))
  })
})
