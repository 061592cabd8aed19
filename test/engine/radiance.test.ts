// The radiance reference engine itself: flags and --help, the load phases, the three probes,
// /metrics, the host side (pidof, cmdline, podman/systemctl shims), and every fault switch.
import { execFile } from 'node:child_process'
import { readFileSync, statSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { encodeSolidPng } from '../../helpers/steps/probes/png.ts'
import type { Rgb } from '../../helpers/steps/probes/png.ts'
import { FAULTS } from '../../engine/faults.ts'
import type { FaultName } from '../../engine/faults.ts'
import { FLAGS } from '../../engine/flags.ts'
import { COMPILE_CACHE, ENGINE_ENTRY, freePort, startEngine } from '../../engine/launch.ts'
import type { EngineHandle, EngineOptions } from '../../engine/launch.ts'
import { HUGE_LOG_BYTES } from '../../engine/ledger.ts'
import { GARBAGE_LINE, TEXT_EXEMPLAR } from '../../engine/metrics.ts'
import { processStartSeconds } from '../../engine/proc-start.ts'
import { PALETTE } from '../../engine/vision.ts'
import { serveInProcess } from '../support/engine-in-process.ts'

const FAST = ['--load-closed-ms', '0', '--load-503-ms', '0']
const MODEL = 'radiance-ref-8b'
const engines: EngineHandle[] = []

/** A process name of ≤ 15 chars no other engine (or test file) uses. */
const uniqueName = (prefix: string): string => `${prefix}${Math.random().toString(36).slice(2, 8)}`

async function launch(options: EngineOptions = {}): Promise<EngineHandle> {
  const engine = await startEngine({ processName: uniqueName('rt-'), ...options })
  engines.push(engine)
  return engine
}

afterAll(async () => {
  await Promise.all(engines.map((e) => e.stop()))
})

interface Ran {
  code: number
  stdout: string
  stderr: string
}

function run(file: string, args: readonly string[], env?: Record<string, string>): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { env: { NODE_COMPILE_CACHE: COMPILE_CACHE, ...process.env, ...env }, timeout: 10_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0
        resolve({ code, stdout: String(stdout), stderr: String(stderr) })
      },
    )
  })
}

/** What an HTTP check needs of an engine: where it answers (launched, or served in this process). */
type Served = Pick<EngineHandle, 'baseUrl'>

let ownHelp: Promise<Ran> | undefined
/** `node engine/radiance.ts --help`, run once for the tests that read it. */
const engineHelp = (): Promise<Ran> => (ownHelp ??= run(process.execPath, [ENGINE_ENTRY, '--help']))

