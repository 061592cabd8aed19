// Captures what a real llama-server prints and serves into a versioned corpus, the reference the
// llama.cpp profile's readers and the reference engine's llama.cpp emulation are checked against
// (test/real/llamacpp-corpus.test.ts). Usable on an operator's host too (docs/real-corpus.md):
//   node scripts/real/capture-llama.ts [--bin PATH] [--model FILE.gguf] [--out DIR]
// --bin defaults to what scripts/real/llama-server.sh built; --model to the tiny random-weight
// model of ./tiny-gguf.ts (written here, nothing downloaded); --out to
// fixtures/real/llama.cpp/<the build's commit>/. Every server listens on 127.0.0.1 only, runs in a
// temp folder holding the model (so no path of the capturing machine reaches the corpus: the model
// is named by its file name), and is stopped with SIGTERM; its whole log is kept with its shutdown.
// commands.json says, for each file, the argv and environment that made it.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { basename, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { encodeSolidPng } from '../../helpers/steps/probes/png.ts'
import { tinyGguf } from './tiny-gguf.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

interface Answer {
  status: number
  /** The status line and the headers as sent (names as the server spelled them). */
  head: string
  body: string
}

/** One HTTP exchange with the server on 127.0.0.1. */
export function ask(port: number, method: 'GET' | 'POST', path: string, body?: unknown, timeoutMs = 30_000): Promise<Answer> {
  return new Promise((done, fail) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body))
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {},
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          const lines = [`HTTP/${res.httpVersion} ${res.statusCode} ${res.statusMessage}`]
          for (let i = 0; i < res.rawHeaders.length; i += 2) lines.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`)
          done({ status: res.statusCode ?? 0, head: `${lines.join('\n')}\n`, body: Buffer.concat(chunks).toString('utf8') })
        })
      },
    )
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in ${timeoutMs} ms`)))
    req.on('error', fail)
    req.end(payload)
  })
}

/** A free loopback port. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const s = createServer()
    s.once('error', fail)
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => done(port))
    })
  })
}

export interface Running {
  child: ChildProcess
  port: number
  /** The log so far (stdout and stderr, in the order written). */
  log(): string
  /** SIGTERM, then the whole log once it exited. */
  stop(): Promise<string>
}

/** Starts `bin` with `args` (the port appended) in `cwd`. */
export async function start(bin: string, args: readonly string[], cwd: string, env: Record<string, string> = {}): Promise<Running> {
  const port = await freePort()
  const child = spawn(bin, [...args, '--host', '127.0.0.1', '--port', String(port)], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let text = ''
  child.stdout!.on('data', (c: Buffer) => {
    text += c.toString('utf8')
  })
  child.stderr!.on('data', (c: Buffer) => {
    text += c.toString('utf8')
  })
  const exited = new Promise<void>((done) => child.once('exit', () => done()))
  return {
    child,
    port,
    log: () => text,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(timer)
      return text
    },
  }
}

/** Waits until /health answers 200; every answer before it is returned (503s while loading). */
export async function ready(server: Running, budgetMs = 60_000): Promise<Answer[]> {
  const seen: Answer[] = []
  const until = Date.now() + budgetMs
  while (Date.now() < until) {
    if (server.child.exitCode !== null) throw new Error(`llama-server exited ${server.child.exitCode}:\n${server.log()}`)
    try {
      const a = await ask(server.port, 'GET', '/health', undefined, 2000)
      if (a.status === 200) return seen
      seen.push(a)
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`llama-server not healthy in ${budgetMs} ms:\n${server.log()}`)
}

/** A prompt of whole words, `n` of them: with the tiny model's byte vocabulary, about 6 tokens a word. */
export const sharedText = (n: number): string =>
  Array.from({ length: n }, (_, i) => ['kestrel', 'obsidian', 'tangerine', 'quasar'][i % 4]).join(' ')

/** Two chats sharing a long prefix: the second reuses the first's cached prompt where caching is on. */
export async function sharedPrefixTraffic(port: number): Promise<Answer[]> {
  const prefix = sharedText(120)
  const out: Answer[] = []
  for (const tail of ['first', 'second']) {
    out.push(
      await ask(port, 'POST', '/v1/chat/completions', {
        messages: [{ role: 'user', content: `${prefix} ${tail}` }],
        max_tokens: 4,
        temperature: 0,
      }),
    )
  }
  return out
}

const CHAT = { messages: [{ role: 'user', content: 'Reply with exactly one word: kestrel' }], temperature: 0, max_tokens: 8 }
const TOOLS = {
  messages: [{ role: 'user', content: 'What is the weather in Oslo? Use the tool.' }],
  tools: [
    {
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'Current weather for a city',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
    },
  ],
  tool_choice: 'auto',
  temperature: 0,
  max_tokens: 16,
}
const IMAGE = {
  messages: [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Name the colour of this image in one word.' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${encodeSolidPng(64, 64, [0, 0, 255]).toString('base64')}` } },
      ],
    },
  ],
  temperature: 0,
  max_tokens: 8,
}

