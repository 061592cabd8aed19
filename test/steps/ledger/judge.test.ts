// The boot ledger judge: only a resolved line counts (its message, after any log prefix, begins
// with the flag and its resolved value and names no other flag); the latest boot is read from
// the end; output the host seam had to cut is never judged. Parser attacked with random prefixes
// and random command-line echoes (seeded); the step run in-process against a fake host.
import { describe, expect, test } from 'vitest'
import { loadConfig, type Target } from '../../../helpers/config/load.ts'
import { MAX_HOST_OUTPUT, createHost, type HostClient, type HostResult, type HostRun } from '../../../helpers/seams/host.ts'
import { HttpError, type HttpClient } from '../../../helpers/seams/http.ts'
import { findResolved, logMessage } from '../../../helpers/steps/ledger/parse.ts'
import { DEFAULT_LEDGER_CMD, LEDGER_TAIL_LINES } from '../../../helpers/config/options.ts'
import { recordingSeams } from '../../../helpers/seams/record.ts'
import { replaySeams } from '../../../helpers/seams/replay.ts'
import { createContext } from '../../../helpers/steps/context.ts'
import { checkLedger, tailAsked } from '../../../helpers/steps/ledger/judge.ts'
import { pick, prng as rng } from '../../support/prng.ts'

/** Log prefixes as real loggers print them (vLLM, Python logging, podman --timestamps, journald, CRI). */
const PREFIXES = [
  '',
  'INFO 11-30 02:11:03 [ledger.py:73] ',
  'INFO 11-30 02:11:03.120 [ledger.py:73] ',
  '(APIServer pid=4242) INFO 11-30 02:11:03 [ledger.py:73] ',
  '2026-11-30T02:11:03.120000000+00:00 INFO 11-30 02:11:03 [ledger.py:73] ',
  '2026-11-30 02:11:03,120 - radiance.ledger - INFO - ',
  'INFO:radiance.ledger:',
  'WARNING 11-30 02:11:03 [ledger.py:73] ',
  'Nov 30 02:11:03 gpu-7 radiance[4242]: INFO 11-30 02:11:03 [ledger.py:73] ',
  '2026-11-30T02:11:03.120Z stdout F INFO [ledger.py:73] ',
  '\u001b[32mINFO\u001b[0m 11-30 02:11:03 [ledger.py:73] ',
  '[2026-11-30 02:11:03] ',
]

const FLAGS = ['--prefill-interleave', '--busy-prefill-chunk', '--checkpoint-policy', '--checkpoint-slots', '--stager-depth']