async function post(e: Served, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
  const res = await fetch(`${e.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(5000),
  })
  const text = await res.text()
  return { status: res.status, json: text ? JSON.parse(text) : null }
}

async function health(e: Served): Promise<any> {
  return (await fetch(`${e.baseUrl}/health`, { signal: AbortSignal.timeout(5000) })).json()
}

/** The page; a bound on a hung engine, not on speed: metrics_huge's ~30 MB page takes seconds on a loaded machine. */
async function metrics(e: Served): Promise<string> {
  return (await fetch(`${e.baseUrl}/metrics`, { signal: AbortSignal.timeout(30_000) })).text()
}

/** The value text of the first sample `name{…labels…}` whose labels include `having`. */
function sample(page: string, name: string, having = ''): string | undefined {
  const line = page.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(having))
  return line?.slice(line.lastIndexOf(' ') + 1)
}

/** Resolves when the request got no answer within `ms`. */
async function noAnswerWithin(url: string, ms: number, init: RequestInit = {}): Promise<boolean> {
  try {
    await fetch(url, { ...init, signal: AbortSignal.timeout(ms) })
    return false
  } catch (error) {
    return (error as Error).name === 'TimeoutError'
  }
}

const exactBody = (word: string, maxTokens = 1024) => ({
  model: MODEL,
  temperature: 0,
  max_tokens: maxTokens,
  messages: [{ role: 'user', content: `Reply with exactly this one word and nothing else: ${word}` }],
})

const TOOL = {
  name: 'record_probe_token',
  parameters: { type: 'object', properties: { token: { type: 'string' } }, required: ['token'] },
}
const toolsBody = (extra: Record<string, unknown> = {}) => ({
  model: MODEL,
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'Call record_probe_token with the token "quasar-7".' }],
  tools: [{ type: 'function', function: TOOL }],
  ...extra,
})

const dataUrl = (rgb: Rgb): string => `data:image/png;base64,${encodeSolidPng(16, 16, rgb).toString('base64')}`
const visionBody = (url: unknown, maxTokens = 512, decoy = 'blue') => ({
  model: MODEL,
  max_tokens: maxTokens,
  messages: [
    {
      role: 'user',
      content: [
        { type: 'text', text: `Is this square ${decoy}? Answer with the name of its colour in one word.` },
        { type: 'image_url', image_url: url },
      ],
    },
  ],
})
const RED = dataUrl([255, 0, 0])

describe('radiance command line', () => {
  test('--help lists every flag with its metavar or choices and its default', async () => {
    const { code, stdout } = await engineHelp()
    expect(code).toBe(0)
    for (const flag of FLAGS) {
      const start = stdout.indexOf(`\n  ${flag.flag} `)
      expect(start, flag.flag).toBeGreaterThan(0)
      const entry = stdout.slice(start + 1).split(/\n {2}--/)[0]!
      expect(entry.replace(/\s+/g, ' '), flag.flag).toContain(`(default: ${flag.default ?? 'None'})`)
    }
    expect(stdout).toContain(
      '  --checkpoint-policy {always,on_evict,never}\n                        Prefix snapshot policy. (default: always)',
    )
    expect(stdout).toContain(
      '  --prefill-interleave PREFILL_INTERLEAVE\n                        Hold up to N decode steps to interleave prefill. (default: 0)',
    )
    expect(stdout).toContain('--reasoning-field {reasoning_content,reasoning}')
  })

  test('an invalid choice, a bad int and an unknown flag are refused at boot with config_parse and exit 2', async () => {
    const port = await freePort()
    const bad = await run(process.execPath, [ENGINE_ENTRY, '--port', String(port), '--checkpoint-policy', 'floor'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("config_parse: invalid choice 'floor' for --checkpoint-policy (choose from always, on_evict, never)")
    expect(bad.stdout).toBe('')
    const more = await run(process.execPath, [ENGINE_ENTRY, '--prefill-interleave=x', '--checkpoint-slots', '0', '--nope', '1'])
    expect(more.code).toBe(2)
    expect(more.stderr.trim().split('\n')).toEqual([
      "config_parse: invalid int value 'x' for --prefill-interleave",
      "config_parse: invalid value '0' for --checkpoint-slots (expected an int >= 1 or auto)",
      'config_parse: unrecognized arguments: --nope',
      'config_parse: unrecognized arguments: 1',
    ])
  })
})

describe('loading', () => {
  test('the port is closed, then /health and /v1 answer 503, then /health is 200 with numeric in_flight and queue_cap', async () => {
    // 503 for 1.5 s: on a loaded machine the /v1/models request after a 503 of /health can come
    // half a second later (it was red once at 500 ms, with the /health 503 seen once).
    const e = await launch({ args: ['--load-closed-ms', '300', '--load-503-ms', '1500'] })
    const seen: (string | number)[] = []
    let models503 = false
    let body: any = null
    const deadline = Date.now() + 8000
    while (Date.now() < deadline && seen.at(-1) !== 200) {
      let state: string | number
      try {
        const res = await fetch(`${e.baseUrl}/health`, { signal: AbortSignal.timeout(1000) })
        state = res.status
        const text = await res.text()
        if (res.status === 503) {
          expect(text).toBe('')
          models503 ||= (await fetch(`${e.baseUrl}/v1/models`)).status === 503
        }
        if (res.status === 200) body = JSON.parse(text)
      } catch {
        state = 'closed'
      }
      if (seen.at(-1) !== state) seen.push(state)
      await new Promise((r) => setTimeout(r, 20))
    }
    expect(seen).toEqual(['closed', 503, 200])
    expect(models503).toBe(true)
    expect(body).toEqual({ status: 'ok', in_flight: 0, queue_cap: 256 })
  })
})

describe('a healthy engine', () => {
  let e: EngineHandle
  beforeAll(async () => {
    e = await launch({ svc: 'radiance-ref', args: [...FAST, '--prefill-interleave', '1'], dropins: [] })
    await e.waitReady()
  })

  test('answers the exact-word probe with the word in content and reasoning in reasoning_content', async () => {
    const { status, json } = await post(e, exactBody('kestrel'))
    expect(status).toBe(200)
    expect(json).toMatchObject({ object: 'chat.completion', model: MODEL, prompt_logprobs: null, kv_transfer_params: null })
    expect(json.id).toMatch(/^chatcmpl-[0-9a-f]{32}$/)
    expect(json.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        reasoning_content: 'The user wants the single word kestrel. I will answer with it.',
        content: '\n\nkestrel',
        tool_calls: [],
      },
      logprobs: null,
      finish_reason: 'stop',
      stop_reason: null,
    })
    expect(json.usage).toEqual({ prompt_tokens: 10, completion_tokens: 49, total_tokens: 59, prompt_tokens_details: null })
  })

  test('answers a tools request with a real tool_calls entry for auto, required and a named function', async () => {
    const auto = await post(e, toolsBody())
    const call = auto.json.choices[0].message.tool_calls[0]
    expect(call).toMatchObject({ type: 'function', function: { name: 'record_probe_token', arguments: '{"token": "quasar-7"}' } })
    expect(call.id).toMatch(/^chatcmpl-tool-[0-9a-f]{32}$/)
    expect(auto.json.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { content: null } })
    const required = await post(e, toolsBody({ tool_choice: 'required' }))
    expect(required.json.choices[0].finish_reason).toBe('tool_calls')
    const named = await post(e, toolsBody({ tool_choice: { type: 'function', function: { name: 'record_probe_token' } } }))
    expect(named.json.choices[0]).toMatchObject({
      finish_reason: 'stop',
      message: { tool_calls: [{ function: { name: 'record_probe_token' } }] },
    })
    const unknown = await post(e, toolsBody({ tool_choice: { type: 'function', function: { name: 'nope' } } }))
    expect(unknown.status).toBe(400)
  })

  test.each(PALETTE.map(([name, rgb]) => ({ name, rgb })))(
    'names a solid $name PNG sent as an image_url data URL',
    async ({ name, rgb }) => {
      const { status, json } = await post(e, visionBody({ url: dataUrl(rgb) }, 512, name === 'blue' ? 'red' : 'blue'))
      expect(status).toBe(200)
      expect(json.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: `\n\nThe square is ${name}.` } })
    },
  )

  test('refuses a bare-string image_url, a non-base64 data URL and an undecodable image with a nested 400', async () => {
    for (const url of [RED, 'data:image/png,rawbytes', 'data:image/png;base64,aGVsbG8=']) {
      const body = url === RED ? visionBody(RED) : visionBody({ url })
      const { status, json } = await post(e, body)
      expect(status).toBe(400)
      expect(json.error).toMatchObject({ type: 'BadRequestError', param: null, code: 400 })
    }
    expect((await post(e, visionBody({ url: 'data:image/png,x' }))).json.error.message).toBe('Only base64 data URLs are supported for now.')
  })

  test('ignores a legacy top-level images field and answers from the text alone', async () => {
    const png = encodeSolidPng(16, 16, [255, 0, 0]).toString('base64')
    const decoy = await post(e, {
      model: MODEL,
      max_tokens: 512,
      images: [png],
      messages: [{ role: 'user', content: 'Is this square blue? One word.' }],
    })
    expect(decoy.json.choices[0].message.content).toBe('\n\nThe square is blue.')
    const none = await post(e, {
      model: MODEL,
      max_tokens: 512,
      images: [png],
      messages: [{ role: 'user', content: 'What colour is this square?' }],
    })
    expect(none.json.choices[0].message.content).toBe('\n\nI cannot see an image.')
  })

  test('a max_tokens smaller than reasoning plus answer ends with finish_reason length and content null', async () => {
    const exact = await post(e, exactBody('juniper', 20))
    expect(exact.json.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: null } })
    expect(exact.json.choices[0].message.reasoning_content.split(' ')).toHaveLength(12)
    expect(exact.json.usage.completion_tokens).toBe(20)
    const vision = await post(e, visionBody({ url: RED }, 256))
    expect(vision.json.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: null } })
    const plain = await post(e, { model: MODEL, max_completion_tokens: 2, messages: [{ role: 'user', content: 'hello' }] })
    expect(plain.json.choices[0].message.reasoning_content).toBe('The user')
  })

  test('serves /v1/models, /stats and a nested 404 in vLLM shapes', async () => {
    const models = await (await fetch(`${e.baseUrl}/v1/models`)).json()
    expect(models).toEqual({
      object: 'list',
      data: [
        {
          id: MODEL,
          object: 'model',
          created: expect.any(Number),
          owned_by: 'vllm',
          root: MODEL,
          parent: null,
          max_model_len: 32768,
          permission: [],
        },
      ],
    })
    const before = (await e.stats()) as any
    expect(before).toMatchObject({
      uptime_s: expect.any(Number),
      knobs: {
        prefill_interleave: 1,
        busy_prefill_chunk: 0,
        checkpoint_policy: 'always',
        checkpoint_slots: { resolved: 20, auto: true, bound_by: null },
      },
      stager: { depth: 2 },
    })
    await post(e, exactBody('sextant', 300))
    const after = (await e.stats()) as any
    expect(after.served.chat_completions - before.served.chat_completions).toBe(1)
    expect(after.tokens.requested_max - before.tokens.requested_max).toBe(300)
    const missing = await fetch(`${e.baseUrl}/nope`)
    expect(missing.status).toBe(404)
    expect(await missing.json()).toEqual({ error: { message: 'Not Found', type: 'NotFoundError', param: null, code: 404 } })
  })

  test('exports prometheus_client layout with _created gauge families and float values', async () => {
    const page = await metrics(e)
    expect(page).toContain('# TYPE vllm:request_success_total counter\n')
    expect(page).toContain('# TYPE vllm:request_success_created gauge\n')
    expect(page).toContain('# TYPE vllm:num_preemptions_created gauge\n')
    expect(page).toContain('# TYPE vllm:time_to_first_token_seconds histogram\n')
    expect(page).toContain('# TYPE vllm:e2e_request_latency_seconds_created gauge\n')
    expect(page).toMatch(/^vllm:time_to_first_token_seconds_bucket\{engine="0",model_name="radiance-ref-8b",le="\+Inf"\} \d+\.0$/m)
    expect(sample(page, 'vllm:num_preemptions_created')).toMatch(/^\d\.\d+e\+09$/)
    expect(sample(page, 'vllm:request_success_total', 'finished_reason="abort"')).toBe('0.0')
    expect(Number(sample(page, 'vllm:request_success_total', 'finished_reason="stop"'))).toBeGreaterThan(0)
    expect(sample(page, 'radiance:prefix_hit_cut_tokens_total', 'reason="evicted"')).toBe('0.0')
    for (const family of [
      'vllm:num_requests_running',
      'vllm:num_requests_waiting',
      'vllm:prompt_tokens_total',
      'vllm:generation_tokens_total',
      'radiance:engine_steps_total',
      'radiance:engine_steps_decode_total',
      'radiance:engine_step_seconds_total',
      'radiance:engine_step_seconds_decode_total',
    ]) {
      expect(sample(page, family), family).toMatch(/^\d+(\.\d+)?$/)
    }
  })

  test('HEAD /metrics answers its status and no page, and is not counted as a scrape (first contact asks it so)', async () => {
    const scrapes = async () => ((await e.stats()) as { served: { metrics: number } }).served.metrics
    const before = await scrapes()
    const head = await fetch(`${e.baseUrl}/metrics`, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-type')).toContain('text/plain')
    expect(await head.text()).toBe('')
    expect(await scrapes()).toBe(before)
    await metrics(e)
    expect(await scrapes()).toBe(before + 1)
  })

  test('pidof sees exactly the engine pid and its cmdline carries the radiance flags', async () => {
    const pidof = await run('pidof', [e.processName])
    expect(pidof.stdout.trim()).toBe(String(e.pids[0]))
    const argv = readFileSync(`/proc/${e.pids[0]}/cmdline`, 'utf8').split('\0')
    expect(argv[0]!.endsWith(`/${e.processName}`)).toBe(true)
    expect(argv).toContain(ENGINE_ENTRY)
    expect(argv.join(' ')).toContain('--prefill-interleave 1')
  })

  test('the podman shim prints the ledger for the svc and refuses other names with exit 125', async () => {
    const logs = await run('podman', ['logs', 'radiance-ref'], e.env)
    expect(logs.code).toBe(0)
    expect(logs.stdout).toMatch(
      /^INFO \d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \[ledger\.py:41\] radiance 0\.4\.2-ref starting, model radiance-ref-8b$/m,
    )
    for (const line of [
      '--prefill-interleave 1 (default 0)',
      '--busy-prefill-chunk 0 (default 0)',
      '--checkpoint-policy always (default always)',
      '--stager-depth 2 (default 2)',
    ]) {
      expect(logs.stdout).toContain(`[ledger.py:58] ${line}\n`)
    }
    expect(logs.stdout).toContain(
      '[ledger.py:73] --checkpoint-slots 20 [auto] slots of 1.5 GiB each of a budget of 31.5 GiB, bound by None\n',
    )
    expect(logs.stdout).toContain(`[api_server.py:1040] Starting server on http://127.0.0.1:${e.port}\n`)
    const other = await run('podman', ['logs', 'other'], e.env)
    expect(other).toMatchObject({ code: 125, stdout: '', stderr: 'Error: no container with name or ID "other" found: no such container\n' })
    expect((await run('podman', ['ps'], e.env)).code).toBe(125)
  })

  test("podman exec <svc> radiance --help (and -h) prints byte for byte the engine's own --help; other radiance argv run the engine", async () => {
    const help = await run('podman', ['exec', 'radiance-ref', 'radiance', '--help'], e.env)
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('--checkpoint-policy {always,on_evict,never}')
    // The shim prints a file launch.ts wrote; it must be what `radiance --help` itself prints, exit code included.
    const own = await engineHelp()
    expect(help).toEqual(own)
    expect(await run('podman', ['exec', 'radiance-ref', 'radiance', '-h'], e.env)).toEqual(own)
    const refused = await run('podman', ['exec', 'radiance-ref', 'radiance', '--checkpoint-policy', 'floor'], e.env)
    expect(refused).toMatchObject({ code: 2, stdout: '' })
    expect(refused.stderr).toContain("config_parse: invalid choice 'floor' for --checkpoint-policy")
    expect((await run('podman', ['exec', 'radiance-ref', 'vllm', '--help'], e.env)).code).toBe(127)
  })

  test('the systemctl shim reports DropInPaths for the unit and an empty value for others', async () => {
    const dropped = await launch({
      svc: 'llm-a',
      dropins: ['/etc/systemd/system/llm-a.service.d/bench.conf', '/run/x.conf'],
      args: ['--load-closed-ms', '5000'],
    })
    const shown = await run('systemctl', ['show', 'llm-a', '-p', 'DropInPaths'], dropped.env)
    expect(shown).toMatchObject({ code: 0, stdout: 'DropInPaths=/etc/systemd/system/llm-a.service.d/bench.conf /run/x.conf\n' })
    expect((await run('systemctl', ['show', 'llm-a.service', '--property=DropInPaths', '--value'], dropped.env)).stdout).toBe(
      '/etc/systemd/system/llm-a.service.d/bench.conf /run/x.conf\n',
    )
    expect((await run('systemctl', ['show', 'radiance-ref', '-p', 'DropInPaths'], e.env)).stdout).toBe('DropInPaths=\n')
    expect((await run('systemctl', ['show', 'unknown-unit', '-p', 'DropInPaths'], dropped.env)).stdout).toBe('DropInPaths=\n')
    expect((await run('systemctl', ['restart', 'llm-a'], dropped.env)).code).toBe(1)
    await dropped.stop()
  })
})

