// Step `argv` (helpers/steps/argv/judge.ts) called directly, its host a made-up /proc
// (test/support/fake-proc.ts): each verdict with its expected, observed, where and next, and the
// engine process it hands to the meter (held or not). The command line is read as the engine's
// parser reads it; random command lines (seeded) are green exactly when the occurrence the parser
// keeps, the last one, carries the value.
import { describe, expect, test } from 'vitest'
import { checkArgv } from '../../../helpers/steps/argv/judge.ts'
import type { InputsOf } from '../../../helpers/steps/context.ts'
import { fakeProcHost, type FakeHostState } from '../../support/fake-proc.ts'
import { pick, prng } from '../../support/prng.ts'
import { stepContext, stepTarget } from '../../support/step-context.ts'
import { HttpError, type HttpClient, type HttpResponse } from '../../../helpers/seams/http.ts'

const PROC = '(pid 4242 holds the listening socket of port 8000 (0.0.0.0))'
const WHERE = "local: tr '\\0' ' ' < /proc/4242/cmdline"
/** The build's flags as step help read them from the reference engine's --help. */
const BUILD_FLAGS = ['--port', '--prefill-interleave', '--busy-prefill-chunk', '--served-model-name'].map((name) => ({
  name,
  takesValue: true,
}))

const engine = (argv: string[]): FakeHostState => ({
  procs: [{ pid: '4242', name: 'radiance', argv: ['/usr/bin/radiance', '--port', '8000', ...argv], sockets: [{ port: 8000 }] }],
})

async function judge(args: string[], state: FakeHostState, inputs: InputsOf<'argv'> = {}) {
  return checkArgv(stepContext(stepTarget(['--knob', 'PREFILL_INTERLEAVE', ...args]), fakeProcHost(state)), inputs)
}

