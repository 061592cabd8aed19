// Issue 13, "honest answers": the interrupt (partial report, exit 130/143, no process left), progress
// in logs, the CLI people expect (did-you-mean, --version, typed metavars, paths from INIT_CWD,
// record --force), --summary, the interrupted verdict refused by writeback, and the HTTP seam's
// gzip and cap.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, describe, test } from 'vitest'
import { startEngine } from '../../engine/launch.ts'
import { verify } from '../../helpers/cli/verify.ts'
import { closest } from '../../helpers/config/suggest.ts'
import { markdownSummary } from '../../helpers/report/markdown.ts'
import type { Report } from '../../helpers/report/json.ts'
import { stepLine } from '../../helpers/report/terminal.ts'
import { HttpError, liveHttp } from '../../helpers/seams/http.ts'
import { METRICS_HEADERS } from '../../helpers/steps/meter/metrics.ts'
import { retryAfterMs, withRetries } from '../../helpers/steps/probes/ask.ts'
import { STEP_IDS } from '../../helpers/steps/registry.ts'
import { checkHealth } from '../../helpers/steps/health/judge.ts'
import { createContext } from '../../helpers/steps/context.ts'
import { loadConfig } from '../../helpers/config/load.ts'
import type { HttpClient, HttpRequest } from '../../helpers/seams/http.ts'
import { greenReport, sandbox, PAGE } from '../support/writeback-sandbox.ts'
import { ROOT, cleanup, groupLive, runVerify, spawnVerify } from '../support/run-verify.ts'
import { ReachedProofSteps } from '../support/verify-in-process.ts'
import { readCheckedReport } from '../support/report-schema.ts'
import { DEMO_ARM, DEMO_REPLAY } from '../support/demo-args.ts'

