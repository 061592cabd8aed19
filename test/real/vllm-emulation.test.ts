// The reference engine's vLLM emulation (engine/profiles/vllm*.ts) against what the real build
// printed and served (fixtures/real/vllm/9aaf83ef5), started with the corpus's own command line:
// the skeletons of the log lines the profile reads, the /metrics families (name, type, label keys)
// and headers, /health, the JSON key sets of /v1/models and a chat reply, the 400 bodies for
// tools and an image on a text-only model, and the --help entries of the knobs. Only what
// legitimately varies is normalized (numbers, times, pids, ports, ids, model paths), so the copy
// cannot drift from the original again.
import { afterAll, describe, expect, test } from 'vitest'
import { builtinProfile } from '../../helpers/profiles/load.ts'
import { parsePrometheusText } from '../../helpers/prom/parse.ts'
import { findHelpEntry } from '../../helpers/steps/help/parse.ts'
import { messageOf } from '../../helpers/steps/resolved/log-sources.ts'
import { capturedAnswer, corpusDir, corpusText } from '../support/corpus.ts'
import { exitOf, serveProfile, type InProcessProfile } from '../support/profile-in-process.ts'

const DIR = corpusDir('vllm', '9aaf83ef5')
const real = (file: string) => corpusText(DIR, file)
const { engine } = builtinProfile('vllm')
const PREFIX = new RegExp(`^(?:${engine.log.prefix})`)
/** The corpus's server: `vllm serve <tiny> --load-format dummy --port 8011 …` (fixtures/real/vllm/9aaf83ef5/README.md). */
const ARGV = [
  'serve',
  '/srv/real/tiny',
  '--load-format',
  'dummy',
  '--port',
  '8011',
  '--host',
  '127.0.0.1',
  '--served-model-name',
  'tiny',
  '--max-model-len',
  '1024',
  '--dtype',
  'bfloat16',
  '--max-num-seqs',
  '8',
  '--enable-prefix-caching',
]
/** The real help output without the warning vLLM logs first on a machine without Triton. */
const realHelp = (file: string) => real(file).replace(/^INFO .*Triton not installed.*\n/, '')

let served: InProcessProfile | undefined
afterAll(async () => served?.stop())
/** The emulation as the corpus's server, its model text-only (the corpus's tiny Llama takes no images). */
const emulated = async () => (served ??= await serveProfile('vllm', ARGV, { env: { REF_TEXT_ONLY_MODEL: '1' } }))

/** A line's skeleton: the pid, the date and time, and numbers in the message made N. */
const skeleton = (line: string) =>
  line
    .replace(/pid=\d+/, 'pid=N')
    .replace(/\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?/, 'MM-DD hh:mm:ss')
    .replace(/\(v[^)]*\) with config/, '(vX) with config')
/** The first line carrying `marker`, as its skeleton up to and including the marker. */
const head = (log: readonly string[], marker: RegExp) => {
  const line = log.find((l) => marker.test(messageOf(l, PREFIX) ?? ''))
  if (!line) return undefined
  const m = marker.exec(messageOf(line, PREFIX)!)!
  return skeleton(line.slice(0, line.length - messageOf(line, PREFIX)!.length + m[0].length))
}
const message = (log: readonly string[], marker: RegExp) => {
  const line = log.find((l) => marker.test(messageOf(l, PREFIX) ?? ''))
  return line === undefined ? undefined : messageOf(line, PREFIX)!.replace(marker, '')
}
/** The top-level keys of the engine config line, in order (values may hold commas and nested parentheses). */
function configKeys(config: string): string[] {
  const keys: string[] = []
  let depth = 0
  let quote: string | null = null
  let start = 0
  for (let i = 0; i <= config.length; i++) {
    const c = config[i]
    if (quote) {
      if (c === quote) quote = null
      continue
    }
    if (c === "'" || c === '"') quote = c
    else if (c === '(' || c === '[' || c === '{' || c === '<') depth++
    else if (c === ')' || c === ']' || c === '}' || c === '>') depth--
    else if ((c === ',' && depth === 0) || c === undefined) {
      keys.push(config.slice(start, i).trim().split('=')[0]!)
      start = i + 1
    }
  }
  return keys
}
/** Every key path of a JSON value (arrays read by their first element). */
function keyPaths(v: unknown, at = ''): string[] {
  if (Array.isArray(v)) return v.length === 0 ? [`${at}[]`] : keyPaths(v[0], `${at}[]`)
  if (v === null || typeof v !== 'object') return [at]
  return Object.entries(v).flatMap(([k, x]) => [`${at}.${k}`, ...keyPaths(x, `${at}.${k}`)])
}
/** The families of a page as name, type and label keys (`le` and `quantile` aside), for prometheus_client's and vLLM's own. */
function families(text: string): string[] {
  const page = parsePrometheusText(text)
  expect(page.errors).toEqual([])
  return page.families
    .filter((f) => /^(vllm:|process_|python_)/.test(f.name))
    .map((f) => {
      const keys = [...new Set(f.samples.flatMap((s) => Object.keys(s.labels)))].filter((k) => k !== 'le').sort()
      return `${f.name} ${f.type} {${keys.join(',')}}`
    })
    .sort()
}

