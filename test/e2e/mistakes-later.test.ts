// Mistakes are mistakes wherever found (issue 36): verify started the moment the deploy returns,
// while the engine still loads (its port closed, then /health 503), meets a refused port at first
// contact and goes on; the operator's mistake then shows at a later step. It is judged there by
// first contact's own rule, in its words: exit 2, verdict error, the step named (in the report's
// error and in that step's `mistake`), the fix in one line, and no red. The converse: loading alone
// is never a mistake (green), and a genuine engine fault found the same way stays red.
import { afterAll, describe, test } from 'vitest'
import { startEngine, type EngineHandle, type EngineOptions } from '../../engine/launch.ts'
import type { StepId } from '../../helpers/steps/verdict.ts'
import { cleanup, engineArgs, runVerify, verdicts, type VerifyRun } from '../support/run-verify.ts'

const engines: EngineHandle[] = []
afterAll(async () => {
  await Promise.all(engines.map((e) => e.stop()))
})

// Process names are machine-wide (pidof): this run's own suffix keeps another checkout's run apart.
const RUN = process.pid % 100_000
/** The port stays closed this long after the engine starts, then /health is 503 this long: first contact sees only a refused port. */
const LOADING = ['--load-closed-ms', '5000', '--load-503-ms', '1000']
const BUDGETS = ['--health-budget', '40s', '--meter-window', '2s', '--probe-timeout', '5s', '--host-timeout', '10s']
const KEY = 'sk-armproof-later-3c4d5e6f'

interface LaterCase {
  name: string
  engine: Omit<EngineOptions, 'svc' | 'processName'>
  baseUrl?: (u: string) => string
  args?: string[]
  env?: Record<string, string>
  /** The step that finds it (a probe: any of the three, side by side). */
  step: StepId | 'probe'
  /** A piece of first contact's one line (cause and fix). */
  message: string
}

const ARMED = ['--prefill-interleave', '1', ...LOADING]

const CASES: LaterCase[] = [
  {
    name: 'https:// on the plain-HTTP port (not-tls)',
    engine: { args: ARMED },
    baseUrl: (u) => u.replace(/^http:/, 'https:'),
    step: 'health',
    message:
      'does not speak TLS (ERR_SSL_WRONG_VERSION_NUMBER): the port serves plain HTTP, so https:// cannot reach it; pass --base-url http://127.0.0.1:',
  },
  {
    name: 'a base URL with a path: /health answers 404',
    engine: { args: ARMED },
    baseUrl: (u) => `${u}/api`,
    step: 'health',
    message: "/health answers HTTP 404 (the path): --base-url must be the engine's root",
  },
  {
    name: "a proxy's /health redirect whose Location is no URL (health_bad_location)",
    engine: { args: ARMED, faults: ['health_bad_location'] },
    step: 'health',
    message:
      "which is not a URL (Invalid URL); a proxy before the engine builds its redirect wrongly (nginx: a Location made of $host:$server_port, the port written twice): fix the proxy's redirect",
  },
  {
    name: 'a gateway guarding /metrics with the token: 401 (metrics_guarded)',
    engine: { args: ARMED, faults: ['metrics_guarded'] },
    step: 'meter',
    message: '/metrics answers HTTP 401: something before the engine guards it',
  },
  {
    name: '/v1/* wants a key and none was given: 401',
    engine: { args: [...ARMED, '--api-key', KEY] },
    step: 'probe',
    message: '/v1/models answers HTTP 401 (the key): the endpoint wants a key and none was given: set VERIFY_API_KEY',
  },
  {
    name: 'a --model /v1/models does not list',
    engine: { args: ARMED },
    args: ['--model', 'radiance-ref-70b'],
    step: 'probe',
    message: '--model "radiance-ref-70b": /v1/models does not list it (it lists "radiance-ref-8b"); pass --model with one of those',
  },
  {
    name: '/v1/models redirects to another origin (models_redirect_other_origin)',
    engine: { args: [...ARMED, '--api-key', KEY], faults: ['models_redirect_other_origin'] },
    env: { VERIFY_API_KEY: KEY },
    step: 'probe',
    message: '/v1/models redirects to another origin, http://127.0.0.1:',
  },
]

function said(run: VerifyRun): string {
  return `exit ${run.exitCode}\n${run.stdout}\n${run.stderr}`
}

async function started(name: string, options: LaterCase['engine']): Promise<EngineHandle> {
  const e = await startEngine({ ...options, svc: `ml${name}-${RUN}`, processName: `rml${name}-${RUN}`.slice(0, 15) })
  engines.push(e)
  return e
}

