// `armproof serve` end to end: the command itself (options, token, the targets file checked as
// `pnpm verify --targets` checks it), then real runs (a child `armproof verify` per request) against
// reference engines, asked the way Argo Rollouts' web provider and Flagger's webhooks ask: green 200,
// red and inconclusive 412, the body route 200 with the verdict for jsonPath, a run stopped at
// --run-timeout answered with its interrupted report, and /metrics as Prometheus reads it.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startEngine, type EngineHandle } from '../../engine/launch.ts'
import type { Report } from '../../helpers/report/json.ts'
import { parsePrometheusText } from '../../helpers/prom/parse.ts'
import { serve } from '../../helpers/serve/command.ts'
import { runEnv } from '../../helpers/serve/run.ts'
import { engineEntry, writeTargets } from '../support/fleet.ts'
import { cleanup, runVerify, verdicts } from '../support/run-verify.ts'
import { argoRequest, flaggerRequest, TOKEN } from '../support/serve.ts'
import { tempDir } from '../support/temp-dir.ts'

const unique = (prefix: string): string => `${prefix}${Math.random().toString(36).slice(2, 8)}`
const engines: Record<'healthy' | 'ignored' | 'loading', EngineHandle> = {} as never
const DEFAULTS = {
  knob: 'PREFILL_INTERLEAVE',
  value: '1',
  previous: '0',
  host: 'local',
  'no-dropin-check': 'true',
  'health-budget': '4s',
  'meter-window': '3s',
  'probe-timeout': '3s',
  'host-timeout': '10s',
}
let targetsFile = ''
const stops: AbortController[] = []
const exits: Array<Promise<number>> = []

/** Starts `serve` in this process (its runs are child processes) on a free loopback port; its log lines collected. */
async function served(
  args: string[],
  env: Record<string, string> = { ARMPROOF_SERVE_TOKEN: TOKEN },
): Promise<{ url: string; log: string[] }> {
  const log: string[] = []
  const stop = new AbortController()
  stops.push(stop)
  const url = await new Promise<string>((resolve, reject) => {
    const exit = serve({
      rawArgs: ['--listen', '127.0.0.1:0', ...args],
      env: { ...process.env, ...engines.healthy.env, CI: 'true', VERIFY_NO_DOTENV: '1', ...env },
      cwd: process.cwd(),
      out: { write: (t: string) => log.push(t) },
      err: { write: (t: string) => log.push(t) },
      onListening: resolve,
      stop: stop.signal,
    })
    exits.push(exit)
    exit.then((code) => reject(new Error(`serve exited ${code}: ${log.join('')}`)), reject)
  })
  return { url, log }
}

beforeAll(async () => {
  const args = ['--prefill-interleave', '1']
  const [healthy, ignored, loading] = await Promise.all([
    startEngine({ svc: unique('sh-'), processName: unique('sh-'), args }),
    startEngine({ svc: unique('si-'), processName: unique('si-'), args, faults: ['knob_ignored'] }),
    startEngine({ svc: unique('sl-'), processName: unique('sl-'), args, faults: ['health_503_forever'] }),
  ])
  Object.assign(engines, { healthy, ignored, loading })
  await Promise.all([healthy.waitReady(), ignored.waitReady()])
  // The loading engine answers 503 on /health for ever: inconclusive once its budget is out.
  // Nothing listens on port 9: the slow target's health step would wait out 5 minutes. Its host is
  // reached over ssh (a name that is not the URL's), so first contact's check of a port nothing on
  // the host serves does not apply and cannot end it first.
  const slow = { svc: 'slow', 'base-url': 'http://127.0.0.1:9', 'health-budget': '5m', host: 'deploy@gpu-7.invalid' }
  targetsFile = writeTargets(DEFAULTS, [engineEntry(healthy), engineEntry(ignored), engineEntry(loading, { 'health-budget': '1s' }), slow])
})