describe('the vLLM emulation against real vLLM 9aaf83ef5: the startup log', () => {
  test('the lines the profile reads have the real skeleton: process tag, level, file and line, marker', async () => {
    const e = await emulated()
    const log = real('live/startup-and-serve.log').split('\n')
    const args = /^non-default args: /
    const config = new RegExp(`^${engine.resolved.find((s) => s.id === 'engine-config')!.marker}`)
    expect(head(e.log, args)).toBe(head(log, args))
    expect(head(e.log, args)).toBe('(APIServer pid=N) INFO MM-DD hh:mm:ss [utils.py:240] non-default args: ')
    expect(head(e.log, config)).toBe(head(log, config))
    // The boot marker is printed once per boot, in the emulation as in the real log.
    const boot = new RegExp(`^${engine.log.boot}`)
    expect(e.log.filter((l) => boot.test(messageOf(l, PREFIX) ?? ''))).toHaveLength(1)
  })

  test('non-default args is the very dict the real build printed for the same command line', async () => {
    const e = await emulated()
    const log = real('live/startup-and-serve.log').split('\n')
    expect(message(e.log, /^non-default args: /)).toBe(message(log, /^non-default args: /))
  })

  test('the engine config line has the real keys in the real order, and the same values for the knobs it proves', async () => {
    const e = await emulated()
    const log = real('live/startup-and-serve.log').split('\n')
    const marker = new RegExp(`^${engine.resolved.find((s) => s.id === 'engine-config')!.marker}`)
    const ours = message(e.log, marker)!
    const theirs = message(log, marker)!
    expect(configKeys(ours)).toEqual(configKeys(theirs))
    for (const part of [
      'enable_prefix_caching=True',
      'kv_cache_dtype=auto',
      'max_seq_len=1024',
      'dtype=torch.bfloat16',
      'load_format=dummy',
      'served_model_name=tiny',
      "model='/srv/real/tiny'",
    ]) {
      expect(theirs).toContain(part)
      expect(ours).toContain(part)
    }
  })

  test("every vLLM record the emulation prints is one of the profile's grammar, under a process tag the real build uses", async () => {
    const e = await emulated()
    const tagOf = (l: string) => /^\((\w+) pid=/.exec(l)?.[1]
    const realTags = new Set(real('live/startup-and-serve.log').split('\n').map(tagOf))
    const records = e.log.filter((l) => /^\(\w+ pid=\d+\) (INFO|WARNING) \d/.test(l))
    expect(records.filter((l) => messageOf(l, PREFIX) === undefined)).toEqual([])
    for (const l of records) expect(realTags, l).toContain(tagOf(l))
  })
})

describe('the vLLM emulation against real vLLM 9aaf83ef5: the endpoints', () => {
  test('/metrics: the same families (name, type, label keys) and the same content type', async () => {
    const e = await emulated()
    const res = await fetch(`${e.baseUrl}/metrics`)
    expect(res.headers.get('content-type')).toBe(capturedAnswer(real('live/metrics.headers')).headers['content-type'])
    expect(families(await res.text())).toEqual(families(real('live/metrics.txt')))
  })

  test("/metrics: cache_config_info's labels are the real ones, each with the real value for the same command line", async () => {
    const e = await emulated()
    const info = (text: string) => parsePrometheusText(text).samples('vllm:cache_config_info')[0]!.labels
    expect(info(await (await fetch(`${e.baseUrl}/metrics`)).text())).toEqual(info(real('live/metrics.txt')))
  })

  test('/health: an empty 200 without a content type', async () => {
    const e = await emulated()
    const res = await fetch(`${e.baseUrl}/health`)
    const theirs = capturedAnswer(real('live/health.txt'))
    expect([res.status, await res.text(), res.headers.get('content-type')]).toEqual([theirs.status, theirs.body, null])
  })

  test('/v1/models: the same key set, and the same served name and max_model_len', async () => {
    const e = await emulated()
    const ours = (await (await fetch(`${e.baseUrl}/v1/models`)).json()) as { data: Array<Record<string, unknown>> }
    const theirs = JSON.parse(capturedAnswer(real('live/v1-models.txt')).body)
    expect(keyPaths(ours)).toEqual(keyPaths(theirs))
    expect([ours.data[0]!.id, ours.data[0]!.root, ours.data[0]!.max_model_len]).toEqual([theirs.data[0].id, theirs.data[0].root, 1024])
  })

  test("/server_info: 404 with FastAPI's body without VLLM_SERVER_DEV_MODE=1", async () => {
    const e = await emulated()
    const res = await fetch(`${e.baseUrl}/server_info?config_format=json`)
    const theirs = capturedAnswer(real('live/server_info.txt'))
    expect([res.status, await res.text()]).toEqual([theirs.status, theirs.body])
  })

  test('a chat reply has the real key set', async () => {
    const e = await emulated()
    const res = await fetch(`${e.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'Say hello' }], max_tokens: 8 }),
    })
    expect(res.status).toBe(200)
    expect(keyPaths(await res.json())).toEqual(keyPaths(JSON.parse(real('live/chat.json'))))
  })

  test.each([
    [
      'tools with tool_choice auto, no --enable-auto-tool-choice',
      'live/chat-tools.json',
      { tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }], tool_choice: 'auto' },
    ],
    ['an image for a text-only model', 'live/chat-image.json', { image: true }],
  ])('%s: the real 400 body', async (_what, file, extra) => {
    const e = await emulated()
    const content = (extra as { image?: boolean }).image
      ? [
          { type: 'text', text: 'What colour?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ]
      : 'Call f'
    const { image: _image, ...rest } = extra as Record<string, unknown>
    const res = await fetch(`${e.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content }], max_tokens: 8, ...rest }),
    })
    expect([res.status, await res.text()]).toEqual([400, real(file)])
  })

  test('max_tokens that leaves no room for the prompt: the 400 the real log shows, in its words', async () => {
    const e = await emulated()
    const prompt = 'Reply with exactly this one word and nothing else: kestrel'
    const res = await fetch(`${e.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: prompt }], max_tokens: 1024 }),
    })
    const body = (await res.json()) as { error: { message: string; code: number } }
    expect([res.status, body.error.code]).toEqual([400, 400])
    const logged = /VLLMValidationError: (This model's maximum context length is .*)$/m.exec(real('live/startup-and-serve.log'))![1]!
    const shape = (m: string) => m.replace(/\d+/g, 'N')
    expect(shape(body.error.message)).toBe(shape(logged))
  })
})

describe('the vLLM emulation against real vLLM 9aaf83ef5: --help', () => {
  test.each(['--max-num-seqs', '--enable-prefix-caching', '--kv-cache-dtype'])(
    '--help=all defines %s in the real entry, byte for byte (what the help step reads)',
    (flag) => {
      const ours = exitOf('vllm', ['serve', '--help=all'])!
      expect(ours.code).toBe(0)
      expect(findHelpEntry(ours.stdout, flag)?.block).toBe(findHelpEntry(realHelp('serve-help-all.txt'), flag)!.block)
    },
  )

  test.each([
    ['max-num-seqs', 'serve-help-max-num-seqs.txt'],
    ['enable-prefix-caching', 'serve-help-enable-prefix-caching.txt'],
    ['kv-cache-dtype', 'serve-help-kv-cache-dtype.txt'],
  ])('--help=%s prints what the real build prints', (flag, file) => {
    expect(exitOf('vllm', ['serve', `--help=${flag}`])!.stdout).toBe(realHelp(file))
  })

  test('plain --help opens with the real usage and description', () => {
    const top = (text: string) => text.split('\n\nConfig Groups:')[0]
    expect(top(exitOf('vllm', ['serve', '--help'])!.stdout)).toBe(top(realHelp('serve-help.txt')))
  })
})