describe('step argv, against the engine process serving the base URL', () => {
  test('the flag with the value is green; the process it read goes to the meter as held', async () => {
    const j = await judge(['--value', '1'], engine(['--prefill-interleave', '1']))
    expect([j.verdict, j.expected, j.observed, j.where, j.next]).toEqual([
      'passed',
      '--prefill-interleave 1',
      `--prefill-interleave 1 ${PROC}`,
      WHERE,
      undefined,
    ])
    expect(j.gives?.engineProcess).toEqual({
      pid: '4242',
      argvHeld: true,
      startTimeSeconds: 1764500010,
      startTimeResolution: 0.01,
      foundBy: 'listener',
      listenerTied: true,
      tie: { by: 'listener', said: "pid 4242 holds the listening socket of port 8000 on the base URL's host" },
    })
  })

  test('at its default, a flag passed only when not the default must be absent: absent is green, present is red', async () => {
    const absent = await judge(['--value', '0'], engine([]))
    expect([absent.verdict, absent.expected, absent.observed]).toEqual([
      'passed',
      'no --prefill-interleave (unset means default 0)',
      `no --prefill-interleave in argv: unset means default 0 ${PROC}`,
    ])
    expect(absent.gives?.engineProcess?.argvHeld).toBe(true)
    const present = await judge(['--value', '0'], engine(['--prefill-interleave', '0']))
    expect([present.verdict, present.observed, present.where]).toEqual(['failed', 'argv carries --prefill-interleave 0', WHERE])
    expect(present.next).toBe(
      'the serve script passes --prefill-interleave only when it differs from 0, yet argv has it: the running engine was not started by the serve script you deployed, or PREFILL_INTERLEAVE is not 0; redeploy --service llm-7',
    )
    expect(present.gives?.engineProcess?.argvHeld).toBe(false)
  })

  test('the flag missing is red: it did not reach the engine, with the command line seen', async () => {
    const j = await judge(['--value', '1'], engine([]))
    expect([j.verdict, j.observed, j.where]).toEqual(['failed', 'no --prefill-interleave in argv: /usr/bin/radiance --port 8000', WHERE])
    expect(j.next).toBe(
      "the flag did not reach the engine: check PREFILL_INTERLEAVE=1 in llm-7's env, that the serve script passes --prefill-interleave (it adds it only when the value is not 0), and redeploy --service llm-7",
    )
  })

  test('another value is red, and the occurrence the parser keeps (the last, _ read as -) is named', async () => {
    const j = await judge(['--value', '1'], engine(['--prefill-interleave', '1', '--prefill_interleave', '2']))
    expect([j.verdict, j.where]).toEqual(['failed', WHERE])
    expect(j.observed).toBe(
      'argv carries --prefill-interleave 1, --prefill_interleave 2 (_ read as -); the parser keeps --prefill_interleave 2: the engine runs with --prefill-interleave 2',
    )
    expect(j.next).toBe(
      "the engine runs with --prefill-interleave 2, not 1: check PREFILL_INTERLEAVE in llm-7's env and every place the serve script or a config file sets --prefill-interleave, and redeploy --service llm-7",
    )
  })

  test("a unique prefix is the flag only against the build's flags: without them, inconclusive; with them, read", async () => {
    const unknown = await judge(['--value', '1'], engine(['--prefill', '1']))
    expect([unknown.verdict, unknown.observed]).toEqual([
      'inconclusive',
      `cannot tell whether --prefill names --prefill-interleave: the build's flag list is unknown (step help did not read it) ${PROC}`,
    ])
    expect(unknown.next).toBe("make step help read the build's --help (check --help-cmd), so a unique prefix can be told from another flag")
    const known = await judge(['--value', '1'], engine(['--prefill', '1']), { buildFlags: BUILD_FLAGS })
    expect([known.verdict, known.observed]).toEqual(['passed', `--prefill 1 (a unique prefix) ${PROC}`])
  })

  test("a command line the engine's parser would refuse is inconclusive: that engine cannot have started so", async () => {
    const j = await judge(['--value', '1'], engine(['--prefill-interleave']))
    expect([j.verdict, j.observed]).toEqual([
      'inconclusive',
      `the engine's parser would refuse this command line: argument --prefill-interleave: expected one argument ${PROC}`,
    ])
    expect(j.next).toContain('check that --help-cmd runs the same build as the engine')
  })

  test('no engine process is red (not running), with what was looked at and how to find it', async () => {
    const j = await judge(['--value', '1'], { procs: [] })
    expect([j.verdict, j.expected]).toEqual(['failed', 'the one engine process serving http://127.0.0.1:8000'])
    expect(j.observed).toBe(
      'engine not running: pidof radiance found no process, no container answers for llm-7, and no process here listens on port 8000',
    )
    expect(j.where).toBe('local: pidof radiance; /proc/net/tcp{,6}; /proc/<pid>/{fd,stat,cmdline}')
    expect(j.next).toContain('set --process if it runs under another name')
    expect(j.gives).toEqual({})
  })

  test('an unreadable command line, an unreachable host, or no value to expect: inconclusive, and no process handed on unread', async () => {
    const hidden = await judge(['--value', '1'], { procs: [{ pid: '4242', name: 'radiance', argv: [], sockets: [{ port: 8000 }] }] })
    expect([hidden.verdict, hidden.observed, hidden.where]).toEqual([
      'inconclusive',
      `could not read /proc/4242/cmdline of the engine ${PROC}`,
      WHERE,
    ])
    expect(hidden.next).toContain('hidepid')
    expect(hidden.gives).toEqual({})
    const unreachable = await judge(['--value', '1'], { procs: [], failure: 'unreachable' })
    expect([unreachable.verdict, unreachable.expected, unreachable.observed]).toEqual([
      'inconclusive',
      '--prefill-interleave 1',
      'could not run the command (unreachable, exit 255): ssh: connect to host gpu-7 port 22: Connection refused',
    ])
    expect(unreachable.next).toBe('ssh could not reach the host; check --host and --ssh-opts (port, key), then retry')
    // Where is one line naming the lookup's reads, not the survey's many-line script.
    expect(unreachable.where).not.toContain('\n')
    expect(unreachable.where).toMatch(/pidof .*\/proc\/net\/tcp/)
    // An enum knob without --value whose default --help did not print.
    const policy = await checkArgv(stepContext(stepTarget(['--knob', 'CHECKPOINT_POLICY']), fakeProcHost(engine([]))), {})
    expect([policy.verdict, policy.expected, policy.observed, policy.next]).toEqual([
      'inconclusive',
      '--checkpoint-policy as the build default',
      'no --checkpoint-policy',
      'the expected value is the build default, which --help did not print: pass --value',
    ])
  })

  test('property: green exactly when the last occurrence, in any spelling, carries the value; other flags change nothing (seeded)', async () => {
    const spell = (random: () => number, v: string): string[] =>
      pick(random, [['--prefill-interleave', v], [`--prefill-interleave=${v}`], ['--prefill_interleave', v], ['--prefill-inter', v]])
    const DECOYS = [
      ['--busy-prefill-chunk', '1'],
      ['--served-model-name', 'prefill-interleave-1'],
      ['--port', '8000'],
      ['--busy-prefill-chunk=2'],
    ]
    for (let seed = 1; seed <= 150; seed++) {
      const random = prng(seed)
      const want = pick(random, ['1', '2'])
      const argv: string[] = []
      let last: string | undefined
      for (let i = Math.floor(random() * 5); i > 0; i--) {
        if (random() < 0.5) argv.push(...pick(random, DECOYS))
        else argv.push(...spell(random, (last = pick(random, ['0', '1', '2', '3']))))
      }
      const j = await judge(['--value', want], engine(argv), { buildFlags: BUILD_FLAGS })
      const why = `seed ${seed}: want ${want}, argv ${argv.join(' ')}`
      expect(j.verdict, why).toBe(last === want ? 'passed' : 'failed')
      expect(j.gives?.engineProcess?.argvHeld, why).toBe(last === want)
    }
  })
})

