// `armproof serve` against a hostile network and a rolling restart (issue 40), with runs the test
// controls (the real child runs, SIGKILL and SIGTERM of a real serve: test/e2e/serve-lifecycle.test.ts):
// one client cannot take the connections a liveness probe needs, no route drains a body, a queue
// wait the answer says, each target on its own, /analysis 200 for every outcome after the token,
// nothing leaks before the token or into another target's answer, the targets file read once per
// change (in a thread of its own), a rotated token file picked up, serve's own failures counted and said by /healthz.
import { symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { parsePrometheusText } from '../../helpers/prom/parse.ts'
import { TokenSource } from '../../helpers/serve/auth.ts'
import { RunGate } from '../../helpers/serve/gate.ts'
import { route } from '../../helpers/serve/routes.ts'
import { type LoadedTargets, loadServedTargets, loadTargetsOffThread, offThreadOr, TargetsCache } from '../../helpers/serve/targets.ts'
import { writeTargets } from '../support/fleet.ts'
import { finished, goodTargets, rawExchange, type Served, serveApp, TOKEN } from '../support/serve.ts'
import { tempDir } from '../support/temp-dir.ts'

const opened: Served[] = []
const sockets: Socket[] = []
const app = async (options: Parameters<typeof serveApp>[0] = {}): Promise<Served> => {
  const s = await serveApp(options)
  opened.push(s)
  return s
}
afterAll(async () => {
  for (const s of sockets) s.destroy()
  await Promise.all(opened.map((s) => s.close()))
})
const auth = { Authorization: `Bearer ${TOKEN}` }
const post = (s: Served, path: string, headers: Record<string, string> = auth, body?: string) =>
  fetch(`${s.url}${path}`, { method: 'POST', headers, ...(body !== undefined ? { body } : {}) })
const json = async (r: Response) => (await r.json()) as Record<string, unknown>
/** Parks a run until the test lets it go. */
const parked = () => {
  const gates: Array<() => void> = []
  return {
    gates,
    run: (svc: string) => new Promise<ReturnType<typeof finished>>((r) => gates.push(() => r(finished(svc, 'green', 0)))),
  }
}

describe('connections: one client cannot starve the others', () => {
  test('300 slow connections from one address (headers trickling) leave /healthz answering a probe from another within its 1 s timeout', async () => {
    const s = await app({ limits: { headersTimeoutMs: 5000, requestTimeoutMs: 6000 } })
    // The attacker is 127.0.0.2 (all of 127/8 is loopback), the kubelet's probe 127.0.0.1.
    const opening = Array.from(
      { length: 300 },
      () =>
        new Promise<void>((resolve) => {
          const c = connect({ port: s.port, host: '127.0.0.1', localAddress: '127.0.0.2' }, () => {
            c.write('GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ')
            resolve()
          })
          c.on('error', () => resolve())
          c.on('close', () => resolve())
          sockets.push(c)
        }),
    )
    await Promise.all(opening)
    await expect
      .poll(() =>
        s.metrics.page({ running: 0, queued: 0, targets: 0 }).includes('armproof_serve_connections_dropped_total{reason="per_client"} 268'),
      )
      .toBe(true)
    for (let i = 0; i < 5; i++) {
      const probe = await fetch(`${s.url}/healthz`, { signal: AbortSignal.timeout(1000) })
      expect([probe.status, await probe.json()]).toEqual([200, { status: 'ok' }])
    }
    // The same client's authenticated run request is not locked out either (its own share).
    expect((await post(s, '/verify/llm-7')).status).toBe(200)
  })

  test('in all: past --max-connections a new connection is closed at once, and counted', async () => {
    const s = await app({ limits: { maxConnections: 4, maxConnectionsPerClient: 4 } })
    for (let i = 0; i < 4; i++) {
      const c = connect({ port: s.port, host: '127.0.0.1', localAddress: `127.0.0.${10 + i}` })
      sockets.push(c)
      await new Promise((r) => c.once('connect', r))
    }
    const open = () => new Promise<number>((r) => s.served.server.getConnections((_e, n) => r(n)))
    await expect.poll(open).toBe(4)
    const fifth = await rawExchange(s.port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n', { from: '127.0.0.20' })
    expect(fifth.status).toBe(0)
    expect(s.metrics.page({ running: 0, queued: 0, targets: 0 })).toContain('armproof_serve_connections_dropped_total{reason="total"} 1')
  })
})

describe('bodies: never drained, on any route', () => {
  /** Streams a chunked body until the server cuts the connection; the bytes it took. */
  const stream = (port: number, head: string, cap: number): Promise<{ sent: number; answer: string }> =>
    new Promise((resolve) => {
      const c = connect(port, '127.0.0.1')
      sockets.push(c)
      let sent = 0
      let answer = ''
      const chunk = Buffer.from(`${(64 * 1024).toString(16)}\r\n${'x'.repeat(64 * 1024)}\r\n`)
      const pump = (): void => {
        while (sent < cap && !c.destroyed) {
          sent += chunk.length
          if (!c.write(chunk)) return void c.once('drain', pump)
        }
        if (sent >= cap) c.destroy()
      }
      c.on('data', (d) => (answer += d.toString('latin1')))
      c.on('error', () => {})
      c.on('close', () => resolve({ sent, answer }))
      c.on('connect', () => {
        c.write(head)
        pump()
      })
    })

  test.each([
    ['POST /healthz', 405],
    ['GET /healthz', 200],
    ['POST /nowhere', 404],
    ['POST /metrics?x=1', 400],
    ['GET /runs/r-0123456789abcdef01234567', 401],
  ])('%s with an endless chunked body: answered (%i) and cut, not read to its end', async (line, status) => {
    const s = await app()
    const { sent, answer } = await stream(s.port, `${line} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n`, 256 * 1024 * 1024)
    expect(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1])).toBe(status)
    expect(answer).toMatch(/connection: close/i)
    // Cut long before the 256 MiB the client would send (socket buffers hold a few MiB).
    expect(sent).toBeLessThan(64 * 1024 * 1024)
  })
})