describe('knob meters', () => {
  test('a knob meter moves only when its knob is armed and traffic flowed, and stays 0.0 at its default', async () => {
    const e = await launch({ args: [...FAST, '--busy-prefill-chunk', '4', '--checkpoint-policy', 'on_evict'] })
    await e.waitReady()
    const quiet = await metrics(e)
    for (const name of [
      'radiance:engine_steps_held_total',
      'radiance:engine_prefill_chunks_capped_total',
      'radiance:prefix_hit_cut_tokens_total',
    ]) {
      expect(sample(quiet, name), name).toBe('0.0')
    }
    await post(e, exactBody('halcyon'))
    const page = await metrics(e)
    expect(sample(page, 'radiance:engine_steps_held_total')).toBe('0.0')
    expect(sample(page, 'radiance:engine_prefill_chunks_capped_total')).toBe('3.0')
    expect(sample(page, 'radiance:prefix_hit_cut_tokens_total', 'no_snapshot')).toBe('10.0')
    expect(sample(page, 'vllm:num_preemptions_total')).toBe('0.0')
    expect(sample(page, 'radiance:engine_steps_total')).toBe('50.0')
    expect(sample(page, 'radiance:engine_step_seconds_decode_total')).toBe('0.588')
    expect(sample(page, 'radiance:engine_step_seconds_total')).toBe('0.619')
  })

  test('in_flight and num_requests_running count a completion while it runs; --api-key guards only /v1', async () => {
    const e = await launch({ args: [...FAST, '--api-key', 'sekret', '--completion-latency-ms', '2000', '--reasoning-field', 'reasoning'] })
    await e.waitReady()
    expect((await post(e, exactBody('quasar'))).status).toBe(401)
    expect((await post(e, exactBody('quasar'))).json).toEqual({ error: 'Unauthorized' })
    const pending = post(e, exactBody('quasar'), { authorization: 'Bearer sekret' })
    // The completion is held 2 s: both reads land inside it even on a loaded machine (600 ms did not).
    await until('the completion in flight', async () => (await health(e)).in_flight === 1)
    const [during, page] = await Promise.all([health(e), metrics(e)])
    expect(during.in_flight).toBe(1)
    expect(sample(page, 'vllm:num_requests_running')).toBe('1.0')
    const done = await pending
    expect(done.json.choices[0].message).toEqual({
      role: 'assistant',
      reasoning: 'The user wants the single word quasar. I will answer with it.',
      content: '\n\nquasar',
    })
    expect((await health(e)).in_flight).toBe(0)
  })

  test('two copies are both seen by pidof and only the first listens', async () => {
    const e = await launch({ copies: 2, args: FAST })
    await e.waitReady()
    const pidof = await run('pidof', [e.processName])
    expect(pidof.stdout.trim().split(' ').map(Number).sort()).toEqual([...e.pids].sort())
    expect(e.pids).toHaveLength(2)
    await e.stop()
    expect((await run('pidof', [e.processName])).code).toBe(1)
  })
})