/** verify, started at once (the engine's port still closed), with the case's URL, flags and env. */
async function verifyLoading(e: EngineHandle, c: Pick<LaterCase, 'baseUrl' | 'args' | 'env'>): Promise<VerifyRun> {
  // Still loading when verify starts: first contact can see nothing but a refused port.
  await fetch(e.baseUrl, { signal: AbortSignal.timeout(500) }).then(
    () => {
      throw new Error(`the engine at ${e.baseUrl} listens already: this test needs verify to start while it loads`)
    },
    () => {},
  )
  return runVerify(
    [...engineArgs(e, c.baseUrl?.(e.baseUrl) ?? e.baseUrl), '--knob', 'PREFILL_INTERLEAVE', '--value', '1', ...BUDGETS, ...(c.args ?? [])],
    {
      engine: e,
      ...(c.env ? { env: c.env } : {}),
    },
  )
}

describe.concurrent('an operator mistake found after first contact, while the engine loaded', () => {
  test.for(CASES.map((c, i) => ({ ...c, i })))('$name: exit 2 at step $step, its one line, no red', async (c, { expect }) => {
    const e = await started(String(c.i), c.engine)
    const run = await verifyLoading(e, c)
    try {
      const r = run.report!
      expect(run.exitCode, said(run)).toBe(2)
      expect(r.verdict, said(run)).toBe('error')
      // First contact let it through (the port was refused: loading); a step found it.
      expect(r.error, said(run)).not.toMatch(/^first contact:/)
      expect(r.steps.length, said(run)).toBeGreaterThan(0)
      const found = r.steps.filter((s) => s.mistake !== undefined)
      expect(found.length, said(run)).toBeGreaterThan(0)
      const first = found[0]!
      if (c.step === 'probe') expect(first.id, said(run)).toMatch(/^probe\./)
      else expect(first.id, said(run)).toBe(c.step)
      expect(first.verdict).toBe('inconclusive')
      expect(first.mistake).toContain(c.message)
      expect(first.next).toBe(first.mistake)
      expect(r.error).toBe(`step ${first.id}: ${first.mistake}`)
      // The one line, as first contact prints its own, naming the step.
      expect(run.stderr).toContain(`armproof: ${first.mistake} [step ${first.id}: `)
      expect(run.stdout).toContain(`ERROR · step ${first.id}: `)
      // No red: the steps after it are not judged, and none is failed.
      expect(Object.values(verdicts(r)), said(run)).not.toContain('failed')
      const after = r.steps.slice(r.steps.indexOf(first) + 1).filter((s) => s.mistake === undefined && !s.id.startsWith('probe.'))
      for (const s of after) expect(s.verdict, `${s.id}\n${said(run)}`).toBe('skipped')
      // The key given stays home: never in any output.
      expect(`${run.stdout}${run.stderr}${JSON.stringify(r)}`).not.toContain(KEY)
    } finally {
      cleanup(run)
      await e.stop()
    }
  })

  test('loading alone (port closed, then 503) is no mistake: waited for, green', async ({ expect }) => {
    const e = await started('ok', { args: ARMED })
    const run = await verifyLoading(e, {})
    try {
      expect(run.exitCode, said(run)).toBe(0)
      expect(run.report!.verdict).toBe('green')
      expect(run.report!.steps.some((s) => s.mistake !== undefined)).toBe(false)
      // The one loading budget is handed argv → ledger → health: whichever step met the loading says
      // how long it waited (argv when the port was still closed, else health), never a zero wait alone.
      const waited = run.report!.steps.filter((s) => ['argv', 'ledger', 'health'].includes(s.id)).map((s) => s.observed)
      expect(
        waited.some((o) => /after [1-9][\d.]*(ms|s)\b/.test(o)),
        said(run),
      ).toBe(true)
    } finally {
      cleanup(run)
      await e.stop()
    }
  })

  test('a genuine engine fault found the same way stays red: /health 200 without in_flight and queue_cap (health_no_fields)', async ({
    expect,
  }) => {
    const e = await started('nf', { args: ARMED, faults: ['health_no_fields'] })
    const run = await verifyLoading(e, {})
    try {
      expect(run.exitCode, said(run)).toBe(1)
      expect(run.report!.verdict).toBe('red')
      expect(verdicts(run.report).health).toBe('failed')
      expect(run.report!.steps.some((s) => s.mistake !== undefined)).toBe(false)
    } finally {
      cleanup(run)
      await e.stop()
    }
  })
})
