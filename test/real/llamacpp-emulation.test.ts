// The reference engine's llama.cpp emulation (engine/profiles/llamacpp*.ts) against the real
// llama-server's corpus (fixtures/real/llama.cpp/de3ff81/): started with each captured boot's very
// argv and env, it prints the lines the llama.cpp profile reads in the real shapes (the prefix, the
// boot marker, each resolved line, the warn: line), with only numbers allowed to differ; its
// --help blocks are the real ones byte for byte; /health while loading, /metrics' families and
// headers, /props, /v1/models and the refusals answer as the real server does. So the copy the
// other tests verify cannot drift from the original again.
import { afterAll, describe, expect, test } from 'vitest'
import { LLAMA_OPTIONS } from '../../engine/profiles/llamacpp-args.ts'
import { builtinProfile } from '../../helpers/profiles/load.ts'
import { parsePrometheusText } from '../../helpers/prom/parse.ts'
import { messageOf } from '../../helpers/steps/resolved/log-sources.ts'
import { exitOf, type InProcessProfile, serveProfile } from '../support/profile-in-process.ts'
import { llamaCommands, readLlamaCorpus as read } from '../support/real-corpus.ts'

const commands = { files: llamaCommands() }
const engine = builtinProfile('llama.cpp').engine
const prefix = new RegExp(`^(?:${engine.log.prefix})`)
/** The messages the profile reads: its boot marker and every log source's marker. */
const READ = [engine.log.boot!, ...engine.resolved.filter((s) => s.marker).map((s) => s.marker!)].map((m) => new RegExp(`^(?:${m})`))

/** A line with what legitimately varies taken out: digits (times, counts, sizes, ports) and the model's path. */
const skeleton = (line: string): string =>
  line
    .replace(/'[^']*\.gguf'/g, "'MODEL'")
    .replace(/\d+(?:\.\d+)?/g, 'N')
    .trimEnd()

/** The lines of a log the profile reads (and the parser's warn: lines), as skeletons. */
function readLines(log: readonly string[]): string[] {
  const out = new Set<string>()
  for (const line of log) {
    if (line.startsWith('warn: ')) out.add(skeleton(line))
    const message = messageOf(line, prefix)
    if (message !== undefined && READ.some((re) => re.test(message))) out.add(skeleton(line))
  }
  return [...out].sort()
}

const served: InProcessProfile[] = []
afterAll(async () => Promise.all(served.map((e) => e.stop())))
async function emulate(file: string, unavailableMs = 0): Promise<InProcessProfile> {
  const made = commands.files.find((f) => f.file === file)!
  // The words in brackets say what was asked of the server ("(GET /metrics)"), not its argv.
  const argv = made.argv
    .slice(1)
    .filter((w) => !w.startsWith('('))
    .map((w) => (w === '<a free port>' ? '0' : w))
  const e = await serveProfile('llama.cpp', argv, { env: made.env, unavailableMs })
  served.push(e)
  return e
}

describe('the emulation prints what the real llama-server prints (the lines the profile reads)', () => {
  const boots = commands.files.filter((f) => /^boot-.*\.log$/.test(f.file) && f.file !== 'boot-loading.log').map((f) => f.file)
  test('the corpus has every configuration', () => {
    expect(boots.length).toBeGreaterThanOrEqual(9)
  })
  for (const file of boots) {
    test(file, async () => {
      const e = await emulate(file)
      const real = readLines(read(file).split('\n'))
      expect(real.length, `${file}: the real log has lines the profile reads`).toBeGreaterThan(1)
      expect(readLines(e.log)).toEqual(real)
    })
  }
})