describe('a resolved line', () => {
  test('the runbook shape is resolved, through every log prefix', () => {
    for (const prefix of PREFIXES) {
      const [line] = findResolved(
        `${prefix}--checkpoint-slots 20 [auto] slots of 1.5 GiB each of a budget of 31.5 GiB, bound by None`,
        '--checkpoint-slots',
      )
      expect(line, prefix).toMatchObject({ value: '20', auto: true, boundBy: null })
      expect(logMessage(`${prefix}--checkpoint-slots 20`)).toBe('--checkpoint-slots 20')
    }
  })

  test('1000 random resolved lines behind random prefixes are found with their value', () => {
    const r = rng(0x1ed9e7)
    for (let i = 0; i < 1000; i++) {
      const flag = pick(r, FLAGS)
      const value = String(Math.floor(r() * 4096))
      const sep = pick(r, [' ', '=', '  '])
      const tailText = pick(r, [
        '',
        ' (default 0)',
        ' [auto] slots of 1.5 GiB each of a budget of 31.5 GiB, bound by checkpoint_budget',
        ', resolved',
      ])
      const line = `${pick(r, PREFIXES)}${flag}${sep}${value}${tailText}`
      const found = findResolved(line, flag)
      expect(found, line).toHaveLength(1)
      expect(found[0]!.value, line).toBe(value)
    }
  })

  test('1000 random command-line echoes holding the flag and a value are never resolved lines', () => {
    const r = rng(0xec40)
    const heads = [
      '+ exec radiance serve',
      '+ radiance serve',
      'exec radiance',
      'radiance serve',
      '+ /usr/bin/radiance',
      'Running: radiance serve',
      'cmd: radiance',
      '$ radiance',
      '++ exec /opt/radiance/bin/radiance serve',
      'args:',
    ]
    for (let i = 0; i < 1000; i++) {
      const flag = pick(r, FLAGS)
      const others = FLAGS.filter((f) => f !== flag)
      const before = Array.from({ length: Math.floor(r() * 3) }, () => `${pick(r, others)} ${Math.floor(r() * 9)}`)
      const after = Array.from({ length: Math.floor(r() * 3) }, () => `${pick(r, others)} ${Math.floor(r() * 9)}`)
      const words = [pick(r, heads), ...before, `${flag}${pick(r, [' ', '='])}16`, ...after].join(' ')
      const line = `${pick(r, PREFIXES)}${words}`
      expect(findResolved(line, flag), line).toEqual([])
    }
  })

  test('a properly prefixed line that names several flags is not one', () => {
    expect(findResolved('INFO 11-30 02:11:03 [ledger.py:73] --checkpoint-slots 16 --prefill-interleave 1', '--checkpoint-slots')).toEqual(
      [],
    )
    expect(findResolved('INFO 11-30 02:11:03 [ledger.py:73] --checkpoint-slots=16, --stager-depth=2', '--checkpoint-slots')).toEqual([])
  })

  test('a longer flag with the same start, or the flag inside prose, is not the flag', () => {
    expect(findResolved('INFO [x] --prefill-interleave-max 4', '--prefill-interleave')).toEqual([])
    expect(findResolved('INFO [x] set --prefill-interleave 4 to arm', '--prefill-interleave')).toEqual([])
  })

  test('the latest boot is the last resolved line', () => {
    const log = [
      'INFO 11-29 01:00:00 [l.py:1] --prefill-interleave 0 (default 0)',
      'INFO 11-30 01:00:00 [l.py:1] --prefill-interleave 1 (default 0)',
    ].join('\n')
    expect(findResolved(log, '--prefill-interleave').map((l) => l.value)).toEqual(['0', '1'])
  })

  test('a hostile 10 MB line is skipped quickly, not run through the prefix grammar', () => {
    const line = `${'[x] '.repeat(2_500_000)}--prefill-interleave 1`
    expect(findResolved(line, '--prefill-interleave')).toEqual([])
  })
})

function target(extra: string[] = []): Target {
  const r = loadConfig({
    argv: ['--svc', 'demo', '--knob', 'CHECKPOINT_SLOTS', '--value', '16', '--base-url', 'http://127.0.0.1:1', ...extra],
    env: {},
  })
  if (!r.ok) throw new Error(JSON.stringify(r.problems))
  return r.target
}

function fakeHost(result: Partial<HostResult>): HostClient & { runs: HostRun[] } {
  const runs: HostRun[] = []
  return {
    where: 'local',
    runs,
    async run(req) {
      runs.push(req)
      return { command: req.script, stdout: '', stderr: '', exitCode: 0, durationMs: 1, ...result }
    },
  }
}

/** The engine has loaded: /health answers 200 (a ledger that does not hold is read again once it does); nothing else is asked. */
const noHttp: HttpClient = {
  request: (req) =>
    req.url.endsWith('/health')
      ? Promise.resolve({ status: 200, headers: {}, body: '{}', url: req.url } as unknown as Awaited<ReturnType<HttpClient['request']>>)
      : Promise.reject(new Error(`the ledger step asks only /health, not ${req.url}`)),
}

async function judge(result: Partial<HostResult>, extra: string[] = []) {
  const host = fakeHost(result)
  const ctx = createContext({
    target: target(extra),
    http: noHttp,
    host,
    clock: { now: () => 0, sleep: async () => {} },
    choices: { pick: (_n, o) => o[0]! },
  })
  return { judgement: await checkLedger(ctx, {}), host }
}

