// With an API key set, every mode and every output is scanned for it: terminal, JSON report,
// JUnit, the CI summary, fixtures, error messages. The engine even carries the key in its argv
// (as vLLM's --api-key does), so a red argv step would print it if anything leaked. The key
// travels only in env, .env or a key file; `pnpm verify --api-key KEY` (as a person types it) is
// refused before anything is contacted. An endpoint that echoes the key back, straddling the
// places where messages are cut, leaves not even a piece of it in any output.
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { afterAll, describe, test } from 'vitest'
import { startEngine, type EngineHandle } from '../../engine/launch.ts'
import { API_KEY_FLAG_REFUSED } from '../../helpers/config/options.ts'
import { FAST, ROOT, cleanup, engineArgs, runVerify, type VerifyRun, armedArgs } from '../support/run-verify.ts'
import { DEMO_ARM } from '../support/demo-args.ts'

const KEY = 'sk-armproof-secret-77aa66bb55cc'
const dir = mkdtempSync(join(tmpdir(), 'armproof-secrets-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function read(p: string): string {
  try {
    return readFileSync(p, 'utf8')
  } catch {
    return ''
  }
}

function outputs(run: VerifyRun, summary: string): Record<string, string> {
  return { stdout: run.stdout, stderr: run.stderr, report: read(run.reportPath), junit: read(run.junitPath), summary: read(summary) }
}

/** Every piece of `key` at least `n` characters long. */
function pieces(key: string, n = 8): string[] {
  return Array.from({ length: key.length - n + 1 }, (_, i) => key.slice(i, i + n))
}

test.concurrent('the API key appears in no output of a red live run, its recording, or its replay', async ({ expect }) => {
  // The flag is missing from argv, so the argv step prints the command line, which holds --api-key.
  const engine = await startEngine({ svc: 'secret', processName: 'rsecret', args: ['--api-key', KEY] })
  const fixtures = join(dir, 'fixtures')
  const summary = join(dir, 'summary.md')
  const common = ['--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--fixtures', fixtures]
  const env = { VERIFY_API_KEY: KEY }
  const seen: Record<string, string> = {}
  // The live run (which writes no fixtures) and the recording side by side on the engine, then,
  // the engine stopped, the replay; the refused configuration meanwhile. It stays a process: this
  // file loads nothing of verify() itself, and loading it here costs more than the refusal's own
  // node start; the real process's streams are what a secrets check should read anyway.
  const refusing = runVerify(['--svc', 'bad name', ...common], { env })
  const [live, recorded] = await Promise.all([
    runVerify([...engineArgs(engine), ...common, ...FAST], { engine, env: { ...env, GITHUB_STEP_SUMMARY: summary } }),
    runVerify([...engineArgs(engine), ...common, ...FAST, '--mode', 'record'], { engine, env }),
  ])
  await engine.stop()
  const replayed = await runVerify(['--svc', engine.svc, ...common, '--mode', 'replay'], { env })
  const refused = await refusing
  expect(live.exitCode).toBe(1)
  expect(live.stdout).toMatch(/argv failed|✗ argv/)
  for (const [k, v] of Object.entries(outputs(live, summary))) seen[`live ${k}`] = v
  expect(recorded.exitCode).toBe(1)
  for (const [k, v] of Object.entries(outputs(recorded, ''))) seen[`record ${k}`] = v
  for (const f of readdirSync(fixtures)) seen[`fixture ${f}`] = readFileSync(join(fixtures, f), 'utf8')
  expect(replayed.exitCode).toBe(1)
  for (const [k, v] of Object.entries(outputs(replayed, ''))) seen[`replay ${k}`] = v
  expect(refused.exitCode).toBe(2)
  for (const [k, v] of Object.entries(outputs(refused, ''))) seen[`config error ${k}`] = v

  expect(seen['live summary']).toMatch(/argv/)
  expect(seen['live stdout']).toContain('--api-key [redacted]')
  for (const [where, text] of Object.entries(seen)) expect(text, where).not.toContain(KEY)
  for (const run of [live, recorded, replayed, refused]) cleanup(run)
})

test.concurrent('an endpoint that echoes the key back (401 at first contact), straddling the 300/500/1000-character cuts, leaves not a piece of it in any output', async ({
  expect,
}) => {
  // The engine wants another key; its 401 bodies quote the Authorization header armproof sent.
  // Through bin/verify.ts though it ends at first contact: against a hostile endpoint the real
  // process's streams are the witness, with whatever node itself would print.
  const wrong = 'Zq7XvT3kLm9PwR2sNb8YcD4fHj6Gx'
  const engine = await startEngine({
    svc: 'echo',
    processName: 'recho',
    args: ['--prefill-interleave', '1', '--api-key', 'the-right-one'],
    faults: ['auth_echo'],
  })
  await engine.waitReady()
  const summary = join(dir, 'echo-summary.md')
  const fixtures = join(dir, 'echo-fixtures')
  const live = await runVerify(
    [
      ...engineArgs(engine),
      '--knob',
      'PREFILL_INTERLEAVE',
      '--value',
      '1',
      '--model',
      'radiance-ref-8b',
      '--mode',
      'record',
      '--fixtures',
      fixtures,
      ...FAST,
    ],
    { engine, env: { VERIFY_API_KEY: wrong, GITHUB_STEP_SUMMARY: summary } },
  )
  await engine.stop()
  // The refused key is named at first contact (exit 2, no step judged, nothing recorded), its body
  // with the echoed header never shown.
  expect(live.exitCode, live.stdout + live.stderr).toBe(2)
  expect(live.stderr).toContain('/v1/models answers HTTP 401 (the key): the key given is refused')
  expect(live.report!.verdict).toBe('error')
  expect(live.report!.steps).toEqual([])
  expect(existsSync(join(fixtures, 'http.json'))).toBe(false)
  const seen = { ...outputs(live, summary) }
  for (const [where, text] of Object.entries(seen)) {
    for (const piece of pieces(wrong)) expect(text, `${where} holds ${piece}`).not.toContain(piece)
  }
  cleanup(live)
})

describe.concurrent('through pnpm, as the README shows it', () => {
  const KEY2 = 'sk-pnpm-Qw8Er7Ty6Ui5Op4As3'
  const engines: EngineHandle[] = []
  afterAll(() => Promise.all(engines.map((e) => e.stop())))

  /** `pnpm verify …` from the repository root: pnpm echoes the command line before running it. */
  const pnpmVerify = (args: string[], env: Record<string, string>) =>
    execa('pnpm', ['verify', ...args], {
      cwd: ROOT,
      reject: false,
      env: { CI: 'true', VERIFY_NO_DOTENV: '1', ...env },
      extendEnv: true,
      stdin: 'ignore',
      timeout: 90_000,
    })

  test("pnpm verify --api-key KEY is refused with exit 2 before anything is contacted; only pnpm's own echo shows the key", async ({
    expect,
  }) => {
    let connections = 0
    const server = createServer((s) => {
      connections++
      s.destroy()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const port = (server.address() as { port: number }).port
    try {
      const forms = [['--api-key', KEY2], [`--api-key=${KEY2}`]]
      const runs = await Promise.all(
        forms.map((form) => pnpmVerify([...DEMO_ARM, '--base-url', `http://127.0.0.1:${port}`, '--host', 'local', ...form], {})),
      )
      for (const r of runs) {
        expect(r.exitCode).toBe(2)
        const all = `${String(r.stdout)}\n${String(r.stderr)}`
        expect(all).toContain(API_KEY_FLAG_REFUSED)
        // pnpm prints the script ("$ node bin/run.mjs verify …") with the arguments: exactly the
        // leak the refusal exists for.
        const armproof = all.split('\n').filter((l) => !/^\$ node bin\/run\.mjs verify\b/.test(l))
        expect(armproof.join('\n')).not.toContain(KEY2)
      }
      expect(connections).toBe(0)
    } finally {
      server.close()
    }
  })

  test("the key in env, then in a key file: green, and the key in no output (pnpm's echo included)", async ({ expect }) => {
    const keyFile = join(dir, 'key')
    writeFileSync(keyFile, `${KEY2}\n`)
    chmodSync(keyFile, 0o600)
    // Side by side, each on an engine of its own (each run's meter moved by its own requests), each with its own report.
    await Promise.all(
      (
        [
          ['env', [], { VERIFY_API_KEY: KEY2 }],
          ['file', ['--api-key-file', keyFile], {}],
        ] as const
      ).map(async ([how, extra, env]) => {
        const engine = await startEngine({
          svc: `pnpm${how}`,
          processName: `rpnpm${how}`,
          args: ['--prefill-interleave', '1', '--api-key', KEY2],
        })
        engines.push(engine)
        const report = join(dir, `pnpm-${how}-report.json`)
        const r = await pnpmVerify([...armedArgs(engine), '--report', report, ...extra], { ...engine.env, ...env })
        expect(r.exitCode, `${how}: ${String(r.stdout)}${String(r.stderr)}`).toBe(0)
        expect(String(r.stdout)).toMatch(/^GREEN · /m)
        for (const text of [String(r.stdout), String(r.stderr), read(report)]) expect(text, how).not.toContain(KEY2)
        expect(read(report)).toContain('--api-key [redacted]')
      }),
    )
  })
})