describe('the emulation answers as the real llama-server does', () => {
  test('--help: each option block the emulation prints is the real one, byte for byte, and --help goes to stdout', () => {
    const help = read('help.txt')
    for (const o of LLAMA_OPTIONS) expect(help, o.args.join(', ')).toContain(`\n${o.block}\n`)
    const out = exitOf('llama.cpp', ['--help'])!
    expect(out.code).toBe(0)
    for (const o of LLAMA_OPTIONS) expect(out.stdout).toContain(o.block)
  })
  test('an unknown flag: the real refusal', () => {
    expect(exitOf('llama.cpp', ['--draft', '4'])!.stderr).toMatch(/\nerror: invalid argument: --draft\n$/)
  })
  test('/health while loading: the real 503 body and type; once loaded, {"status":"ok"}', async () => {
    const e = await emulate('boot-parallel-2.log', 60_000)
    const res = await fetch(`${e.baseUrl}/health`)
    const [head, body] = read('health-loading.txt').split('\n\n') as [string, string]
    expect(res.status).toBe(503)
    expect(`Content-Type: ${res.headers.get('content-type')}`).toBe(/^Content-Type: .*$/m.exec(head)![0])
    expect(await res.text()).toBe(body)
    const ok = await emulate('boot-parallel-2.log')
    expect(await (await fetch(`${ok.baseUrl}/health`)).text()).toBe(read('health.txt').split('\n\n')[1])
  })
  test('/metrics: the real families (names, types, help) and Content-Type; 501 without --metrics, the real body', async () => {
    const e = await emulate('boot-parallel-2.log')
    const res = await fetch(`${e.baseUrl}/metrics`)
    const families = (text: string) =>
      parsePrometheusText(text)
        .families.map((f) => `${f.name} ${f.type} ${f.help}`)
        .sort()
    expect(families(await res.text())).toEqual(families(read('metrics.txt')))
    expect(`Content-Type: ${res.headers.get('content-type')}`).toBe(/^Content-Type: .*$/m.exec(read('metrics.headers'))![0])
    expect(res.headers.get('process-start-time-unix')).toMatch(/^\d+$/)
    const bare = await emulate('metrics-disabled.txt')
    const refused = await fetch(`${bare.baseUrl}/metrics`)
    expect(refused.status).toBe(501)
    expect(await refused.text()).toBe(read('metrics-disabled.txt').split('\n\n')[1])
  })
  test('/props and /v1/models: the real keys', async () => {
    const e = await emulate('boot-parallel-2.log')
    const props = (await (await fetch(`${e.baseUrl}/props`)).json()) as Record<string, unknown>
    const realProps = JSON.parse(read('props.json')) as Record<string, unknown>
    for (const key of Object.keys(props)) expect(Object.keys(realProps), key).toContain(key)
    expect(props.total_slots).toBe(realProps.total_slots)
    const models = (await (await fetch(`${e.baseUrl}/v1/models`)).json()) as { data: Record<string, unknown>[] }
    const realModels = JSON.parse(read('v1-models.json')) as { data: Record<string, unknown>[] }
    expect(Object.keys(models).sort()).toEqual(Object.keys(realModels).sort())
    expect(Object.keys(models.data[0]!).sort()).toEqual(Object.keys(realModels.data[0]!).sort())
    expect(Object.keys(models.data[0]!.meta as object).sort()).toEqual(Object.keys(realModels.data[0]!.meta as object).sort())
  })
  test('an image to a server without --mmproj: the real 500 and body', async () => {
    const e = await emulate('boot-parallel-2.log')
    const res = await fetch(`${e.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AA==' } }] }],
      }),
    })
    expect(res.status).toBe(500)
    expect(await res.text()).toBe(read('chat-image.json'))
  })
  test("a prompt past a slot's context: the real 400, its fields and wording", async () => {
    const e = await emulate('boot-parallel-2.log')
    const res = await fetch(`${e.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'w '.repeat(40_000) }] }),
    })
    const real = JSON.parse(read('chat-too-long.json')) as { error: Record<string, unknown> }
    const got = (await res.json()) as { error: Record<string, unknown> }
    expect(res.status).toBe(400)
    expect(Object.keys(got.error)).toEqual(Object.keys(real.error))
    expect(skeleton(String(got.error.message))).toBe(skeleton(String(real.error.message)))
    expect(got.error.type).toBe(real.error.type)
  })
  test('the prompt cache: shared-prefix traffic moves prompt_tokens_cached_total, and --no-cache-prompt keeps it at 0 (as the real pages say)', async () => {
    const value = (text: string) => parsePrometheusText(text).samples('llamacpp:prompt_tokens_cached_total')[0]!.value
    expect(value(read('metrics.txt'))).toBeGreaterThan(0)
    expect(value(read('metrics-no-cache-prompt.txt'))).toBe(0)
    for (const [file, moved] of [
      ['boot-parallel-2.log', true],
      ['boot-no-cache-prompt.log', false],
    ] as const) {
      const e = await emulate(file)
      for (const tail of ['one', 'two'])
        await fetch(`${e.baseUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ max_tokens: 4, messages: [{ role: 'user', content: `${'kestrel obsidian '.repeat(40)}${tail}` }] }),
        }).then((r) => r.text())
      const cached = value(await (await fetch(`${e.baseUrl}/metrics`)).text())
      if (moved) expect(cached).toBeGreaterThan(0)
      else expect(cached).toBe(0)
    }
  })
})