afterAll(async () => {
  for (const s of stops) s.abort()
  await Promise.allSettled(exits)
  await Promise.all(Object.values(engines).map((e) => e.stop()))
})

describe('starting', () => {
  const start = async (args: string[], env: Record<string, string> = {}) => {
    const out: string[] = []
    const code = await serve({
      rawArgs: args,
      env: { VERIFY_NO_DOTENV: '1', ...env },
      cwd: process.cwd(),
      out: { write: (t: string) => out.push(t) },
      err: { write: (t: string) => out.push(t) },
    })
    return { code, text: out.join('') }
  }

  test('refused (exit 2, every problem at once): no token, a token on the command line, --no-token off loopback, a bad listen', async () => {
    const none = await start(['--targets', targetsFile])
    expect(none.code).toBe(2)
    expect(none.text).toContain('no token: every request must carry one')
    const flag = await start([
      '--targets',
      targetsFile,
      '--token',
      'sekret-sekret-sekret',
      '--no-token',
      '--listen',
      '0.0.0.0:8080',
      '--run-timeout',
      'soon',
    ])
    expect(flag.code).toBe(2)
    expect(flag.text).not.toContain('sekret')
    for (const said of [
      '--token: a token on the command line is refused',
      '--no-token with --listen 0.0.0.0',
      '--run-timeout: "soon" is not a positive duration',
    ])
      expect(flag.text).toContain(said)
    const short = await start(['--targets', targetsFile], { ARMPROOF_SERVE_TOKEN: 'short' })
    expect([short.code, short.text]).toEqual([2, expect.stringContaining('the token has 5 characters; give at least 16')])
    expect((await start(['--targets', targetsFile, '--listen', 'gpu-7'], { ARMPROOF_SERVE_TOKEN: TOKEN })).text).toContain(
      'is not HOST:PORT',
    )
  })

  test('a targets file with problems keeps serve from starting, said as pnpm verify --targets says them; an svc listed twice too', async () => {
    const bad = writeTargets({ knob: 'PREFILL_INTERLEAVE' }, [
      { svc: 'a', 'base-url': 'gpu-7:8000' },
      { svc: 'b', 'base-url': 'http://gpu-8:8000', knob: 'PREFILL_INTERLEAV' },
    ])
    const r = await start(['--targets', bad], { ARMPROOF_SERVE_TOKEN: TOKEN })
    expect(r.code).toBe(2)
    expect(r.text).toMatch(/2 problems; not serving/)
    expect(r.text).toContain('targets[0] ("a"): base-url: "gpu-7:8000" has no scheme')
    expect(r.text).toContain('targets[1] ("b"): knob: unknown knob')
    const key = await start(['--targets', writeTargets({}, [{ svc: 'b', 'base-url': 'http://gpu-8:8000', 'api-key': 'sk-x' }])], {
      ARMPROOF_SERVE_TOKEN: TOKEN,
    })
    expect(key.text).toContain('an API key never sits in the targets file')
    expect(key.text).not.toContain('sk-x')
    const twice = writeTargets({ knob: 'PREFILL_INTERLEAVE' }, [
      { svc: 'a', 'base-url': 'http://gpu-7:8000' },
      { svc: 'a', 'base-url': 'http://gpu-8:8000' },
    ])
    expect((await start(['--targets', twice], { ARMPROOF_SERVE_TOKEN: TOKEN })).text).toContain('svc "a" is listed twice')
  })

  test('--help and --version answer; a run never sees the token', async () => {
    expect((await start(['--help'])).text).toContain('POST /verify/<svc>')
    expect((await start(['--version'])).text).toMatch(/^armproof \d+\.\d+\.\d+\n$/)
    const env = runEnv({
      ARMPROOF_SERVE_TOKEN: TOKEN,
      ARMPROOF_SERVE_TOKEN_FILE: '/x',
      VERIFY_API_KEY: 'k',
      VERIFY_JUNIT: 'j.xml',
      PATH: '/bin',
      npm_lifecycle_event: 'serve',
    })
    expect(env).toEqual({
      VERIFY_API_KEY: 'k',
      PATH: '/bin',
      VERIFY_TARGETS: '',
      VERIFY_SHARD: '',
      VERIFY_CONCURRENCY: '',
      VERIFY_REPORT: '',
      VERIFY_JUNIT: '',
      VERIFY_SUMMARY: '',
      VERIFY_MODE: '',
      VERIFY_RUN_ID: '',
      VERIFY_JSON: '',
    })
  })
})