describe('step argv ties the endpoint to the pid it read, whatever the knob proof', () => {
  // A vLLM found by its script while loading (its port not bound yet); on the base URL's port, maybe nginx.
  const VLLM = {
    pid: '50',
    name: 'vllm',
    argv: ['/opt/venv/bin/python3', '/opt/venv/bin/vllm', 'serve', 'm', '--port', '8000', '--max-num-seqs', '8'],
  }
  const NGINX = { pid: '3', name: 'nginx', argv: ['nginx: master process'], sockets: [{ port: 8000 }] }
  /** pid 50's start as the lookup computes it (btime 1764500000 + 1000 ticks / 100). */
  const START = 1764500010
  /** /health: refused twice, 503 once (loading), then 200; /metrics: a page with `start` as its process_start_time_seconds (none: no such line; null: 502). */
  function loadingHttp(start: number | null | 'none') {
    const asked: string[] = []
    let healths = 0
    const http: HttpClient = {
      async request(req): Promise<HttpResponse> {
        const path = new URL(req.url).pathname
        asked.push(`${req.method} ${path}`)
        const answer = (status: number, body: string) => ({ status, headers: {}, body, url: req.url, redirects: [], durationMs: 1 })
        if (path === '/health') {
          healths++
          if (healths <= 2) throw new HttpError('refused', req.url, 'connect ECONNREFUSED')
          return healths === 3 ? answer(503, '') : answer(200, '')
        }
        if (path === '/metrics') {
          if (start === null) return answer(502, '<html><body>502 Bad Gateway</body></html>')
          return answer(
            200,
            `# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 0.0\n${start === 'none' ? '' : `process_start_time_seconds ${start}\n`}`,
          )
        }
        throw new Error(`not asked in this test: ${req.url}`)
      },
    }
    return { http, asked }
  }
  const judgeVllm = (knob: string, value: string, state: FakeHostState | (() => FakeHostState), http?: HttpClient) => {
    const ctx = stepContext(stepTarget(['--engine', 'vllm', '--knob', knob, '--value', value]), fakeProcHost(state))
    return checkArgv(http ? { ...ctx, http } : ctx, {})
  }
  const BOTH = [
    ['MAX_NUM_SEQS', '8', 'a knob proven by its ledger alone'],
    ['ENABLE_PREFIX_CACHING', 'true', 'a knob with a counter'],
  ] as const

  test.each(BOTH)(
    '%s (%s): another engine behind the proxy on the port is inconclusive at argv, naming the holder, once loading ended (%s)',
    async (knob, value) => {
      const { http, asked } = loadingHttp(START + 3600)
      const j = await judgeVllm(knob, value, { procs: [VLLM, NGINX] }, http)
      expect(j.verdict).toBe('inconclusive')
      expect(j.observed).toMatch(
        /; but nothing ties the endpoint to pid 50: port 8000 is served by pid 3 \(nginx: master process\) on 0\.0\.0\.0, not by pid 50: the endpoint is served by a process started at 2025-11-30T11:53:30\.000Z \(process_start_time_seconds at http:\/\/127\.0\.0\.1:8000\/metrics\), pid 50 started at 2025-11-30T10:53:30\.000Z: another engine answers there$/,
      )
      expect(j.next).toBe(
        'point --base-url at the engine step argv read, not at a load balancer or proxy in front of another, or tell armproof which process serves the URL (--process, --pid-cmd); then run again',
      )
      expect(j.evidence).toMatchObject({ tie: null, servedBy: [{ pid: '3', name: 'nginx: master process', address: '0.0.0.0' }] })
      // Waited for loading to end (refused, refused, 503, 200), then one page.
      expect(asked).toEqual(['GET /health', 'GET /health', 'GET /health', 'GET /health', 'GET /metrics'])
      expect(j.gives?.engineProcess?.tie).toBeUndefined()
    },
  )

  test.each(BOTH)(
    "%s (%s): a proxy in front of this very engine is green, tied by the page's start time and said (%s)",
    async (knob, value) => {
      const { http } = loadingHttp(START)
      const j = await judgeVllm(knob, value, { procs: [VLLM, NGINX] }, http)
      expect(j.verdict, j.observed).toBe('passed')
      expect(j.observed).toMatch(
        /; the endpoint is tied to it: port 8000 is served by pid 3 \(nginx: master process\) on 0\.0\.0\.0 in front of it: http:\/\/127\.0\.0\.1:8000\/metrics's process_start_time_seconds is pid 50's start \(2025-11-30T10:53:30\.000Z\)$/,
      )
      expect(j.gives?.engineProcess?.tie?.by).toBe('start-time')
    },
  )

  test.each(BOTH)(
    '%s (%s): a page without process_start_time_seconds, or none at all, ties nothing: inconclusive (%s)',
    async (knob, value) => {
      for (const page of ['none', null] as const) {
        const { http } = loadingHttp(page)
        const j = await judgeVllm(knob, value, { procs: [VLLM, NGINX] }, http)
        expect(j.verdict, j.observed).toBe('inconclusive')
        expect(j.observed).toContain(
          'but nothing ties the endpoint to pid 50: port 8000 is served by pid 3 (nginx: master process) on 0.0.0.0, not by pid 50, and http://127.0.0.1:8000/metrics',
        )
        expect(j.observed).toMatch(
          page === 'none'
            ? /carries no \(single\) process_start_time_seconds/
            : /served no page whose process_start_time_seconds could tie the endpoint to it \(HTTP 502/,
        )
        expect(j.observed).toContain('the probes and the ledger would be about another process than the one whose command line was read')
        expect(j.next).toBe(
          "point --base-url at the engine's own port (where pid 50 listens once loaded), or give --pid-cmd naming the process that serves it; then run again",
        )
      }
    },
  )

  test('started while the engine loads (port closed, then 503), with no one else on the port: green once it holds the listening socket', async () => {
    let listening = false
    const { http, asked } = loadingHttp('none')
    const wrapped: HttpClient = {
      async request(req) {
        const r = await http.request(req)
        if (r.status === 200) listening = true
        return r
      },
    }
    const j = await judgeVllm('MAX_NUM_SEQS', '8', () => ({ procs: [listening ? { ...VLLM, sockets: [{ port: 8000 }] } : VLLM] }), wrapped)
    expect(j.verdict, j.observed).toBe('passed')
    expect(j.observed).toMatch(/; the endpoint is tied to it: pid 50 holds the listening socket of port 8000 once loaded/)
    expect(j.gives?.engineProcess).toMatchObject({ pid: '50', listenerTied: true, foundBy: 'listener', tie: { by: 'listener' } })
    // Tied by the socket: no page was needed.
    expect(asked.filter((a) => a === 'GET /metrics')).toEqual([])
  })

  test('still loading past the health budget: inconclusive, never green', async () => {
    const http: HttpClient = { request: (req) => Promise.reject(new HttpError('refused', req.url, 'connect ECONNREFUSED')) }
    const ctx = stepContext(
      stepTarget(['--engine', 'vllm', '--knob', 'MAX_NUM_SEQS', '--value', '8', '--health-budget', '2s']),
      fakeProcHost({ procs: [VLLM] }),
    )
    let t = 0
    const j = await checkArgv({ ...ctx, http, clock: { now: () => t, sleep: async (ms) => void (t += ms) } }, {})
    expect(j.verdict).toBe('inconclusive')
    expect(j.observed).toMatch(
      /no process listened on port 8000 when argv read it, and \/health did not answer 200 within 2\.0s \(refused \(loading\)\)/,
    )
  })

  test("a red command line with another process on the port is not red: it may not be the endpoint's engine", async () => {
    const { http } = loadingHttp(START + 3600)
    const j = await judgeVllm('MAX_NUM_SEQS', '16', { procs: [VLLM, NGINX] }, http)
    expect(j.verdict).toBe('inconclusive')
    expect(j.observed).toMatch(
      /^argv carries --max-num-seqs 8: the engine runs with --max-num-seqs 8; but nothing ties the endpoint to pid 50/,
    )
    // The same red where the proxy fronts this very engine stays red.
    const tied = await judgeVllm('MAX_NUM_SEQS', '16', { procs: [VLLM, NGINX] }, loadingHttp(START).http)
    expect(tied.verdict).toBe('failed')
  })

  test('a red command line of the only engine, no one else on its port, stays red, tied or not', async () => {
    // Never loaded within the budget: untied, and still red.
    const http: HttpClient = { request: (req) => Promise.reject(new HttpError('refused', req.url, 'connect ECONNREFUSED')) }
    const ctx = stepContext(
      stepTarget(['--engine', 'vllm', '--knob', 'MAX_NUM_SEQS', '--value', '16', '--health-budget', '2s']),
      fakeProcHost({ procs: [VLLM] }),
    )
    let t = 0
    const j = await checkArgv({ ...ctx, http, clock: { now: () => t, sleep: async (ms) => void (t += ms) } }, {})
    expect([j.verdict, j.observed]).toEqual(['failed', 'argv carries --max-num-seqs 8: the engine runs with --max-num-seqs 8'])
    expect(j.gives?.engineProcess?.tie).toBeUndefined()
    // Loaded and then listening: tied (the steps after it may read the endpoint for it), still red.
    let listening = false
    const loaded: HttpClient = {
      async request(req) {
        listening = true
        return { status: 200, headers: {}, body: '', url: req.url, redirects: [], durationMs: 1 }
      },
    }
    const tied = await judgeVllm(
      'MAX_NUM_SEQS',
      '16',
      () => ({ procs: [listening ? { ...VLLM, sockets: [{ port: 8000 }] } : VLLM] }),
      loaded,
    )
    expect(tied.verdict).toBe('failed')
    expect(tied.gives?.engineProcess?.tie?.by).toBe('listener')
  })

  test("the container --svc names ties it, unless a process other than the runtime's port forwarder holds the port", async () => {
    const forwarded: FakeHostState = { container: '50', procs: [VLLM, { pid: '7', name: 'rootlessport', sockets: [{ port: 8000 }] }] }
    const ctx = (state: FakeHostState, http?: HttpClient) => {
      const c = stepContext(
        stepTarget(['--engine', 'vllm', '--knob', 'MAX_NUM_SEQS', '--value', '8', '--process', 'vllm']),
        fakeProcHost(state),
      )
      return http ? { ...c, http } : c
    }
    const j = await checkArgv(ctx(forwarded), {})
    expect(j.verdict, j.observed).toBe('passed')
    expect(j.gives?.engineProcess?.tie).toEqual({
      by: 'container',
      said: 'pid 50 is the engine of container llm-7, which publishes the endpoint',
    })
    const proxied = await checkArgv(ctx({ container: '50', procs: [VLLM, NGINX] }, loadingHttp(START + 3600).http), {})
    expect(proxied.verdict).toBe('inconclusive')
    expect(proxied.observed).toContain('port 8000 is served by pid 3 (nginx: master process) on 0.0.0.0, not by pid 50')
  })
})