interface Made {
  file: string
  argv: string[]
  env: Record<string, string>
  what: string
}

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name)
  return i > 0 ? process.argv[i + 1] : undefined
}

async function main(): Promise<void> {
  const bin = resolve(flag('--bin') ?? execFileSync('sh', [join(ROOT, 'scripts/real/llama-server.sh')], { encoding: 'utf8' }).trim())
  const versionText = execFileSync('sh', ['-c', '"$0" --version 2>&1', bin], { encoding: 'utf8' })
  const commit = /commit ([0-9a-f]+)/.exec(versionText)?.[1]
  if (!commit) throw new Error(`no commit in ${bin} --version:\n${versionText}`)
  const out = resolve(flag('--out') ?? join(ROOT, 'fixtures/real/llama.cpp', commit))
  const work = mkdtempSync(join(tmpdir(), 'armproof-capture-'))
  // The server is given the model by a name in its own folder (a link to --model, never a copy of
  // it), so no path of this machine reaches what it prints.
  const given = flag('--model')
  const model = given ? 'model.gguf' : 'tiny.gguf'
  if (given) symlinkSync(resolve(given), join(work, model))
  else writeFileSync(join(work, model), tinyGguf())
  mkdirSync(out, { recursive: true })
  const made: Made[] = []
  const write = (file: string, text: string, argv: string[], env: Record<string, string>, what: string): void => {
    writeFileSync(join(out, file), text)
    const served = argv.some((a) => a === '-m')
    made.push({ file, argv: ['llama-server', ...argv, ...(served ? ['--host', '127.0.0.1', '--port', '<a free port>'] : [])], env, what })
    process.stderr.write(`capture: ${file}\n`)
  }
  const run = async <T>(
    argv: string[],
    env: Record<string, string>,
    during: (s: Running) => Promise<T>,
  ): Promise<{ log: string; result: T }> => {
    const s = await start(bin, argv, work, env)
    try {
      const result = await during(s)
      return { log: await s.stop(), result }
    } catch (error) {
      await s.stop()
      throw error
    }
  }
  try {
    const base = ['-m', model]
    write('version.txt', versionText, ['--version'], {}, 'the build, as --version prints it (stdout and stderr)')
    const help = execFileSync('sh', ['-c', '"$0" --help 2>&1', bin], { encoding: 'utf8', cwd: work })
    write('help.txt', help, ['--help'], {}, 'every option, as --help prints it (stdout and stderr)')

    // The main server: --parallel 2 with --metrics, asked every endpoint.
    const main = [...base, '--metrics', '--parallel', '2']
    const { log } = await run(main, {}, async (s) => {
      const loadingAnswers = await ready(s)
      // A real model loads for a while by itself: its 503 is the one kept (the tiny one gets its own boot below).
      const first503 = loadingAnswers.find((a) => a.status === 503)
      if (given && first503)
        write(
          'health-loading.txt',
          `${first503.head}\n${first503.body}`,
          [...main, '(GET /health while loading)'],
          {},
          '/health while loading',
        )
      const health = await ask(s.port, 'GET', '/health')
      write('health.txt', health.head + '\n' + health.body, [...main, '(GET /health)'], {}, '/health once loaded')
      for (const [file, path] of [
        ['props.json', '/props'],
        ['slots.json', '/slots'],
        ['v1-models.json', '/v1/models'],
      ] as const) {
        const a = await ask(s.port, 'GET', path)
        write(file, a.body, [...main, `(GET ${path})`], {}, `GET ${path}: status ${a.status}`)
      }
      const chat = await ask(s.port, 'POST', '/v1/chat/completions', CHAT)
      write('chat.json', chat.body, [...main, '(POST /v1/chat/completions)'], {}, `a chat: status ${chat.status}`)
      write('chat.headers', chat.head, [...main, '(POST /v1/chat/completions)'], {}, 'the chat reply headers')
      const tools = await ask(s.port, 'POST', '/v1/chat/completions', TOOLS)
      write('chat-tools.json', tools.body, [...main, '(POST tools, tool_choice auto)'], {}, `a tools request: status ${tools.status}`)
      const image = await ask(s.port, 'POST', '/v1/chat/completions', IMAGE)
      write(
        'chat-image.json',
        image.body,
        [...main, '(POST an image_url part)'],
        {},
        `an image to a text-only model: status ${image.status}`,
      )
      const long = await ask(s.port, 'POST', '/v1/chat/completions', {
        messages: [{ role: 'user', content: sharedText(600) }],
        max_tokens: 8,
      })
      write(
        'chat-too-long.json',
        long.body,
        [...main, '(POST a prompt past the slot context)'],
        {},
        `a prompt longer than a slot's context: status ${long.status}`,
      )
      await sharedPrefixTraffic(s.port)
      const metrics = await ask(s.port, 'GET', '/metrics')
      write(
        'metrics.txt',
        metrics.body,
        [...main, '(GET /metrics after shared-prefix traffic)'],
        {},
        '/metrics after two chats sharing a prefix',
      )
      write('metrics.headers', metrics.head, [...main, '(GET /metrics)'], {}, 'the /metrics headers')
    })
    write('boot-parallel-2.log', log, main, {}, 'the whole log of that server: boot, requests, shutdown')

    const boots: Array<[string, string[], Record<string, string>, string]> = [
      ['boot-env-twin.log', [...base, '--metrics'], { LLAMA_ARG_N_PARALLEL: '2' }, 'the env twin alone'],
      [
        'boot-env-and-flag.log',
        [...base, '--metrics', '--parallel', '2'],
        { LLAMA_ARG_N_PARALLEL: '3' },
        'env twin 3 and --parallel 2: the flag wins (warn:)',
      ],
      ['boot-auto.log', [...base, '--metrics'], {}, 'no --parallel: auto'],
      ['boot-auto-lv4.log', [...base, '--metrics', '-lv', '4'], {}, 'auto at -lv 4 (trace)'],
      ['boot-parallel-2-lv4.log', [...base, '--metrics', '--parallel', '2', '-lv', '4'], {}, '--parallel 2 at -lv 4'],
      ['boot-no-log-prefix.log', [...base, '--parallel', '2', '--no-log-prefix'], {}, '--no-log-prefix'],
      ['boot-no-log-timestamps.log', [...base, '--parallel', '2', '--no-log-timestamps'], {}, '--no-log-timestamps'],
    ]
    for (const [file, argv, env, what] of boots) {
      const r = await run(argv, env, async (s) => {
        await ready(s)
      })
      write(file, r.log, argv, env, what)
    }

    // Without --metrics: /metrics refused.
    const bare = [...base, '--parallel', '2']
    const noMetrics = await run(bare, {}, async (s) => {
      await ready(s)
      return ask(s.port, 'GET', '/metrics')
    })
    write(
      'metrics-disabled.txt',
      `${noMetrics.result.head}\n${noMetrics.result.body}`,
      [...bare, '(GET /metrics)'],
      {},
      '/metrics without --metrics',
    )

    // --no-cache-prompt: the same shared-prefix traffic, the cached-tokens counter stays 0.
    const noCache = [...base, '--metrics', '--parallel', '2', '--no-cache-prompt']
    const nc = await run(noCache, {}, async (s) => {
      await ready(s)
      await sharedPrefixTraffic(s.port)
      return ask(s.port, 'GET', '/metrics')
    })
    write('boot-no-cache-prompt.log', nc.log, noCache, {}, '--no-cache-prompt')
    write(
      'metrics-no-cache-prompt.txt',
      nc.result.body,
      [...noCache, '(GET /metrics after shared-prefix traffic)'],
      {},
      '/metrics at --no-cache-prompt',
    )

    // Loading: a context this large takes the tiny model seconds to allocate; /health answers 503
    // meanwhile. Not with a real model (--model): its KV cache at that context would not fit.
    if (given) {
      writeFileSync(join(out, 'commands.json'), `${JSON.stringify({ commit, model: basename(given), files: made }, null, 2)}\n`)
      process.stderr.write(`capture: ${made.length} files in ${out}\n`)
      return
    }
    const loading = [...base, '--metrics', '--parallel', '2', '-c', '2097152']
    const ld = await run(loading, {}, async (s) => {
      const before = await ready(s)
      const first = before.find((a) => a.status === 503)
      if (!first) throw new Error('the loading server never answered 503: raise -c')
      return first
    })
    write('boot-loading.log', ld.log, loading, {}, 'a server that loads for seconds (a 2M-token KV cache)')
    write(
      'health-loading.txt',
      `${ld.result.head}\n${ld.result.body}`,
      [...loading, '(GET /health while loading)'],
      {},
      '/health while loading',
    )

    writeFileSync(
      join(out, 'commands.json'),
      `${JSON.stringify({ commit, model: given ? basename(given) : 'tiny.gguf, written by scripts/real/tiny-gguf.ts', files: made }, null, 2)}\n`,
    )
    process.stderr.write(`capture: ${made.length} files in ${out}\n`)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

if (import.meta.main) await main()
