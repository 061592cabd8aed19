// The reference engine speaking llama.cpp's server (engine/profiles/llamacpp*.ts): exact flags with
// env twins (the command line wins, with llama.cpp's warn line), `-np -1` resolving to auto, the
// startup lines, /health while loading, /props and /slots, /metrics only with --metrics (501
// otherwise) with no labels and 6 significant digits, and each of its faults.
import { afterAll, describe, expect, test } from 'vitest'
import { parsePrometheusText } from '../../../helpers/prom/parse.ts'
import type { ProfileFaultName } from '../../../engine/profiles/faults.ts'
import { faultsOf } from '../../../engine/profiles/faults.ts'
import { cppDouble } from '../../../engine/profiles/llamacpp.ts'
import { complete, exitOf, serveProfile, tokens } from '../../support/profile-in-process.ts'
import type { InProcessProfile } from '../../support/profile-in-process.ts'

const served: InProcessProfile[] = []
const serve = async (argv: string[], options: Parameters<typeof serveProfile>[2] = {}) => {
  const e = await serveProfile('llama.cpp', ['-m', 'models/q.gguf', ...argv], options)
  served.push(e)
  return e
}
afterAll(async () => Promise.all(served.map((e) => e.stop())))
const props = async (e: InProcessProfile) =>
  (await (await fetch(`${e.baseUrl}/props`)).json()) as {
    total_slots: number
    default_generation_settings: { n_ctx: number }
    endpoint_metrics: boolean
  }
/** A line's message: the log prefix (time since start, level letter) taken off. */
const message = (l: string) => l.replace(/^\d+\.\d{2}\.\d{3}\.\d{3} [IWED] /, '')
const messages = (e: InProcessProfile) => e.log.map(message)
const slotsLine = (e: InProcessProfile) => messages(e).find((l) => l.includes('load_model: initializing, n_slots'))

describe('llama.cpp command line and log', () => {
  test('-np and --parallel are one flag, the last wins, `_` is read as `-`; an unknown flag is refused', async () => {
    const e = await serve(['-np', '3', '--parallel', '2', '--ctx_size', '8192', '-lv', '4'])
    expect(slotsLine(e)).toBe("srv    load_model: initializing, n_slots = 2, n_ctx_slot = 4096, kv_unified = 'false'")
    expect(messages(e).filter((l) => l.startsWith('slot   load_model: id '))).toEqual([
      'slot   load_model: id  0 | task -1 | new slot, n_ctx = 4096',
      'slot   load_model: id  1 | task -1 | new slot, n_ctx = 4096',
    ])
    expect(messages(e)).toContain('llama_context: n_seq_max             = 2')
    expect(e.log.join('\n')).not.toContain('n_parallel is set to auto')
    // At the default verbosity the trace lines are not printed (the real build's -lv 3).
    const plain = await serve(['-np', '2'])
    expect(plain.log.join('\n')).not.toContain('llama_context: n_seq_max')
    expect(slotsLine(plain)).toBe("srv    load_model: initializing, n_slots = 2, n_ctx_slot = 32768, kv_unified = 'false'")
    expect(exitOf('llama.cpp', ['--draft', '4'])).toMatchObject({ code: 1, stdout: '' })
    expect(exitOf('llama.cpp', ['--draft', '4'])!.stderr).toMatch(
      / I srv {2}llama_server: initializing \.\.\.\nerror: invalid argument: --draft\n$/,
    )
    expect(exitOf('llama.cpp', ['-np', '0'])!.stderr).toMatch(/\nerror while handling argument "-np": /)
    expect(exitOf('llama.cpp', ['-h'])!.stdout).toContain(
      '-np,   --parallel N                     number of server slots (default: -1, -1 = auto)\n                                        (env: LLAMA_ARG_N_PARALLEL)',
    )
  })

  test('-np -1 (the default) resolves to auto: 4 slots, kv_unified, n_ctx per slot the whole context', async () => {
    const e = await serve(['-lv', '4'])
    expect(messages(e)).toContain('srv  llama_server: n_parallel is set to auto, using n_parallel = 4 and kv_unified = true')
    expect(slotsLine(e)).toBe("srv    load_model: initializing, n_slots = 4, n_ctx_slot = 32768, kv_unified = 'true'")
    expect(await props(e)).toMatchObject({ total_slots: 4, default_generation_settings: { n_ctx: 32768 } })
  })

  test("LLAMA_ARG_N_PARALLEL is read, and a command-line -np overrides it with llama.cpp's warn line", async () => {
    const env = await serve([], { env: { LLAMA_ARG_N_PARALLEL: '6' } })
    expect((await props(env)).total_slots).toBe(6)
    const both = await serve(['-np', '2'], { env: { LLAMA_ARG_N_PARALLEL: '6' } })
    expect(both.log[1]).toBe('warn: LLAMA_ARG_N_PARALLEL environment variable is set, but will be overwritten by command line argument -np')
    expect((await props(both)).total_slots).toBe(2)
  })
})