const dir = mkdtempSync(join(tmpdir(), 'armproof-honest-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** `pnpm verify` in process, its streams captured (no terminal); it throws if the run would reach the proof steps. */
async function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  let out = ''
  let err = ''
  const code = await verify({
    rawArgs: args,
    env: { VERIFY_NO_DOTENV: '1', CI: 'true', ...env },
    cwd: ROOT,
    out: { write: (t: string) => (out += t) },
    err: { write: (t: string) => (err += t) },
    runSuites: () => Promise.reject(new ReachedProofSteps()),
  })
  return { code, out, err }
}

const ARGS = [...DEMO_ARM, '--host', 'local']

describe.concurrent('the CLI people expect', () => {
  test('did-you-mean for a knob (a typo, or another case) and for a flag, whose value is not taken for a stray argument', async ({
    expect,
  }) => {
    const r = await run(['--svc', 'demo', '--knob', 'PREFIL_INTERLEAVE', '--meter-windw', '5m', '--base-url', 'http://127.0.0.1:9'])
    expect(r.code).toBe(2)
    expect(r.err).toContain('unknown knob "PREFIL_INTERLEAVE"; did you mean PREFILL_INTERLEAVE?')
    expect(r.err).toContain('unknown option "--meter-windw"; did you mean --meter-window?')
    expect(r.err).not.toContain('unexpected argument')
    expect((await run(['--svc', 'demo', '--knob', 'prefill_interleave'])).err).toContain('did you mean PREFILL_INTERLEAVE?')
    expect(closest('checkpoint-policy', ['CHECKPOINT_POLICY', 'CHECKPOINT_SLOTS'])).toBe('CHECKPOINT_POLICY')
    // Nothing close: no guess.
    expect((await run(['--svc', 'demo', '--knob', 'TEMPERATURE'])).err).not.toContain('did you mean')
  })

  test('--version prints the version; --help shows typed metavars, durations as seconds, examples and the exit codes', async ({
    expect,
  }) => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }
    expect(await run(['--version'])).toEqual({ code: 0, out: `armproof ${pkg.version}\n`, err: '' })
    const help = (await run(['--help'])).out
    for (const t of [
      '--health-budget <duration>',
      '--mode <live|record|replay>',
      '--base-url <url>',
      '--report <path>',
      '--summary <path>',
      '--ca-file <path>',
      '--sudo <auto|always|never>',
      'a bare number is seconds',
      'Examples:',
      '--version',
      '130/143 interrupted',
      'on first contact',
    ]) {
      expect(help).toContain(t)
    }
    // No untyped metavar is left but the knob's own value (--value, --previous).
    expect(help.match(/<value>/g)).toHaveLength(2)
  })

  test('output paths are relative to the folder pnpm was run from (INIT_CWD), not the package root', async ({ expect }) => {
    const sub = join(dir, 'sub')
    mkdirSync(sub, { recursive: true })
    // A 404 on /health ends the run at first contact, with its report written.
    const server = createServer((_req, res) => res.writeHead(404).end())
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const r = await run([...ARGS, '--base-url', url, '--report', 'out.json', '--summary', 'out.md'], {
        INIT_CWD: sub,
        npm_lifecycle_event: 'verify',
      })
      expect(r.code, r.err).toBe(2)
      expect(readCheckedReport(join(sub, 'out.json')).verdict).toBe('error')
      expect(readFileSync(join(sub, 'out.md'), 'utf8')).toContain('/health answers HTTP 404')
      expect(existsSync(join(ROOT, 'out.json'))).toBe(false)
      // An INIT_CWD that leaked from an outer pnpm (another script) is not where this command was run.
      const leaked = join(dir, 'leaked')
      mkdirSync(leaked, { recursive: true })
      const other = await run([...ARGS, '--base-url', url, '--report', join(dir, 'own.json')], {
        INIT_CWD: leaked,
        npm_lifecycle_event: 'test',
      })
      expect(other.code).toBe(2)
      expect(existsSync(join(dir, 'own.json'))).toBe(true)
      const { userCwd } = await import('../../helpers/cli/verify.ts')
      expect(userCwd({ env: { INIT_CWD: leaked, npm_lifecycle_event: 'test' }, cwd: ROOT })).toBe(ROOT)
      expect(userCwd({ env: { INIT_CWD: leaked, npm_lifecycle_event: 'verify' }, cwd: ROOT })).toBe(leaked)
      expect(userCwd({ env: { INIT_CWD: leaked }, cwd: ROOT })).toBe(ROOT)
    } finally {
      server.close()
    }
  })

  test('record mode refuses a fixture folder that holds another run unless --force', async ({ expect }) => {
    const fixtures = join(dir, 'held')
    mkdirSync(fixtures, { recursive: true })
    writeFileSync(
      join(fixtures, 'run.json'),
      JSON.stringify({ svc: 'demo', knob: 'PREFILL_INTERLEAVE', value: '1', recordedAt: '2026-11-30T00:00:00.000Z' }),
    )
    const base = [...ARGS, '--base-url', 'http://127.0.0.1:9/api', '--mode', 'record', '--fixtures', fixtures]
    const refused = await run(base)
    expect(refused.code).toBe(2)
    expect(refused.err).toContain('already holds a recording (demo PREFILL_INTERLEAVE=1, recorded 2026-11-30T00:00:00.000Z)')
    expect(refused.err).toContain('--force')
    // With --force the run goes on, to first contact (where a 404 on /health ends it).
    const server = createServer((_req, res) => res.writeHead(404).end())
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    try {
      const forced = await run([
        ...ARGS,
        '--base-url',
        `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        '--mode',
        'record',
        '--fixtures',
        fixtures,
        '--force',
      ])
      expect(forced.code).toBe(2)
      expect(forced.err).not.toContain('already holds a recording')
      expect(forced.err).toContain('/health answers HTTP 404 (the path)')
    } finally {
      server.close()
    }
  })
})

describe.concurrent('--summary', () => {
  test('a replay: mode, the recording, the duration, the steps and the meter sparkline, in Markdown; never the key', async ({ expect }) => {
    const summary = join(dir, 'summary.md')
    const r = await runVerify([...DEMO_REPLAY, '--summary', summary], { env: { VERIFY_API_KEY: 'sk-summary-Xy7Qp2Lm' } })
    expect(r.exitCode, r.stdout + r.stderr).toBe(0)
    cleanup(r)
    const md = readFileSync(summary, 'utf8')
    expect(md).toMatch(/^### ✅ armproof GREEN/)
    expect(md).toMatch(/mode \*\*replay\*\* \(a replay of the run recorded \d{4}-/)
    expect(md).toMatch(/endpoint `http:\/\/127\.0\.0\.1:\d+` \(as recorded; nothing was contacted\)/)
    expect(md).toMatch(/took \d/)
    expect(md).toMatch(/\*\*Meter\*\* radiance:engine_steps_held_total: `[▁▂▃▄▅▆▇█ ]*[▁▂▃▄▅▆▇█] \d+ → \d+, moved after /)
    expect(md).not.toContain('sk-summary-Xy7Qp2Lm')
  })
})