const ARMED = [...FAST, '--prefill-interleave', '1', '--busy-prefill-chunk', '8', '--checkpoint-policy', 'never']
type Ready = 'health' | 'models' | 'ledger'
/**
 * A fault's check. Most read only what the engine answers over HTTP: the engine is then served in
 * this process (test/support/engine-in-process.ts, the same server without its own process). A
 * check marked `launched` needs the engine's process: its log, its shims, a port that never opens,
 * another engine beside it, or tens of MB that would stall the other checks in this process.
 */
type FaultCheck =
  | { launched: true; ready?: Ready; check(e: EngineHandle, expectation: typeof expect): Promise<void> }
  | { launched?: false; ready?: Exclude<Ready, 'ledger'>; check(e: Served, expectation: typeof expect): Promise<void> }

const exactMessage = async (e: Served) => (await post(e, exactBody('obsidian'))).json.choices[0]
const autoTool = async (e: Served) => (await post(e, toolsBody())).json.choices[0]
const redReply = async (e: Served) => (await post(e, visionBody({ url: RED }))).json.choices[0]
const trafficThenMetrics = async (e: Served): Promise<string> => {
  await post(e, exactBody('marzipan'))
  return metrics(e)
}

const CHECKS: Record<FaultName, FaultCheck> = {
  knob_ignored: {
    async check(e, x) {
      const page = await trafficThenMetrics(e)
      for (const name of [
        'radiance:engine_steps_held_total',
        'radiance:engine_prefill_chunks_capped_total',
        'radiance:prefix_hit_cut_tokens_total',
        'vllm:num_preemptions_total',
      ]) {
        x(sample(page, name), name).toBe('0.0')
      }
      x(sample(page, 'vllm:request_success_total', 'stop')).toBe('1.0')
    },
  },
  meter_absent: {
    async check(e, x) {
      const page = await trafficThenMetrics(e)
      x(page).not.toMatch(/engine_steps_held|prefill_chunks_capped|prefix_hit_cut/)
      x(sample(page, 'radiance:engine_steps_total')).not.toBe('0.0')
    },
  },
  meter_wrong_prefix: {
    async check(e, x) {
      const page = await trafficThenMetrics(e)
      x(page).not.toContain('radiance:engine_steps_held')
      x(sample(page, 'vllm:engine_steps_held_total')).toBe('1.0')
      x(sample(page, 'vllm:engine_prefill_chunks_capped_total')).toBe('2.0')
    },
  },
  ledger_mismatch: {
    launched: true,
    ready: 'ledger',
    async check(e, x) {
      const ledger = readFileSync(e.ledgerPath, 'utf8')
      x(ledger).toContain('--prefill-interleave 2 (default 0)')
      x(ledger).toContain('--busy-prefill-chunk 9 (default 0)')
      x(ledger).toContain('--checkpoint-policy always (default always)')
      x(ledger).toContain('--checkpoint-slots 19 [auto]')
      x(ledger).toContain('--stager-depth 3 (default 2)')
    },
  },
  help_missing_flag: {
    launched: true,
    ready: 'ledger',
    async check(e, x) {
      const help = await run('podman', ['exec', e.svc, 'radiance', '--help'], e.env)
      x(help.code).toBe(0)
      x(help.stdout).toContain('--stager-depth')
      x(help.stdout).not.toMatch(/--prefill-interleave|--busy-prefill-chunk|--checkpoint-policy|--checkpoint-slots/)
      // Byte for byte what the engine prints with the same fault: the shim's copy cannot drift from it.
      x(help).toEqual(await run(process.execPath, [ENGINE_ENTRY, '--fault', 'help_missing_flag', '--help']))
    },
  },
  health_no_fields: {
    async check(e, x) {
      x(await (await fetch(`${e.baseUrl}/health`)).json()).toEqual({ status: 'ok' })
    },
  },
  health_503_forever: {
    ready: 'models',
    async check(e, x) {
      await new Promise((r) => setTimeout(r, 50))
      x((await fetch(`${e.baseUrl}/health`)).status).toBe(503)
    },
  },
  health_hang: {
    ready: 'models',
    async check(e, x) {
      x(await noAnswerWithin(`${e.baseUrl}/health`, 300)).toBe(true)
    },
  },
  ledger_after_load: {
    launched: true,
    async check(e, x) {
      await until('the resolved lines', () => readFileSync(e.ledgerPath, 'utf8').includes('--stager-depth'))
      const log = readFileSync(e.ledgerPath, 'utf8')
      // Printed once the port answered and loading ended, not at boot: after the Starting server line.
      x(log.indexOf('--prefill-interleave 1')).toBeGreaterThan(log.indexOf('Starting server'))
      x(log.split('\n')[0]).toMatch(/radiance \S+ starting, model /)
    },
  },
  never_listen: {
    launched: true,
    ready: 'ledger',
    async check(e, x) {
      await new Promise((r) => setTimeout(r, 300))
      x(readFileSync(e.ledgerPath, 'utf8')).not.toContain('Starting server')
      await x(fetch(`${e.baseUrl}/health`, { signal: AbortSignal.timeout(1000) })).rejects.toThrow()
    },
  },
  exact_in_reasoning_only: {
    async check(e, x) {
      const choice = await exactMessage(e)
      x(choice).toMatchObject({ finish_reason: 'length', message: { content: null } })
      x(choice.message.reasoning_content).toContain('obsidian')
    },
  },
  think_in_content: {
    async check(e, x) {
      const choice = await exactMessage(e)
      x(choice.message.content).toMatch(/^<think>[\s\S]*<\/think>\n\nobsidian$/)
      x(choice.message).not.toHaveProperty('reasoning_content')
      x(choice.finish_reason).toBe('stop')
    },
  },
  tool_as_text: {
    async check(e, x) {
      const choice = await autoTool(e)
      x(choice).toMatchObject({ finish_reason: 'stop', message: { tool_calls: [] } })
      x(choice.message.content).toBe('<tool_call>{"name": "record_probe_token", "arguments": {"token": "quasar-7"}}</tool_call>')
    },
  },
  tool_args_invalid: {
    async check(e, x) {
      const args = (await autoTool(e)).message.tool_calls[0].function.arguments
      x(args).toBe('{"token": "quasar-7"')
      x(() => JSON.parse(args)).toThrow()
    },
  },
  tool_args_object: {
    async check(e, x) {
      x((await autoTool(e)).message.tool_calls[0].function.arguments).toEqual({ token: 'quasar-7' })
    },
  },
  no_tool_parser: {
    async check(e, x) {
      const auto = await post(e, toolsBody())
      x(auto.status).toBe(400)
      x(auto.json.error.message).toBe('"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set')
      x((await post(e, toolsBody({ tool_choice: 'required' }))).json.choices[0].message.tool_calls).toHaveLength(1)
    },
  },
  vision_wrong_colour: {
    async check(e, x) {
      const content = (await redReply(e)).message.content as string
      x(content).toMatch(/^\n\nThe square is \w+\.$/)
      x(content).not.toContain('red')
    },
  },
  vision_blind: {
    async check(e, x) {
      x((await redReply(e)).message.content).toBe('\n\nThe square is blue.')
    },
  },
  vision_length: {
    async check(e, x) {
      x(await redReply(e)).toMatchObject({ finish_reason: 'length', message: { content: null } })
    },
  },
  completions_hang: {
    async check(e, x) {
      const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(exactBody('juniper')) }
      x(await noAnswerWithin(`${e.baseUrl}/v1/chat/completions`, 300, init)).toBe(true)
    },
  },
  completions_truncated: {
    async check(e, x) {
      const res = await fetch(`${e.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        body: JSON.stringify(exactBody('juniper')),
        signal: AbortSignal.timeout(3000),
      })
      x(res.status).toBe(200)
      x(Number(res.headers.get('content-length'))).toBeGreaterThan(100)
      await x(res.text()).rejects.toThrow()
    },
  },
  completions_empty: {
    async check(e, x) {
      const res = await fetch(`${e.baseUrl}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(exactBody('juniper')) })
      x(res.status).toBe(200)
      x(await res.text()).toBe('')
    },
  },
  completions_non_json: {
    async check(e, x) {
      const res = await fetch(`${e.baseUrl}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(exactBody('juniper')) })
      x(res.status).toBe(200)
      x(res.headers.get('content-type')).toContain('text/html')
      x(await res.text()).toBe('<html>upstream error</html>')
    },
  },
  completions_error_flat: {
    async check(e, x) {
      const { status, json } = await post(e, exactBody('juniper'))
      x(status).toBe(500)
      x(json).toEqual({ object: 'error', message: 'engine overloaded', type: 'InternalServerError', param: null, code: 500 })
    },
  },
  completions_error_nested: {
    async check(e, x) {
      const { status, json } = await post(e, exactBody('juniper'))
      x(status).toBe(500)
      x(json).toEqual({ error: { message: 'engine overloaded', type: 'InternalServerError', param: null, code: 500 } })
    },
  },
  metrics_malformed: {
    async check(e, x) {
      const lines = (await metrics(e)).split('\n')
      const at = lines.indexOf(GARBAGE_LINE)
      x(at).toBeGreaterThan(10)
      x(at).toBeLessThan(lines.length - 10)
      x(lines).toContain('# TYPE radiance:engine_steps_held_total counter')
      x(lines).toContain('# TYPE vllm:num_requests_running gauge')
    },
  },
  metrics_nan: {
    async check(e, x) {
      const page = await trafficThenMetrics(e)
      x(sample(page, 'radiance:engine_steps_held_total')).toBe('NaN')
      x(sample(page, 'radiance:prefix_hit_cut_tokens_total', 'no_snapshot')).toBe('NaN')
    },
  },
  metrics_negative: {
    async check(e, x) {
      const page = await trafficThenMetrics(e)
      x(sample(page, 'radiance:engine_steps_held_total')).toBe('-1.0')
      x(sample(page, 'radiance:engine_prefill_chunks_capped_total')).toBe('-1.0')
    },
  },
  metrics_redirect: {
    async check(e, x) {
      const res = await fetch(`${e.baseUrl}/metrics`, { redirect: 'manual' })
      x(res.status).toBe(307)
      x(res.headers.get('location')).toBe('/metrics/')
      x(await metrics(e)).toContain('# TYPE vllm:num_requests_running gauge')
    },
  },
  metrics_huge: {
    launched: true,
    async check(e, x) {
      const page = await metrics(e)
      x(page.length).toBeGreaterThan(25_000_000)
      x(page).toContain('# TYPE radiance:engine_steps_held_total counter')
    },
  },
  no_traffic_counters: {
    async check(e, x) {
      const page = await trafficThenMetrics(e)
      x(sample(page, 'vllm:request_success_total', 'stop')).toBe('0.0')
      x(sample(page, 'vllm:prompt_tokens_total')).toBe('0.0')
      x(sample(page, 'vllm:generation_tokens_total')).toBe('0.0')
      x(sample(page, 'vllm:num_requests_running')).toBe('0.0')
      x(sample(page, 'radiance:engine_steps_held_total')).toBe('1.0')
    },
  },
  // issue 10: probes, ledger, secrets
  exact_sentence: {
    async check(e, x) {
      const choice = await exactMessage(e)
      x(choice).toMatchObject({ finish_reason: 'stop', message: { content: '\n\nI will not say obsidian.' } })
    },
  },
  ledger_echo_only: {
    launched: true,
    async check(e, x) {
      const ledger = readFileSync(e.ledgerPath, 'utf8')
      x(ledger).toMatch(/^\+ exec radiance serve --served-model-name radiance-ref-8b .*--prefill-interleave 1 --busy-prefill-chunk 8/)
      x(ledger).not.toContain('--fault')
      x(ledger).not.toContain('(default')
      x(ledger).not.toContain('[ledger.py:')
    },
  },
  auth_echo: {
    launched: true,
    async check(e, x) {
      const plain = await post(e, exactBody('obsidian'))
      x(plain.status).toBe(200)
      const e2 = await launch({ svc: 'svc-auth-echo-key', args: [...ARMED, '--api-key', 'right'], faults: ['auth_echo'] })
      try {
        await e2.waitReady()
        const res = await fetch(`${e2.baseUrl}/v1/models`, { headers: { authorization: 'Bearer wrong-token-1234567890' } })
        x(res.status).toBe(401)
        const text = await res.text()
        x(text.match(/Bearer wrong-token-1234567890/g)).toHaveLength(3)
      } finally {
        await e2.stop()
      }
    },
  },
  ledger_huge: {
    launched: true,
    async check(e, x) {
      x(statSync(e.ledgerPath).size).toBeGreaterThan(HUGE_LOG_BYTES)
      const head = await run('sh', ['-c', `head -n 8 ${e.ledgerPath}`])
      x(head.stdout).toContain('--prefill-interleave 2 (default 0)')
      const tail = await run('podman', ['logs', '--tail', '8', e.svc], e.env)
      x(tail.code).toBe(0)
      x(tail.stdout.split('\n').filter(Boolean)).toHaveLength(8)
      x(tail.stdout).toContain('--prefill-interleave 1 (default 0)')
      x(tail.stdout).toContain('Starting server')
      const bad = await run('podman', ['logs', '--tail=x', e.svc], e.env)
      x(bad.code).toBe(125)
    },
  },
  // issue 10: meter
  meter_foreign_model: {
    async check(e, x) {
      const page = await trafficThenMetrics(e)
      x(sample(page, 'radiance:engine_steps_held_total', 'model_name="radiance-ref-8b"')).toBe('0.0')
      x(sample(page, 'radiance:engine_steps_held_total', 'model_name="radiance-other-70b"')).toBe('1.0')
      x(page).toContain('radiance:engine_steps_held_total{engine="1",model_name="radiance-other-70b"} 1.0')
    },
  },
  meter_reset: {
    async check(e, x) {
      x(sample(await metrics(e), 'radiance:engine_steps_held_total')).toBe('1000.0')
      const page = await trafficThenMetrics(e)
      x(sample(page, 'radiance:engine_steps_held_total')).toBe('1.0')
      x(sample(page, 'radiance:engine_prefill_chunks_capped_total')).toBe('2.0')
    },
  },
  meter_inf: {
    async check(e, x) {
      const page = await trafficThenMetrics(e)
      x(sample(page, 'radiance:engine_steps_held_total')).toBe('+Inf')
      x(sample(page, 'radiance:prefix_hit_cut_tokens_total', 'no_snapshot')).toBe('+Inf')
    },
  },
  meter_duplicate: {
    async check(e, x) {
      const lines = (await trafficThenMetrics(e)).split('\n')
      const held = lines.filter((l) => l.startsWith('radiance:engine_steps_held_total{'))
      x(held).toEqual([
        'radiance:engine_steps_held_total{engine="0",model_name="radiance-ref-8b"} 1.0',
        'radiance:engine_steps_held_total{engine="0",model_name="radiance-ref-8b"} 1.0',
      ])
    },
  },
  meter_not_counter: {
    async check(e, x) {
      const lines = (await trafficThenMetrics(e)).split('\n')
      x(lines).toContain('# TYPE radiance:engine_steps_held_total gauge')
      x(lines).not.toContain('# TYPE radiance:engine_steps_held_total counter')
      x(lines).toContain('# TYPE vllm:request_success_total counter')
    },
  },
  meter_process_restarted: {
    async check(e, x) {
      const start = (page: string) =>
        Number(
          page
            .split('\n')
            .find((l) => l.startsWith('process_start_time_seconds '))!
            .split(' ')[1],
        )
      const first = start(await metrics(e))
      // The first scrape reads the serving process's real start (served in this process: this
      // process's own, read from /proc as prometheus_client reads it; issue 20): in the past, and no
      // earlier than this process began.
      x(first).toBe(processStartSeconds())
      x(first * 1000).toBeLessThanOrEqual(Date.now())
      x(first * 1000).toBeGreaterThan(Date.now() - process.uptime() * 1000 - 5_000)
      x(start(await metrics(e))).toBeCloseTo(first + 60, 3)
    },
  },
  meter_preloaded: {
    async check(e, x) {
      x(sample(await metrics(e), 'radiance:engine_steps_held_total')).toBe('500.0')
      const page = await trafficThenMetrics(e)
      x(sample(page, 'radiance:engine_steps_held_total')).toBe('501.0')
      x(page).toMatch(/\nprocess_start_time_seconds \d\.\d+e\+09\n/)
    },
  },
  tools_need_jinja: {
    async check(e, x) {
      const { status, json } = await post(e, toolsBody())
      x(status).toBe(500)
      x(json).toEqual({ error: { code: 500, message: 'tools param requires --jinja flag', type: 'server_error' } })
      x((await post(e, exactBody('obsidian'))).status).toBe(200)
    },
  },
  exact_abort: {
    async check(e, x) {
      x(await exactMessage(e)).toMatchObject({ finish_reason: 'abort', message: { content: '' } })
    },
  },
  exact_refusal: {
    async check(e, x) {
      x(await exactMessage(e)).toMatchObject({ finish_reason: 'stop', message: { content: null, refusal: "I can't help with that." } })
    },
  },
  completions_429: {
    async check(e, x) {
      const first = await fetch(`${e.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(exactBody('obsidian')),
      })
      x(first.status).toBe(429)
      x(first.headers.get('retry-after')).toBe('1')
      await first.text()
      x((await post(e, exactBody('obsidian'))).status).toBe(429)
      x((await post(e, exactBody('obsidian'))).status).toBe(200)
    },
  },
  completions_429_forever: {
    async check(e, x) {
      for (let i = 0; i < 4; i++) x((await post(e, exactBody('obsidian'))).status).toBe(429)
    },
  },
  health_redirect: {
    async check(e, x) {
      const res = await fetch(`${e.baseUrl}/health`, { redirect: 'manual' })
      x(res.status).toBe(307)
      x(res.headers.get('location')).toBe('/health/')
      x(await (await fetch(`${e.baseUrl}/health`)).json()).toMatchObject({ status: 'ok', queue_cap: 256 })
    },
  },
  start_time_other: {
    async check(e, x) {
      // In-process: the engine's own start time is this process's, as prometheus_client computes it.
      const page = await metrics(e)
      const started = Number(/\nprocess_start_time_seconds (\S+)\n/.exec(page)?.[1])
      x(started).toBeCloseTo(processStartSeconds() - 3600, 2)
    },
  },
  no_start_time: {
    async check(e, x) {
      const page = await trafficThenMetrics(e)
      x(page).not.toMatch(/^process_start_time_seconds /m)
      x(page).not.toContain('# TYPE process_start_time_seconds')
      x(sample(page, 'radiance:engine_steps_held_total')).toBe('1.0')
    },
  },
  meter_lazy: {
    async check(e, x) {
      const before = await metrics(e)
      x(before).toContain('# TYPE radiance:engine_steps_held_total counter')
      x(sample(before, 'radiance:engine_steps_held_total')).toBeUndefined()
      x(sample(before, 'radiance:engine_steps_held_created')).toBeUndefined()
      const after = await trafficThenMetrics(e)
      x(sample(after, 'radiance:engine_steps_held_total')).toBe('1.0')
      x(sample(after, 'radiance:engine_steps_held_created')).toMatch(/e\+09$/)
      // Each labelled child on its own: the reason that was counted is printed, the other is not.
      x(sample(after, 'radiance:prefix_hit_cut_tokens_total', 'reason="no_snapshot"')).toMatch(/^[1-9]\d*\.0$/)
      x(sample(after, 'radiance:prefix_hit_cut_tokens_total', 'reason="evicted"')).toBeUndefined()
    },
  },
  metrics_exemplar_text: {
    async check(e, x) {
      const res = await fetch(`${e.baseUrl}/metrics`)
      x(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
      const lines = (await res.text()).split('\n')
      const meter = lines.filter((l) => l.startsWith('radiance:engine_steps_held_total'))
      x(meter.length).toBeGreaterThan(0)
      x(meter.every((l) => l.endsWith(TEXT_EXEMPLAR))).toBe(true)
      x(lines.filter((l) => l.includes(' # {'))).toHaveLength(4)
    },
  },
  metrics_gzip: {
    async check(e, x) {
      const { request } = await import('node:http')
      const { gunzipSync } = await import('node:zlib')
      const raw = await new Promise<{ encoding: string | undefined; body: Buffer }>((resolve, reject) => {
        request(`${e.baseUrl}/metrics`, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c: Buffer) => chunks.push(c))
          res.on('end', () => resolve({ encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }))
        })
          .on('error', reject)
          .end()
      })
      x(raw.encoding).toBe('gzip')
      x(gunzipSync(raw.body).toString('utf8')).toContain('radiance:engine_steps_held_total')
      x(await metrics(e)).toContain('radiance:engine_steps_held_total')
    },
  },
  reply_model_fallback: {
    async check(e, x) {
      const { json } = await post(e, exactBody('obsidian'))
      x(json).toMatchObject({ model: 'fallback/gpt-4o-mini', choices: [{ message: { content: '\n\nobsidian' } }] })
    },
  },
  response_cache: {
    async check(e, x) {
      const [a, b] = [(await post(e, exactBody('obsidian'))).json, (await post(e, toolsBody())).json]
      x(a.id).toBe(b.id)
      x(a.created).toBeLessThan(Date.now() / 1000 - 86_000)
      x(a.model).toBe(MODEL)
    },
  },
  reply_created_stale: {
    async check(e, x) {
      const [a, b] = [(await post(e, exactBody('obsidian'))).json, (await post(e, exactBody('obsidian'))).json]
      x(a.id).not.toBe(b.id)
      x(a.created).toBeLessThan(Date.now() / 1000 - 86_000)
    },
  },
  served_aliases: {
    ready: 'models',
    async check(e, x) {
      const list = (await (await fetch(`${e.baseUrl}/v1/models`)).json()) as { data: Array<{ id: string; root: string }> }
      x(list.data.map((m) => [m.id, m.root])).toEqual([
        [MODEL, MODEL],
        [`${MODEL}-alias`, MODEL],
      ])
      const { status, json } = await post(e, { ...exactBody('obsidian'), model: `${MODEL}-alias` })
      x(status).toBe(200)
      x(json.model).toBe(MODEL)
      x((await post(e, { ...exactBody('obsidian'), model: 'other' })).status).toBe(404)
    },
  },
  vision_negated: {
    async check(e, x) {
      x((await redReply(e)).message.content).toBe(`\n\nIt is not red; it is green.`)
    },
  },
  health_bad_location: {
    ready: 'models',
    async check(e, x) {
      const res = await fetch(`${e.baseUrl}/health`, { redirect: 'manual' })
      x(res.status).toBe(307)
      const port = new URL(e.baseUrl).port
      x(res.headers.get('location')).toBe(`http://127.0.0.1:${port}:${port}/health/`)
      await x(fetch(`${e.baseUrl}/health`)).rejects.toThrow()
    },
  },
  models_redirect_other_origin: {
    async check(e, x) {
      const res = await fetch(`${e.baseUrl}/v1/models`, { redirect: 'manual' })
      x(res.status).toBe(307)
      const other = res.headers.get('location')!
      x(new URL(other).origin).not.toBe(new URL(e.baseUrl).origin)
      x(
        ((await (await fetch(other, { headers: { authorization: 'Bearer sk-x' } })).json()) as { data: Array<{ id: string }> }).data[0]!.id,
      ).toBe(MODEL)
      await fetch(other)
      x(((await (await fetch(`${e.baseUrl}/stats`)).json()) as { other_origin: unknown }).other_origin).toEqual({
        requests: 2,
        with_authorization: 1,
      })
    },
  },
  vision_text_only: {
    async check(e, x) {
      const refused = await post(e, visionBody({ url: RED }))
      x(refused.status).toBe(400)
      x(refused.json.error).toEqual({ message: `${MODEL} is not a multimodal model None`, type: 'BadRequestError', param: null, code: 400 })
      // Only a request with an image is refused: text and tools answer as usual.
      x((await post(e, toolsBody())).json.choices[0].message.tool_calls).toHaveLength(1)
    },
  },
  metrics_guarded: {
    async check(e, x) {
      x((await fetch(`${e.baseUrl}/metrics`)).status).toBe(401)
      x((await fetch(`${e.baseUrl}/metrics`, { method: 'HEAD' })).status).toBe(401)
      const ok = await fetch(`${e.baseUrl}/metrics`, { headers: { authorization: 'Bearer anything' } })
      x(ok.status).toBe(200)
      x(await ok.text()).toContain('radiance:engine_steps_held_total')
    },
  },
}

