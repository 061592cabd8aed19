// pnpm record-demo: re-records the committed demo fixtures against the reference engine.
//   fixtures/demo/PREFILL_INTERLEAVE          a green arm
//   fixtures/demo-ignored/PREFILL_INTERLEAVE  a red arm: the engine ignores the knob; a 4-minute meter watch
import { startEngine } from '../fixtures/engine/launch.ts'
import { verify } from '../helpers/cli.ts'

const RUNS = [
  { svc: 'demo', faults: [] as const, window: '30s', expect: 0 },
  { svc: 'demo-ignored', faults: ['knob_ignored'] as const, window: '4m', expect: 1 },
]

for (const r of RUNS) {
  const engine = await startEngine({ svc: r.svc, processName: `radiance-${r.svc}`.slice(0, 15), args: ['--prefill-interleave', '1'], faults: [...r.faults] })
  try {
    process.env.PATH = engine.env.PATH
    const code = await verify({
      rawArgs: ['--svc', r.svc, '--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--previous', '0', '--base-url', engine.baseUrl, '--process', engine.processName, '--meter-window', r.window, '--health-budget', '60s', '--mode', 'record'],
      env: { ...process.env, VERIFY_NO_DOTENV: '1' },
      cwd: process.cwd(),
      out: process.stdout,
      err: process.stderr,
    })
    if (code !== r.expect) throw new Error(`recording ${r.svc} exited ${code}, expected ${r.expect}`)
  } finally {
    await engine.stop()
  }
}
process.exitCode = 0