describe.concurrent('interrupted', () => {
  const interrupted = (steps: Report['steps']): Report => ({
    ...(greenReport('2026-11-30T02:31:05.120Z') as unknown as Report),
    steps,
    verdict: 'interrupted',
    exitCode: 130,
    error: 'interrupted by SIGINT after 8 of 10 steps',
  })
  test('writeback refuses an interrupted report (the schema accepts the word, the gate refuses it)', async ({ expect }) => {
    const green = greenReport(new Date().toISOString())
    const box = await sandbox(
      { 'llm-7.md': PAGE },
      { ...green, verdict: 'interrupted', exitCode: 130, steps: (green.steps as unknown[]).slice(0, 8) },
    )
    try {
      const r = await box.run()
      expect(r.code).toBe(2)
      expect(r.err).toContain('verdict "interrupted", exitCode 130: not green')
      expect(await box.page('llm-7.md')).toBe(PAGE)
    } finally {
      await box.remove()
    }
  })
  test('the Markdown summary says INTERRUPTED', ({ expect }) => {
    const md = markdownSummary(interrupted([]), { endpoint: 'http://gpu-7:8000' })
    expect(md).toMatch(/^### ⏹️ armproof INTERRUPTED/)
    expect(md).toContain('endpoint `http://gpu-7:8000`')
  })
})

/** The live processes of a process group, from ps (an exited one waiting to be reaped, state Z, is not running). */
describe.concurrent('SIGINT / SIGTERM mid-meter-watch', () => {
  test.for([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    '%s: the partial report, JUnit and summary say interrupted, the steps done keep their verdicts, exit %i, no process left; progress lines in the log meanwhile',
    async ([signal, exitCode], { expect }) => {
      const engine = await startEngine({
        svc: `int${exitCode}`,
        processName: `rint-${exitCode}`,
        args: ['--prefill-interleave', '1'],
        faults: ['knob_ignored'],
      })
      const out = join(dir, signal)
      try {
        // The default budgets: the meter watch would take 5 minutes.
        const run = spawnVerify(
          [
            '--svc',
            engine.svc,
            '--knob',
            'PREFILL_INTERLEAVE',
            '--value',
            '1',
            '--base-url',
            engine.baseUrl,
            '--host',
            'local',
            '--process',
            engine.processName,
            '--report',
            join(out, 'r.json'),
            '--junit',
            join(out, 'r.xml'),
            '--summary',
            join(out, 'r.md'),
          ],
          engine.env,
        )
        // Plain progress lines of the watch, a few seconds apart in a log (at least every 15 s).
        await run.printed(
          'stderr',
          (text) =>
            (text.match(/^ {2}… (watching radiance:engine_steps_held_total|meter: waiting · )/gm) ?? []).length >=
            (signal === 'SIGINT' ? 2 : 1),
        )
        process.kill(run.pid, signal)
        const code = await run.exited
        const { stdout, stderr } = run.output()
        expect(code, `${stdout}\n${stderr}`).toBe(exitCode)
        if (signal === 'SIGINT') expect(stderr).toMatch(/ {2}… meter: waiting · 1\d(\.\d)?s of up to 5m 00s\n/)
        await new Promise((r) => setTimeout(r, 500))
        expect(await groupLive(run.pid), "processes left in the run's group").toEqual([])
        const report = readCheckedReport(join(out, 'r.json'))
        expect(report.verdict).toBe('interrupted')
        expect(report.exitCode).toBe(exitCode)
        // Interrupted in the meter's watch: the steps before it held; the meter and the one-flag law's step after it were not judged.
        expect(report.steps.map((s) => `${s.id} ${s.verdict}`)).toEqual(
          STEP_IDS.filter((id) => id !== 'meter' && id !== 'one-flag').map((id) => `${id} passed`),
        )
        expect(report.error).toBe(`interrupted by ${signal} after 8 of 10 steps`)
        expect(readFileSync(join(out, 'r.xml'), 'utf8')).toContain('name="verdict" value="interrupted"')
        expect(readFileSync(join(out, 'r.md'), 'utf8')).toContain('INTERRUPTED')
        expect(stdout).toMatch(/\nINTERRUPTED · interrupted by SIG(INT|TERM) after 8 of 10 steps · next: /)
        // The engine itself is the test's, and is still there to stop.
        expect(await engine.stats()).toBeTruthy()
      } finally {
        await engine.stop()
      }
    },
  )
})

describe.concurrent('SIGINT during first contact', () => {
  test('a /health that hangs: the report says interrupted with no step judged, exit 130', async ({ expect }) => {
    const server = createServer(() => {}) // accepts, never answers
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const out = join(dir, 'first-contact-int')
    try {
      const run = spawnVerify([
        ...ARGS,
        '--base-url',
        `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        '--report',
        join(out, 'r.json'),
      ])
      // The request is open when the server sees the connection.
      await new Promise<void>((resolve) => server.once('request', () => resolve()))
      process.kill(run.pid, 'SIGINT')
      const code = await run.exited
      const { stdout } = run.output()
      expect(code, stdout).toBe(130)
      const report = readCheckedReport(join(out, 'r.json'))
      expect(report.verdict).toBe('interrupted')
      expect(report.steps).toEqual([])
      expect(stdout).toContain('INTERRUPTED · interrupted by SIGINT after 0 of 10 steps')
      expect(await groupLive(run.pid)).toEqual([])
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })
})

describe.concurrent('logs', () => {
  test('a step line is never cut without a terminal (width Infinity), and is cut in one', ({ expect }) => {
    const step = {
      id: 'meter' as const,
      title: 'the meter moved',
      verdict: 'failed' as const,
      expected: 'x',
      observed: `stayed at 0 ${'for a long time '.repeat(20)}END`,
      where: 'u',
      evidence: {},
      durationMs: 1,
    }
    expect(stepLine(step, 8, { width: Infinity })).toMatch(/END$/)
    expect(stepLine(step, 8, { width: 80 })).toMatch(/…$/)
  })
})

describe.concurrent('the HTTP seam', () => {
  test("asks /metrics for gzip as Prometheus does, and decodes it; a body over the cap names armproof's own cap", async ({ expect }) => {
    expect(METRICS_HEADERS['accept-encoding']).toBe('gzip')
    let asked = ''
    const page = `# TYPE x counter\nx_total 1\n${'#'.repeat(5000)}\n`
    const server = createServer((req, res) => {
      asked = String(req.headers['accept-encoding'])
      const zipped = gzipSync(page)
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': zipped.length }).end(zipped)
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const http = liveHttp()
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`
      const res = await http.request({ method: 'GET', url, headers: { ...METRICS_HEADERS }, timeoutMs: 5000 })
      expect(asked).toBe('gzip')
      expect(res.body).toBe(page)
      expect(res.headers['content-encoding']).toBeUndefined()
      // The cap counts decoded bytes: a small gzip that inflates past it is refused, and says whose cap it is.
      const error = await http
        .request({ method: 'GET', url, headers: { ...METRICS_HEADERS }, timeoutMs: 5000, maxBodyBytes: 1000 })
        .catch((e: unknown) => e)
      expect(error).toBeInstanceOf(HttpError)
      expect((error as HttpError).failure).toBe('too-large')
      expect((error as HttpError).message).toContain(
        "larger than armproof's own cap of 1000 bytes (decoded); the cap is armproof's, not the engine's",
      )
    } finally {
      await http.close()
      server.close()
    }
  })

  test('a gzip body that breaks off mid-way is a broken reply, never a hang; one that does not decode says so', async ({ expect }) => {
    const zipped = gzipSync(`# TYPE x counter\nx_total 1\n${'y'.repeat(200_000)}\n`)
    const server = createServer((req, res) => {
      if (req.url === '/garbage') return void res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': 5 }).end('hello')
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-length': zipped.length })
      res.write(zipped.subarray(0, zipped.length >> 1), () => setTimeout(() => res.socket?.destroy(), 20))
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const http = liveHttp()
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const cut = await http
        .request({ method: 'GET', url: `${base}/metrics`, headers: { ...METRICS_HEADERS }, timeoutMs: 5000 })
        .catch((e: unknown) => e)
      expect(cut).toBeInstanceOf(HttpError)
      expect(['truncated', 'reset']).toContain((cut as HttpError).failure)
      const garbage = await http
        .request({ method: 'GET', url: `${base}/garbage`, headers: { ...METRICS_HEADERS }, timeoutMs: 5000 })
        .catch((e: unknown) => e)
      expect((garbage as HttpError).message).toContain('the body says gzip but does not decode')
    } finally {
      await http.close()
      server.close()
    }
  })

  test('Retry-After in seconds or as an HTTP date', ({ expect }) => {
    expect(retryAfterMs('2', 0)).toBe(2000)
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4000)).toBe(6000)
    expect(retryAfterMs(undefined, 0)).toBeUndefined()
    expect(retryAfterMs('soon', 0)).toBeUndefined()
  })
})

describe.concurrent('steps that wait only for what can change', () => {
  const target = (() => {
    const r = loadConfig({ argv: [...ARGS, '--base-url', 'http://gpu-7:8000'], env: {} })
    if (!r.ok) throw new Error('bad target')
    return r.target
  })()
  /** A seam that answers from a script, one entry per request; a string is a failure's system code. */
  function scripted(
    script: Array<number | string | { status: number; headers: Record<string, string> }>,
  ): HttpClient & { asked: HttpRequest[] } {
    const asked: HttpRequest[] = []
    return {
      asked,
      async request(req) {
        asked.push(req)
        const next = script.shift()
        if (next === undefined) throw new Error('the script ran out: the step asked more than it should')
        if (typeof next === 'string') throw new HttpError(next === 'ECONNREFUSED' ? 'refused' : 'other', req.url, next, next)
        const { status, headers } = typeof next === 'number' ? { status: next, headers: {} } : next
        return { status, headers, body: '{"detail":"Not Found"}', url: req.url, redirects: [], durationMs: 100 }
      },
    }
  }
  const ctxWith = (http: HttpClient, slept: number[] = []) =>
    createContext({
      target,
      http,
      host: {
        where: 'local',
        run: async () => {
          throw new Error('no host')
        },
      } as never,
      clock: { now: () => 0, sleep: async (ms: number) => void slept.push(ms) },
      choices: { pick: (_n, o) => o[0]! },
    })

  test("health: a 404 after the engine came up ends the step at once, the path named as the operator's mistake (not judged, never red); redirects are followed", async ({
    expect,
  }) => {
    const http = scripted(['ECONNREFUSED', 503, 404])
    const j = await checkHealth(ctxWith(http))
    expect(j.verdict).toBe('inconclusive')
    expect(j.mistake).toContain("/health answers HTTP 404 (the path): --base-url must be the engine's root")
    expect(j.next).toBe(j.mistake)
    expect(http.asked).toHaveLength(3)
    expect(http.asked.every((r) => r.followRedirects === true)).toBe(true)
  })

  test('probes: 429 with Retry-After is waited out within the timeout and kept in evidence; a wait past the timeout is not taken', async ({
    expect,
  }) => {
    const slept: number[] = []
    const http = scripted([{ status: 429, headers: { 'retry-after': '1' } }, { status: 503, headers: {} }, 200])
    const { res, retries } = await withRetries(ctxWith(http, slept), {
      method: 'POST',
      url: 'http://gpu-7:8000/v1/chat/completions',
      timeoutMs: 10_000,
    })
    expect(res.status).toBe(200)
    expect(retries).toEqual([
      { status: 429, retryAfter: '1', waitedMs: 1000 },
      { status: 503, retryAfter: null, waitedMs: 1000 },
    ])
    expect(slept).toEqual([1000, 1000])
    // Each retry gets only what is left of the probe's timeout.
    expect(http.asked.map((r) => r.timeoutMs)).toEqual([10_000, 8900, 7800])
    const late = scripted([{ status: 429, headers: { 'retry-after': '120' } }])
    const stop = await withRetries(ctxWith(late), { method: 'POST', url: 'http://gpu-7:8000/v1/chat/completions', timeoutMs: 10_000 })
    expect(stop.res.status).toBe(429)
    expect(stop.retries).toEqual([])
  })
})