describe('step ledger', () => {
  test('the default command reads the tail of the log and keeps {svc} substituted', async () => {
    expect(DEFAULT_LEDGER_CMD).toBe(`podman logs --tail ${LEDGER_TAIL_LINES} {svc}`)
    const { host } = await judge({
      stdout: 'INFO [l.py:1] --checkpoint-slots 16 slots of 1.5 GiB each of a budget of 31.5 GiB, bound by None\n',
    })
    expect(host.runs[0]!.script).toBe(`{ podman logs --tail ${LEDGER_TAIL_LINES} demo ; } 2>&1`)
  })

  test('a resolved line with the expected value passes', async () => {
    const { judgement } = await judge({
      stdout: 'INFO [l.py:1] --checkpoint-slots 16 slots of 1.5 GiB each of a budget of 31.5 GiB, bound by None\n',
    })
    expect(judgement.verdict).toBe('passed')
  })

  test("only the serve script's echo of its command line is red, never the proof of a ledger-only knob", async () => {
    const { judgement } = await judge({
      stdout: '+ exec radiance serve --served-model-name m --port 8000 --checkpoint-slots 16\nINFO [api_server.py:1] Starting server\n',
    })
    expect(judgement.verdict).toBe('failed')
    expect(judgement.observed).toContain('no resolved --checkpoint-slots line in 2 ledger lines')
    expect(judgement.observed).toContain('+ exec radiance serve')
    expect(judgement.next).toMatch(/value asked for, not the one the engine resolved/)
  })

  test('an echo shown in the message has its secret-looking flag values redacted', async () => {
    const { judgement } = await judge({
      stdout: '+ exec radiance serve --api-key sk-engine-own-key --hf-token=hf_abc --checkpoint-slots 16\n',
    })
    expect(judgement.verdict).toBe('failed')
    expect(JSON.stringify(judgement)).not.toMatch(/sk-engine-own-key|hf_abc/)
    expect(judgement.observed).toContain('--api-key [redacted] --hf-token=[redacted] --checkpoint-slots 16')
  })

  test('output the host seam had to cut is inconclusive, never judged', async () => {
    const { judgement } = await judge({
      stdout: 'INFO [l.py:1] --checkpoint-slots 16 slots of 1.5 GiB each of a budget of 31.5 GiB, bound by None\n',
      exitCode: null,
      failure: 'output-cut',
    })
    expect(judgement.verdict).toBe('inconclusive')
    expect(judgement.observed).toMatch(/64 MiB host-output cap and was cut/)
    expect(judgement.next).toContain(DEFAULT_LEDGER_CMD)
  })

  test('a full tail without a resolved line is inconclusive (the boot is older), not red', async () => {
    const stdout = `${'INFO [metrics.py:88] Avg prompt throughput: 0.0 tokens/s\n'.repeat(50)}`
    const { judgement } = await judge({ stdout }, ['--ledger-cmd', 'podman logs --tail 50 {svc}'])
    expect(judgement.verdict).toBe('inconclusive')
    expect(judgement.observed).toContain('in the last 50 lines')
    const short = await judge({ stdout: 'INFO [metrics.py:88] Avg prompt throughput: 0.0 tokens/s\n' }, [
      '--ledger-cmd',
      'podman logs --tail 50 {svc}',
    ])
    expect(short.judgement.verdict).toBe('failed')
  })

  test('tailAsked reads podman --tail and tail -n', () => {
    expect(tailAsked('podman logs --tail 500 {svc}')).toBe(500)
    expect(tailAsked('podman logs --tail=20 {svc}')).toBe(20)
    expect(tailAsked('journalctl -u {unit} | tail -n 300')).toBe(300)
    expect(tailAsked('podman logs {svc}')).toBeUndefined()
  })

  test("a log stamped with times whose latest boot began before the pid argv read started: inconclusive, never this pid's ledger", async () => {
    const r = loadConfig({
      argv: ['--svc', 'llm-3', '--engine', 'llama.cpp', '--knob', 'PARALLEL', '--value', '2', '--base-url', 'http://127.0.0.1:1'],
      env: {},
    })
    if (!r.ok) throw new Error(JSON.stringify(r.problems))
    const log = [
      '2026-12-02T06:00:00.000000000+00:00 0.00.000.398 I srv  llama_server: initializing ...',
      "2026-12-02T06:00:00.100000000+00:00 0.00.020.523 I srv    load_model: initializing, n_slots = 2, n_ctx_slot = 2048, kv_unified = 'false'",
    ].join('\n')
    const ctx = createContext({
      target: r.target,
      http: noHttp,
      host: fakeHost({ stdout: `${log}\n` }),
      clock: { now: () => 0, sleep: async () => {} },
      choices: { pick: (_n, o) => o[0]! },
    })
    const process = (iso: string) => ({
      pid: '812',
      flagHeld: true,
      foundBy: 'listener' as const,
      startTimeSeconds: Date.parse(iso) / 1000,
      startTimeResolution: 0.01,
      listenerTied: true,
    })
    const later = await checkLedger(ctx, { engineProcess: process('2026-12-02T07:00:00Z') as never })
    expect(later.verdict).toBe('inconclusive')
    expect(later.observed).toContain('before pid 812 started at 2026-12-02T07:00:00.000Z')
    expect(later.next).toContain('--ledger-cmd')
    // The same log for the pid that printed it: passed.
    expect((await checkLedger(ctx, { engineProcess: process('2026-12-02T06:00:00.5Z') as never })).verdict).toBe('passed')
  })

  describe('verify started while the engine loads: the ledger is read once loading has ended', () => {
    const EARLY = 'INFO [api_server.py:1] Starting server\n'
    const RESOLVED = `${EARLY}INFO [l.py:1] --checkpoint-slots 16 slots of 1.5 GiB each of a budget of 31.5 GiB, bound by None\n`
    /** /health: refused, then 503, then `last` (200 once loaded) for every later ask; the log as it stands at each ask. */
    const loading = (last: number | null, logs: { early: string; late: string }) => {
      const http = {
        asks: 0,
        request(req: { url: string }) {
          http.asks++
          if (http.asks === 1) return Promise.reject(new HttpError('refused', req.url, 'ECONNREFUSED'))
          if (http.asks === 2 || last === null) return Promise.resolve({ status: 503, headers: {}, body: '', url: req.url })
          return Promise.resolve({ status: last, headers: {}, body: '{}', url: req.url })
        },
      }
      // The engine's log grows while it loads: what a read sees depends on when it is made.
      const host = fakeHost({})
      const run = host.run.bind(host)
      host.run = async (req) => ({ ...(await run(req)), stdout: http.asks >= 3 ? logs.late : logs.early })
      return { http: http as unknown as HttpClient & { asks: number }, host }
    }
    let now = 0
    const judgeWith = (t: { http: HttpClient; host: HostClient }) =>
      checkLedger(
        createContext({
          target: target(['--health-budget', '10s']),
          http: t.http,
          host: t.host,
          clock: { now: () => now, sleep: async (ms: number) => void (now += ms) },
          choices: { pick: (_n, o) => o[0]! },
        }),
        {},
      )

    test('the line printed when loading ends: read after /health answered 200, so passed, saying when; the health step is handed the wait', async () => {
      const t = loading(200, { early: EARLY, late: RESOLVED })
      const j = await judgeWith(t)
      expect(j.verdict).toBe('passed')
      expect(t.host.runs).toHaveLength(1)
      expect(j.observed).toMatch(/\(read once \/health answered 200, after .* of loading\)$/)
      expect(j.evidence.readAt).toMatchObject({ health: 'loaded' })
      expect(j.gives?.loadWait).toMatchObject({ state: 'loaded' })
      expect(j.gives!.loadWait!.waitedMs).toBeGreaterThan(0)
    })

    test('still loading when the health budget ends: inconclusive with the next step, never red', async () => {
      const j = await judgeWith(loading(null, { early: EARLY, late: EARLY }))
      expect(j.verdict).toBe('inconclusive')
      expect(j.observed).toContain('had not finished loading within the health budget')
      expect(j.next).toContain('--health-budget')
      expect(j.evidence.readAt).toMatchObject({ health: 'loading' })
      expect(j.gives?.loadWait).toMatchObject({ state: 'loading' })
    })

    test('loaded and still no resolved line: red, once the log had its few seconds to catch up (read again meanwhile)', async () => {
      const t = loading(200, { early: EARLY, late: EARLY })
      const j = await judgeWith(t)
      expect(j.verdict).toBe('failed')
      expect(t.host.runs.length).toBeGreaterThan(1)
      expect(j.evidence.readAt?.reads).toBe(t.host.runs.length)
    })

    test('a log that lags behind the engine (its logger thread, journald): the line that arrives a read later is read', async () => {
      const t = loading(200, { early: EARLY, late: EARLY })
      let reads = 0
      const run = t.host.run.bind(t.host)
      t.host.run = async (req) => ({ ...(await run(req)), stdout: ++reads >= 2 ? RESOLVED : EARLY })
      const j = await judgeWith(t)
      expect(j.verdict).toBe('passed')
      expect(j.evidence.readAt).toMatchObject({ health: 'loaded', reads: 2 })
    })

    test('a /health that answers 401: the wait ends at once, the log is read and judged (the health step names the mistake)', async () => {
      const t = loading(401, { early: EARLY, late: RESOLVED })
      const j = await judgeWith(t)
      expect(j.verdict).toBe('passed')
      expect(j.evidence.readAt).toMatchObject({ health: 'other' })
    })
  })
})

