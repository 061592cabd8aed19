// The other engines through the whole CLI (`pnpm verify --engine …`): recorded and replayed offline
// to the same verdict, the recording carrying the profile the run went with; the env twin read from
// the engine's environment is the one variable that leaves the host (a secret beside it never reaches
// a fixture or the report); the demo of each engine green from the checkout.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { afterAll, describe, test } from 'vitest'
import { startEngine } from '../../engine/launch.ts'
import { ROOT, cleanup, engineArgs, FAST, runVerify, verdicts } from '../support/run-verify.ts'

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
const SECRET = 'hf-armproof-secret-7c1e'

describe.concurrent('record and replay an engine of another profile', () => {
  test.for([
    {
      profile: 'vllm' as const,
      args: ['--enable-prefix-caching'],
      verify: ['--engine', 'vllm', '--knob', 'ENABLE_PREFIX_CACHING', '--value', 'true', '--previous', 'false'],
      env: {} as Record<string, string>,
    },
    {
      profile: 'llama.cpp' as const,
      args: ['--metrics'],
      verify: ['--engine', 'llama.cpp', '--knob', 'PARALLEL', '--value', '2'],
      env: { LLAMA_ARG_N_PARALLEL: '2', HF_TOKEN: SECRET },
    },
  ])(
    '$profile: replays offline to the recorded verdict; the recording carries the profile; the environment gave only its twin',
    async ({ profile, args, verify, env }, { expect }) => {
      const folder = mkdtempSync(join(tmpdir(), 'armproof-profile-fixtures-'))
      dirs.push(folder)
      const engine = await startEngine({
        profile,
        svc: `prec-${profile.replace('.', '')}`,
        processName: `prec-${randomBytes(3).toString('hex')}`,
        args,
        engineEnv: env,
      })
      const recorded = await runVerify([...engineArgs(engine), ...verify, '--fixtures', folder, '--mode', 'record', ...FAST], { engine })
      await engine.stop()
      expect(recorded.exitCode, recorded.stdout + recorded.stderr).toBe(0)
      const files = Object.fromEntries(readdirSync(folder).map((f) => [f, readFileSync(join(folder, f), 'utf8')]))
      const run = JSON.parse(files['run.json']!) as { target: { engine: { name: string; knobs: Record<string, unknown> } } }
      expect(run.target.engine.name).toBe(profile)
      expect(Object.keys(run.target.engine.knobs)).toContain(verify[3])
      for (const [name, text] of Object.entries({ ...files, report: readFileSync(recorded.reportPath, 'utf8') }))
        expect(text, name).not.toContain(SECRET)
      if (profile === 'llama.cpp') expect(files['host.json']).toContain('"stdout": "LLAMA_ARG_N_PARALLEL=2\\n"')
      const replayed = await runVerify(['--svc', engine.svc, ...verify, '--fixtures', folder, '--mode', 'replay'])
      expect(replayed.exitCode, replayed.stdout + replayed.stderr).toBe(0)
      expect(verdicts(replayed.report)).toEqual(verdicts(recorded.report))
      expect(replayed.report!.run?.target.engine).toEqual(run.target.engine)
      cleanup(recorded)
      cleanup(replayed)
    },
  )
})

describe.concurrent('the demo of each engine, from the checkout', () => {
  test.for(['vllm', 'sglang', 'llama.cpp'])('node bin/demo.ts --engine %s is green', async (name, { expect }) => {
    const dir = mkdtempSync(join(tmpdir(), 'armproof-demo-'))
    dirs.push(dir)
    const r = await execa(
      process.execPath,
      [join(ROOT, 'bin/demo.ts'), '--engine', name, '--meter-window', '5s', '--report', join(dir, 'demo.json')],
      { cwd: ROOT, reject: false, timeout: 90_000, env: { CI: 'true', VERIFY_NO_DOTENV: '1' }, stdin: 'ignore' },
    )
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0)
    expect(String(r.stdout)).toMatch(/^GREEN · [A-Z_]+=\S+ proven on demo /m)
    expect(String(r.stdout)).toMatch(/^steps: 9 passed, 0 failed, 0 inconclusive, 1 skipped/m)
  })
})