describe('llama.cpp endpoints and meters', () => {
  test('/health answers 503 with its JSON while loading, then {"status":"ok"}; /metrics is 501 without --metrics', async () => {
    const loading = await serve([], { unavailableMs: 60_000 })
    const res = await fetch(`${loading.baseUrl}/health`)
    expect([res.status, await res.text()]).toEqual([503, '{"error":{"message":"Loading model","type":"unavailable_error","code":503}}'])
    // What the engine resolved is printed when loading ends, not before (as the real build does).
    expect(slotsLine(loading)).toBeUndefined()
    const e = await serve(['-np', '2'])
    expect(await (await fetch(`${e.baseUrl}/health`)).json()).toEqual({ status: 'ok' })
    const metrics = await fetch(`${e.baseUrl}/metrics`)
    expect(metrics.status).toBe(501)
    expect(((await metrics.json()) as { error: { message: string } }).error.message).toBe(
      'This server does not support metrics endpoint. Start it with `--metrics`',
    )
    expect((await props(e)).endpoint_metrics).toBe(false)
    expect(((await (await fetch(`${e.baseUrl}/slots`)).json()) as unknown[]).length).toBe(2)
    expect(
      ((await (await fetch(`${e.baseUrl}/v1/models`)).json()) as { data: Array<{ owned_by: string; meta: object }> }).data[0],
    ).toMatchObject({ owned_by: 'llamacpp', meta: { n_ctx_train: 32768 } })
  })

  test('with --metrics: llamacpp: families with no labels, values in 6 significant digits, counters that move with traffic', async () => {
    const e = await serve(['--metrics'])
    await complete(e.baseUrl, tokens(12))
    const res = await fetch(`${e.baseUrl}/metrics`)
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4')
    // Not a Unix time: llama.cpp sends its monotonic ggml_time_us() (the real de3ff81 sent 1306405338).
    expect(res.headers.get('process-start-time-unix')).toMatch(/^\d+$/)
    const text = await res.text()
    const p = parsePrometheusText(text)
    expect(p.errors).toEqual([])
    expect(p.prefixes()).toEqual(['llamacpp'])
    for (const f of p.families) for (const s of f.samples) expect(s.labels, s.name).toEqual({})
    expect(p.samples('llamacpp:prompt_tokens_total')[0]!.raw).toBe('12')
    expect(p.family('llamacpp:n_busy_slots_per_decode')?.type).toBe('gauge')
    expect(
      messages(e).some((l) => /^slot print_timing: id {2}\d \| task \d+ \| prompt eval time = +\d+\.\d\d ms \/ +12 tokens \(/.test(l)),
    ).toBe(true)
    expect([cppDouble(1234567), cppDouble(133), cppDouble(0.5), cppDouble(0.000012345), cppDouble(2.5e-7)]).toEqual([
      '1.23457e+06',
      '133',
      '0.5',
      '1.2345e-05',
      '2.5e-07',
    ])
  })
})

const CHECKS: Record<Extract<ProfileFaultName, `llamacpp_${string}`>, { args: string[]; check(e: InProcessProfile): Promise<void> }> = {
  llamacpp_log_differs: {
    args: ['-np', '2'],
    async check(e) {
      expect(slotsLine(e)).toMatch(/^srv {4}load_model: initializing, n_slots = 3, /)
      expect((await props(e)).total_slots).toBe(2)
    },
  },
  llamacpp_props_differs: {
    args: ['-np', '2'],
    async check(e) {
      expect((await props(e)).total_slots).toBe(3)
      expect(slotsLine(e)).toMatch(/^srv {4}load_model: initializing, n_slots = 2, /)
    },
  },
  llamacpp_meter_still: {
    args: ['--metrics'],
    async check(e) {
      await complete(e.baseUrl, tokens(12))
      const p = parsePrometheusText(await (await fetch(`${e.baseUrl}/metrics`)).text())
      for (const name of ['llamacpp:prompt_tokens_total', 'llamacpp:tokens_predicted_total', 'llamacpp:n_decode_total'])
        expect(p.samples(name)[0]!.value, name).toBe(0)
    },
  },
  llamacpp_old_metric_names: {
    args: ['--metrics'],
    async check(e) {
      const p = parsePrometheusText(await (await fetch(`${e.baseUrl}/metrics`)).text())
      expect(p.errors).toEqual([])
      expect(p.family('llamacpp:kv_cache_usage_ratio')?.type).toBe('gauge')
      expect(p.family('llamacpp:kv_cache_tokens')?.type).toBe('gauge')
    },
  },
}

describe('llama.cpp faults', () => {
  test('every llama.cpp fault has its check here', () => {
    expect(Object.keys(CHECKS).sort()).toEqual(faultsOf('llama.cpp').sort())
  })
  test.each(Object.entries(CHECKS))('%s', async (name, { args, check }) => {
    await check(await serve(args, { faults: [name as ProfileFaultName] }))
  })
})