describe('the host seam says when it cut the output, and record/replay carry it', () => {
  const capped = createHost({ host: { kind: 'local' }, sshOpts: [], deployUser: null, maxOutputBytes: 4096 })

  test('the real cap is 64 MiB', () => {
    expect(MAX_HOST_OUTPUT).toBe(64 * 1024 * 1024)
  })

  test('output past the cap is marked output-cut, keeps exactly the cap, and stops an endless command', async () => {
    // An endless writer: if the cut did not stop it, only the 10-minute command timeout would.
    const r = await capped.run({ script: 'yes kestrel', timeoutMs: 600_000 })
    expect(r.failure).toBe('output-cut')
    expect(r.stdout.length).toBe(4096)
    expect(r.exitCode).toBeNull()
  })

  test('stderr counts towards the cap too', async () => {
    expect((await capped.run({ script: 'head -c 5000 /dev/zero >&2', timeoutMs: 10_000 })).failure).toBe('output-cut')
  })

  test('output at the cap is whole, not cut', async () => {
    const r = await capped.run({ script: 'head -c 4096 /dev/zero | tr "\\0" x', timeoutMs: 10_000 })
    expect(r.failure).toBeUndefined()
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toBe('x'.repeat(4096))
  })

  test('a recorded output-cut replays as output-cut', async () => {
    const live = {
      http: noHttp,
      host: fakeHost({ stdout: 'partial', exitCode: null, failure: 'output-cut' }),
      clock: { now: () => 1000, sleep: async () => {} },
    }
    const rec = recordingSeams(live, null)
    const r = await rec.host.run({ script: 'podman logs demo', timeoutMs: 1000 })
    expect(r.failure).toBe('output-cut')
    expect(rec.recording.host[0]).toMatchObject({ failure: 'output-cut', stdout: 'partial' })
    const t = target()
    const replay = replaySeams(
      {
        meta: {
          format: 1,
          svc: 'demo',
          knob: 'CHECKPOINT_SLOTS',
          value: '16',
          previous: null,
          baseUrl: '',
          host: 'local',
          model: null,
          recordedAt: '',
          tool: { name: 'armproof', version: '0' },
          choices: {},
          clock: [],
          startedAtMs: 0,
          target: t,
        },
        http: [],
        host: rec.recording.host,
      },
      t,
      'fixtures/x',
    )
    expect((await replay.host.run({ script: 'podman logs demo', timeoutMs: 1000 })).failure).toBe('output-cut')
  })
})