async function until(what: string, ok: () => Promise<boolean> | boolean, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (
      await Promise.resolve()
        .then(ok)
        .catch(() => false)
    )
      return
    await new Promise((r) => setTimeout(r, 30))
  }
  throw new Error(`timed out waiting for ${what}`)
}

describe('faults', () => {
  test.concurrent.for(FAULTS)('$name: $description', async ({ name }, { expect: x }) => {
    const fault = CHECKS[name]
    const ready = fault.ready ?? 'health'
    const e = fault.launched
      ? await launch({ svc: `svc-${name}`, args: ARMED, faults: [name] })
      : await serveInProcess([...ARMED, '--fault', name])
    try {
      if (ready === 'health')
        await until('/health 200', async () => (await fetch(`${e.baseUrl}/health`, { signal: AbortSignal.timeout(1000) })).status === 200)
      if (ready === 'models') await until('/v1/models 200', async () => (await fetch(`${e.baseUrl}/v1/models`)).status === 200)
      if (fault.launched) {
        const launched = e as EngineHandle
        if (ready === 'ledger') await until('the ledger', () => readFileSync(launched.ledgerPath, 'utf8').includes('--stager-depth'))
        await fault.check(launched, x)
      } else {
        await fault.check(e, x)
      }
    } finally {
      await e.stop()
    }
  })
})