describe('the queue: a bounded wait, said in the answer', () => {
  test('a run that waits past --queue-wait is answered 503 with Retry-After (the body route: 200, verdict error); --queue-wait 0 refuses at once', async () => {
    const p = parked()
    const s = await app({ targets: ['a', 'b', 'c'], maxRuns: 1, queueWaitMs: 150, run: p.run })
    const a = post(s, '/verify/a')
    await expect.poll(() => s.runs.length).toBe(1)
    const b = await post(s, '/verify/b')
    expect([b.status, b.headers.get('retry-after')]).toEqual([503, '30'])
    expect((await json(b)).error).toMatch(/b's run waited 150ms for a slot \(--queue-wait\) and was not started/)
    const c = await post(s, '/analysis/c')
    expect([c.status, c.headers.get('retry-after')]).toEqual([200, '30'])
    expect(await json(c)).toMatchObject({ svc: 'c', verdict: 'error', reason: 'queue_wait', retryAfterSeconds: 30, steps: [] })
    p.gates.shift()!()
    expect((await a).status).toBe(200)
    expect(s.runs.map((r) => r.svc)).toEqual(['a'])

    const none = await app({ targets: ['a', 'b'], maxRuns: 1, queueWaitMs: 0, run: parked().run })
    void post(none, '/verify/a').catch(() => {})
    await expect.poll(() => none.runs.length).toBe(1)
    const at = await post(none, '/verify/b')
    expect([at.status, (await json(at)).error]).toEqual([503, expect.stringContaining('none waits (--queue-wait 0)')])
  })

  test('stopping (SIGTERM): a request waiting for a slot is answered 503, a new one too, the run under way gets its interrupted report; nothing new starts', async () => {
    const s = await app({
      targets: ['a', 'b', 'c'],
      maxRuns: 1,
      run: (svc, _argv, signal) =>
        new Promise((r) => signal.addEventListener('abort', () => r({ ...finished(svc, 'interrupted', 143), stopped: 'shutdown' }))),
    })
    const a = post(s, '/verify/a')
    await expect.poll(() => s.runs.length).toBe(1)
    const b = post(s, '/verify/b')
    const queued = async () => (await json(await fetch(`${s.url}/healthz`, { headers: auth }))).queued
    await expect.poll(queued).toBe(1)
    const stopped = s.served.stopAll()
    const [ra, rb] = await Promise.all([a, b])
    expect([ra.status, (await json(ra)).verdict]).toEqual([412, 'interrupted'])
    expect([rb.status, (await json(rb)).error]).toEqual([503, 'serve is shutting down; this run was not started'])
    await stopped
    const late = await post(s, '/verify/c')
    expect(late.status).toBe(503)
    expect(s.runs.map((r) => r.svc)).toEqual(['a'])
    const gate = new RunGate(1, 1)
    gate.close()
    expect(gate.enter('x', new AbortController().signal)).toEqual({ refused: 'shutdown' })
  })
})

describe('each target on its own', () => {
  const DEFAULTS = { knob: 'PREFILL_INTERLEAVE', value: '1', previous: '0', host: 'local', 'no-dropin-check': 'true' }
  const keys = tempDir('armproof-serve-keys-')
  writeFileSync(join(keys, 'a.key'), 'sk-a-0123456789\n')

  test("a missing api-key-file of one target fails that target's requests only, its problem at its place, no other target's path, no value of the file", () => {
    const file = writeTargets(DEFAULTS, [
      { svc: 'a', 'base-url': 'http://127.0.0.1:9', 'api-key-file': join(keys, 'a.key') },
      { svc: 'b', 'base-url': 'http://127.0.0.1:9' },
      { svc: 'c', 'base-url': 'http://127.0.0.1:9', 'api-key-file': join(keys, 'missing-c.key') },
    ])
    const loaded = loadServedTargets(file, { VERIFY_NO_DOTENV: '1' }, keys, undefined)
    if (!('targets' in loaded)) throw new Error(loaded.file.problems.join('\n'))
    expect([...loaded.targets.argv.keys()]).toEqual(['a', 'b'])
    const c = loaded.targets.broken.get('c')!
    expect(c.where).toBe('targets[2]')
    expect(c.spots).toEqual([expect.stringMatching(/^targets\.yaml:\d+ \(api-key-file\)$/)])
    // The full problem is the log's: what verify says of it.
    expect(loaded.problems.join('\n')).toContain('missing-c.key')
  })

  test('answers: /verify 412 and /analysis 200 with verdict error and its own problem; the other targets run; nothing of the file or of another target', async () => {
    const file = writeTargets(DEFAULTS, [
      { svc: 'a', 'base-url': 'http://127.0.0.1:9', 'api-key-file': join(keys, 'a.key') },
      { svc: 'c', 'base-url': 'http://127.0.0.1:9', 'api-key-file': join(keys, 'missing-c.key') },
    ])
    const loaded = loadServedTargets(file, { VERIFY_NO_DOTENV: '1' }, keys, undefined)
    const s = await app({ view: () => TargetsCache.viewOf(loaded) })
    const c = await post(s, '/verify/c')
    const body = await c.text()
    expect(c.status).toBe(412)
    expect(JSON.parse(body)).toMatchObject({ svc: 'c', verdict: 'error', reason: 'target_problem' })
    expect(JSON.parse(body).error).toMatch(
      /^targets\[1\] \(svc "c"\) in the targets file has 1 problem\(s\), at targets\.yaml:\d+ \(api-key-file\)/,
    )
    for (const never of [keys, 'a.key', 'missing-c.key', '127.0.0.1:9']) expect(body).not.toContain(never)
    const analysis = await post(s, '/analysis/c')
    expect([analysis.status, (await json(analysis)).verdict]).toEqual([200, 'error'])
    expect((await post(s, '/verify/a')).status).toBe(200)
    expect(s.runs.map((r) => r.svc)).toEqual(['a'])
  })

  test('a targets file that went bad (a symlink to a secret file): no run, its place said, never its lines', async () => {
    const dir = tempDir('armproof-serve-bad-')
    writeFileSync(join(dir, 'secret'), 'root:x:0:0:hunter2-secret-line\nsecond: [unclosed\n')
    symlinkSync(join(dir, 'secret'), join(dir, 'targets.yaml'))
    const loaded = loadServedTargets(join(dir, 'targets.yaml'), { VERIFY_NO_DOTENV: '1' }, dir, undefined)
    expect('file' in loaded).toBe(true)
    const s = await app({ view: () => TargetsCache.viewOf(loaded) })
    for (const path of ['/verify/llm-7', '/analysis/llm-7', '/runs/llm-7']) {
      const r = await post(s, path)
      const text = await r.text()
      expect([path, r.status]).toEqual([path, { '/verify/llm-7': 412, '/analysis/llm-7': 200, '/runs/llm-7': 202 }[path]])
      expect(text).not.toContain('hunter2')
      expect(text).not.toContain('unclosed')
      expect(text).toContain('"verdict":"error"')
    }
    expect(s.runs).toEqual([])
  })

  test('an svc longer than a request can name (129–253 characters) is refused at start', () => {
    const long = `llm-${'x'.repeat(140)}`
    const file = writeTargets(DEFAULTS, [{ svc: long, 'base-url': 'http://127.0.0.1:9' }])
    const loaded = loadServedTargets(file, { VERIFY_NO_DOTENV: '1' }, keys, undefined)
    expect('targets' in loaded && loaded.problems.join('\n')).toContain(
      'a request can never name it: POST /verify/<svc> takes 1 to 128 characters',
    )
    expect(route(`/verify/${long}`)).toEqual({ kind: 'none' })
  })

  test('the targets file is read once per change, not per request (its stat per request only)', async () => {
    const file = writeTargets(DEFAULTS, [{ svc: 'a', 'base-url': 'http://127.0.0.1:9' }])
    let reads = 0
    const load = (): LoadedTargets => {
      reads++
      return loadServedTargets(file, { VERIFY_NO_DOTENV: '1' }, keys, undefined)
    }
    const cache = new TargetsCache(file, load, load())
    const s = await app({ view: () => cache.current(), limits: { maxConnectionsPerClient: 256 } })
    await Promise.all(Array.from({ length: 50 }, () => post(s, '/verify/a')))
    await Promise.all(Array.from({ length: 50 }, () => post(s, '/verify/nope')))
    expect(reads).toBe(1)
    writeFileSync(file, JSON.stringify({ defaults: DEFAULTS, targets: [{ svc: 'b', 'base-url': 'http://127.0.0.1:9' }] }))
    utimesSync(file, new Date(), new Date(Date.now() + 5000))
    expect((await post(s, '/verify/b')).status).toBe(200)
    expect((await post(s, '/verify/a')).status).toBe(404)
    expect(reads).toBe(2)
  })

  test('a changed file is checked in a thread of its own: the same targets and problems as on the main thread', async () => {
    const file = writeTargets(DEFAULTS, [
      { svc: 'a', 'base-url': 'http://127.0.0.1:9' },
      { svc: 'b', 'base-url': 'http://127.0.0.1:9', 'api-key-file': 'missing-key.txt' },
      { svc: 'c', 'base-url': 'http://127.0.0.1:9', knob: 'NOT A KNOB' },
    ])
    const here = loadServedTargets(file, { VERIFY_NO_DOTENV: '1' }, keys, undefined)
    const there = await loadTargetsOffThread(file, { VERIFY_NO_DOTENV: '1' }, keys, undefined)
    expect(there).toEqual(here)
    expect('targets' in there && [[...there.targets.argv.keys()], [...there.targets.broken.keys()]]).toEqual([['a'], ['b', 'c']])
    // The file as a whole failing, too.
    writeFileSync(file, 'targets: [')
    expect(await loadTargetsOffThread(file, {}, keys, undefined)).toEqual(loadServedTargets(file, {}, keys, undefined))
  })

  test('a thread that cannot check the file: checked on the main thread, said once in the log with no path', async () => {
    const file = writeTargets(DEFAULTS, [{ svc: 'a', 'base-url': 'http://127.0.0.1:9' }])
    const main = () => loadServedTargets(file, { VERIFY_NO_DOTENV: '1' }, keys, undefined)
    const said: string[] = []
    const failing = () => Promise.reject(Object.assign(new Error(`Cannot find module ${file}`), { code: 'ERR_MODULE_NOT_FOUND' }))
    const check = offThreadOr(failing, main, (l) => void said.push(l))
    expect(await check()).toEqual(main())
    expect(await check()).toEqual(main())
    expect(said).toEqual(['armproof serve: the targets file is checked on the main thread (its own thread failed: ERR_MODULE_NOT_FOUND)'])
  })

  test('while a changed file of 1,000 targets is checked, /healthz answers and the requests that need the file wait for that one check', async () => {
    const many = (svc: string) => Array.from({ length: 1000 }, (_, i) => ({ svc: `${svc}-${i}`, 'base-url': 'http://127.0.0.1:9' }))
    const file = writeTargets(DEFAULTS, many('a'))
    let checks = 0
    let checked = false
    const load = (): Promise<LoadedTargets> => {
      checks++
      return loadTargetsOffThread(file, { VERIFY_NO_DOTENV: '1' }, keys, undefined)
    }
    const cache = new TargetsCache(file, load, loadServedTargets(file, { VERIFY_NO_DOTENV: '1' }, keys, undefined), {
      onChange: () => (checked = true),
    })
    const s = await app({ view: () => cache.current(), limits: { maxConnectionsPerClient: 256 } })
    writeFileSync(file, JSON.stringify({ defaults: DEFAULTS, targets: many('b') }))
    const asks = Array.from({ length: 5 }, (_, i) => post(s, `/verify/b-${i}`))
    await expect.poll(() => checks).toBe(1)
    // The check under way holds no answer of this thread: the probe's comes before it ends.
    const health = await fetch(`${s.url}/healthz`)
    expect([health.status, checked]).toEqual([200, false])
    expect((await Promise.all(asks)).map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
    expect([checked, checks]).toEqual([true, 1])
    expect((await post(s, '/verify/a-0')).status).toBe(404)
  })
})

describe('/analysis answers 200 for every outcome after the token', () => {
  test('busy, queue full, unknown target, serve failing: each a report-shaped error with verdict error (the status route keeps its statuses)', async () => {
    const p = parked()
    let throwing = false
    const s = await app({
      targets: ['a', 'b', 'c'],
      maxRuns: 1,
      queue: 1,
      run: (svc) => (throwing ? Promise.reject(new Error('ENOSPC: no space left, mkdtemp /tmp/armproof-serve-123-abcdef')) : p.run(svc)),
    })
    void post(s, '/verify/a').catch(() => {})
    await expect.poll(() => s.runs.length).toBe(1)
    void post(s, '/verify/b').catch(() => {})
    await expect.poll(async () => (await json(await fetch(`${s.url}/healthz`, { headers: auth }))).queued).toBe(1)
    const outcomes: Record<string, unknown> = {}
    for (const [svc, reason] of [
      ['a', 'busy'],
      ['c', 'queue_full'],
      ['zz', 'unknown_target'],
    ] as const) {
      const r = await post(s, `/analysis/${svc}`)
      outcomes[reason] = [r.status, (await json(r)).verdict, reason]
      expect(await post(s, `/verify/${svc}`).then((x) => x.status)).toBe(reason === 'unknown_target' ? 404 : 503)
    }
    expect(outcomes).toEqual({
      busy: [200, 'error', 'busy'],
      queue_full: [200, 'error', 'queue_full'],
      unknown_target: [200, 'error', 'unknown_target'],
    })
    p.gates.shift()!()
    await expect.poll(() => s.runs.length).toBe(2)
    p.gates.shift()!()
    await expect.poll(async () => (await json(await fetch(`${s.url}/healthz`, { headers: auth }))).running).toBe(0)
    throwing = true
    const failed = await post(s, '/analysis/c')
    const text = await failed.text()
    expect([failed.status, JSON.parse(text).verdict, JSON.parse(text).reason]).toEqual([200, 'error', 'serve_failed'])
    // The temp path is serve's business: never in an answer or the log.
    expect(text).not.toContain('armproof-serve-123')
    expect(text).toContain("(serve's run folder)")
    expect(s.logs.join('\n')).not.toContain('armproof-serve-123')
    // Serve's own failures move a counter; three in a row make /healthz say so (503), to anyone.
    await post(s, '/verify/c')
    await post(s, '/verify/c')
    const health = await fetch(`${s.url}/healthz`)
    expect([health.status, await health.json()]).toEqual([503, { status: 'failing' }])
    const page = parsePrometheusText(await (await fetch(`${s.url}/metrics`, { headers: auth })).text())
    expect(page.samples('armproof_serve_failures_total').find((x) => x.labels.kind === 'handler')?.value).toBe(3)
    expect(page.samples('armproof_serve_up')[0]?.value).toBe(0)
  })
})

describe('nothing before the token', () => {
  test('unauthenticated /healthz says up or down only, /metrics is 401; with the token the rest; --metrics-listen answers in full', async () => {
    const s = await app()
    expect(await (await fetch(`${s.url}/healthz`)).json()).toEqual({ status: 'ok' })
    expect(await (await fetch(`${s.url}/healthz`, { headers: auth })).json()).toEqual({ status: 'ok', running: 0, queued: 0, targets: 2 })
    const m = await fetch(`${s.url}/metrics`)
    expect(m.status).toBe(401)
    expect(await m.text()).not.toContain('armproof_serve')
    expect((await fetch(`${s.url}/metrics`, { headers: auth })).status).toBe(200)
    // The probe listener's pages (a server of their own in serve; its handler here).
    const { createServer } = await import('node:http')
    const probes = createServer(s.served.probes)
    await new Promise<void>((r) => probes.listen(0, '127.0.0.1', r))
    const port = (probes.address() as { port: number }).port
    try {
      expect(await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()).toEqual({ status: 'ok', running: 0, queued: 0, targets: 2 })
      expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toContain('armproof_serve_targets 2')
      expect((await fetch(`http://127.0.0.1:${port}/verify/llm-7`, { method: 'POST', headers: auth })).status).toBe(404)
    } finally {
      probes.close()
    }
  })

  test('unauthenticated requests are logged one per interval, the rest counted in one line', async () => {
    const s = await app({ quietLogMs: 1500, limits: { maxConnectionsPerClient: 256 } })
    await Promise.all(Array.from({ length: 200 }, (_, i) => post(s, i % 2 ? '/verify/llm-7' : '/nowhere', {})))
    await expect
      .poll(() => s.logs.some((l) => /199 more unauthenticated request\(s\) in the last 1\.5s from 1 address/.test(l)), { timeout: 4000 })
      .toBe(true)
    expect(s.logs).toHaveLength(2)
    await post(s, '/verify/llm-7')
    // An authenticated request is logged as ever: its run, its answer.
    expect(s.logs.slice(2)).toEqual([
      expect.stringContaining('llm-7: run started'),
      expect.stringMatching(/POST \/verify\/llm-7 from .* → 200 green/),
    ])
  })

  test('two Authorization headers are 400, never one of them chosen', async () => {
    const s = await app()
    const r = await rawExchange(
      s.port,
      `POST /verify/llm-7 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nAuthorization: Bearer nope\r\nContent-Length: 0\r\n\r\n`,
    )
    expect(r.status).toBe(400)
    expect(r.text).toContain('two Authorization headers')
    expect(s.runs).toEqual([])
  })

  test('the absolute form of the request target is the route of its path', async () => {
    const s = await app()
    const r = await rawExchange(
      s.port,
      `POST http://armproof-serve.armproof.svc:8080/verify/llm-7 HTTP/1.1\r\nHost: armproof-serve.armproof.svc:8080\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: 0\r\n\r\n`,
    )
    expect(r.status).toBe(200)
    expect(s.runs.map((x) => x.svc)).toEqual(['llm-7'])
  })

  test('a rotated token file holds from the next request, without a restart; a bad new text keeps the token before it', () => {
    const dir = tempDir('armproof-serve-token-')
    const file = join(dir, 'token')
    writeFileSync(file, `${TOKEN}\n`)
    const lines: string[] = []
    let failed = 0
    const source = new TokenSource(
      TOKEN,
      file,
      {},
      (l) => void lines.push(l),
      0,
      () => void failed++,
    )
    expect(source.current()).toBe(TOKEN)
    writeFileSync(file, 'rotated-0123456789abcdef\n')
    expect(source.current()).toBe('rotated-0123456789abcdef')
    writeFileSync(file, 'short\n')
    expect(source.current()).toBe('rotated-0123456789abcdef')
    expect(failed).toBe(1)
    expect(lines.join('\n')).not.toContain('rotated-0123')
    expect(lines.join('\n')).toContain('the token before it still holds')
  })
})

describe('asynchronous runs', () => {
  test('POST /runs/<svc> is 202 with its id and Location; GET /runs/<id> says queued, running, then done with the verdict and the report', async () => {
    const p = parked()
    const s = await app({ targets: ['a', 'b'], maxRuns: 1, run: p.run })
    const started = await post(s, '/runs/a')
    const a = await json(started)
    expect([started.status, started.headers.get('location'), a.state]).toEqual([202, `/runs/${a.id}`, 'queued'])
    const b = await json(await post(s, '/runs/b', auth, JSON.stringify({ id: 'b-rev-7f9c2d' })))
    expect(b).toMatchObject({ id: 'b-rev-7f9c2d', state: 'queued', waitUntil: expect.any(String) })
    const poll = async (id: unknown) => json(await fetch(`${s.url}/runs/${id}`, { headers: auth }))
    await expect.poll(async () => (await poll(a.id)).state).toBe('running')
    expect(await poll(a.id)).not.toHaveProperty('verdict')
    // The same id again while its run is in progress: that run, not a second one.
    expect((await json(await post(s, '/runs/b', auth, JSON.stringify({ id: 'b-rev-7f9c2d' })))).id).toBe('b-rev-7f9c2d')
    expect((await post(s, '/runs/a', auth, JSON.stringify({ id: 'b-rev-7f9c2d' }))).status).toBe(409)
    expect((await post(s, '/runs/a')).status).toBe(503)
    p.gates.shift()!()
    await expect.poll(async () => (await poll(a.id)).state).toBe('done')
    expect(await poll(a.id)).toMatchObject({ state: 'done', verdict: 'green', report: { svc: 'a', verdict: 'green' } })
    await expect.poll(() => s.runs.length).toBe(2)
    p.gates.shift()!()
    await expect.poll(async () => (await poll('b-rev-7f9c2d')).verdict).toBe('green')
    // A finished run's id asked again while its target is busy: 503, and its old verdict is gone (a poller must not read it as the new).
    const hold = post(s, '/verify/b')
    await expect.poll(() => s.runs.length).toBe(3)
    expect((await post(s, '/runs/b', auth, JSON.stringify({ id: 'b-rev-7f9c2d' }))).status).toBe(503)
    expect((await fetch(`${s.url}/runs/b-rev-7f9c2d`, { headers: auth })).status).toBe(404)
    p.gates.shift()!()
    expect((await hold).status).toBe(200)
    expect((await fetch(`${s.url}/runs/${a.id}`)).status).toBe(401)
    expect((await fetch(`${s.url}/runs/r-000000000000000000000000`, { headers: auth })).status).toBe(404)
    expect(s.runs.map((r) => r.svc)).toEqual(['a', 'b', 'b'])
  })

  test('a run goes on without its client; finished runs are kept --keep-runs, then 404', async () => {
    const s = await app({ keepRunsMs: 100 })
    const { id } = (await json(await post(s, '/runs/llm-7'))) as { id: string }
    await expect.poll(async () => (await json(await fetch(`${s.url}/runs/${id}`, { headers: auth }))).verdict).toBe('green')
    await expect.poll(async () => (await fetch(`${s.url}/runs/${id}`, { headers: auth })).status).toBe(404)
  })

  test('an unknown target is 404 at once; a target with a problem is a run done with verdict error', async () => {
    const s = await app({
      view: () => {
        const v = goodTargets(['a'])
        if ('targets' in v.loaded)
          (v.loaded.targets.broken as Map<string, unknown>).set('c', {
            where: 'targets[1]',
            spots: ['targets.yaml:9 (knob)'],
            messages: ['x'],
          })
        return v
      },
    })
    expect((await post(s, '/runs/zz')).status).toBe(404)
    const c = await json(await post(s, '/runs/c'))
    expect(c).toMatchObject({ state: 'done', verdict: 'error', report: { reason: 'target_problem' } })
  })
})