describe('runs, as the controllers ask', () => {
  // These two reach no engine (port 9 only): they wait out their budgets beside the Argo run. The
  // Argo and Flagger runs stay one after the other, each the only traffic on the engines it judges.
  test.concurrent("serve's env or .env saying VERIFY_MODE=replay never answers 200 from a recording: every run is live (mode is the whole run's, like --report)", async ({
    expect,
  }) => {
    // fixtures/demo/PREFILL_INTERLEAVE holds a green recording; nothing listens on port 9.
    const file = writeTargets(
      {
        knob: 'PREFILL_INTERLEAVE',
        value: '1',
        previous: '0',
        'no-dropin-check': 'true',
        'health-budget': '1s',
        'meter-window': '1s',
        'host-timeout': '5s',
      },
      [{ svc: 'demo', 'base-url': 'http://127.0.0.1:9' }],
    )
    const { url } = await served(['--targets', file], { ARMPROOF_SERVE_TOKEN: TOKEN, VERIFY_MODE: 'replay' })
    const r = await fetch(`${url}/verify/demo`, argoRequest(TOKEN))
    const report = (await r.json()) as Report
    expect([r.status, report.mode]).toEqual([412, 'live'])
    expect(report.verdict).not.toBe('green')
  })

  test.concurrent('a run past --run-timeout is stopped: its report says interrupted (412)', async ({ expect }) => {
    const { url, log } = await served(['--targets', targetsFile, '--run-timeout', '6s'])
    const r = await fetch(`${url}/verify/slow`, argoRequest(TOKEN))
    expect(r.status).toBe(412)
    const report = (await r.json()) as Report
    expect(report.verdict).toBe('interrupted')
    expect(log.join('')).toContain('(stopped: --run-timeout)')
  })
  test.concurrent('Argo Rollouts web provider (POST, bearer header, its body): /analysis answers 200 and $.verdict says it; the report is the one pnpm verify writes', async ({
    expect,
  }) => {
    const { url } = await served(['--targets', targetsFile])
    const [green, red, inconclusive] = await Promise.all(
      [engines.healthy.svc, engines.ignored.svc, engines.loading.svc].map(async (svc) => {
        const r = await fetch(`${url}/analysis/${svc}`, argoRequest(TOKEN))
        return { status: r.status, report: (await r.json()) as Report }
      }),
    )
    // What the AnalysisTemplate's conditions read (examples/k8s): jsonPath {$.verdict}.
    expect([
      green!.status,
      green!.report.verdict,
      red!.status,
      red!.report.verdict,
      inconclusive!.status,
      inconclusive!.report.verdict,
    ]).toEqual([200, 'green', 200, 'red', 200, 'inconclusive'])
    expect(verdicts(red!.report).meter).toBe('failed')
    // The same target verified by pnpm verify itself: the same report, but for its times.
    const direct = await runVerify(
      [
        '--svc',
        engines.healthy.svc,
        '--knob',
        'PREFILL_INTERLEAVE',
        '--value',
        '1',
        '--previous',
        '0',
        '--base-url',
        engines.healthy.baseUrl,
        '--host',
        'local',
        '--process',
        engines.healthy.processName,
        '--no-dropin-check',
        '--health-budget',
        '4s',
        '--meter-window',
        '3s',
        '--probe-timeout',
        '3s',
        '--host-timeout',
        '10s',
        '--ledger-cmd',
        `${engines.healthy.binDir}/podman logs --tail 100000 {svc}`,
        '--help-cmd',
        `${engines.healthy.binDir}/podman exec {svc} radiance --help`,
      ],
      { engine: engines.healthy },
    )
    const shape = (r: Report) => ({
      keys: Object.keys(r).sort(),
      svc: r.svc,
      knob: r.knob,
      expected: r.expected,
      mode: r.mode,
      verdict: r.verdict,
      steps: verdicts(r),
      rollback: r.rollback,
    })
    expect(shape(green!.report)).toEqual(shape(direct.report!))
    cleanup(direct)
  })

  test('Flagger webhook (its payload, metadata.token, no header): green 200, red 412, inconclusive 412; a second ask while one runs is 503', async () => {
    // Under GitHub Actions (a run inherits serve's env) a red run also prints its ::error lines.
    const { url, log } = await served(['--targets', targetsFile], { ARMPROOF_SERVE_TOKEN: TOKEN, GITHUB_ACTIONS: 'true' })
    const ask = (svc: string) => fetch(`${url}/verify/${svc}`, flaggerRequest({ token: TOKEN }))
    const first = ask(engines.healthy.svc)
    await expect.poll(() => log.some((l) => l.includes(`${engines.healthy.svc}: run started`))).toBe(true)
    const busy = await ask(engines.healthy.svc)
    expect(busy.status).toBe(503)
    const [green, red, inconclusive] = await Promise.all([first, ask(engines.ignored.svc), ask(engines.loading.svc)])
    const body = async (r: Response) => [r.status, ((await r.json()) as Report).verdict]
    expect([await body(green!), await body(red!), await body(inconclusive!)]).toEqual([
      [200, 'green'],
      [412, 'red'],
      [412, 'inconclusive'],
    ])
    expect(log.join('')).not.toContain(TOKEN)
    expect(log.join('')).toContain('flagger canary test/podinfo Progressing')
    expect(log.join('')).toContain(`[${engines.ignored.svc}] ::error title=armproof ${engines.ignored.svc}%3A meter failed::expected: `)
    expect(log.join('')).not.toContain(`[${engines.healthy.svc}] ::error`)
    const page = await (await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } })).text()
    const parsed = parsePrometheusText(page)
    expect(parsed.errors).toEqual([])
    const runs = Object.fromEntries(parsed.samples('armproof_serve_runs_total').map((s) => [s.labels.verdict, s.value]))
    expect(runs).toEqual({ green: 1, red: 1, inconclusive: 1, error: 0, interrupted: 0, failed: 0 })
    expect(parsed.samples('armproof_serve_refused_total').find((s) => s.labels.reason === 'busy')?.value).toBe(1)
    expect(parsed.family('armproof_serve_runs_total')?.type).toBe('counter')
  })
})

test('the token from --token-file (a mounted secret): its one trailing newline is not part of it', async () => {
  const dir = tempDir('armproof-serve-token-')
  writeFileSync(join(dir, 'token'), `${TOKEN}\n`)
  const out: string[] = []
  const stop = new AbortController()
  const url = await new Promise<string>((resolve) => {
    exits.push(
      serve({
        rawArgs: ['--targets', targetsFile, '--listen', '127.0.0.1:0', '--token-file', join(dir, 'token')],
        env: { VERIFY_NO_DOTENV: '1' },
        cwd: process.cwd(),
        out: { write: (t: string) => out.push(t) },
        err: { write: (t: string) => out.push(t) },
        onListening: resolve,
        stop: stop.signal,
      }),
    )
  })
  stops.push(stop)
  // The file's one trailing newline is not part of the token.
  expect((await fetch(`${url}/verify/nope`, { method: 'POST', headers: { Authorization: `Bearer ${TOKEN}` } })).status).toBe(404)
  expect(out.join('')).toContain('token required')
})
