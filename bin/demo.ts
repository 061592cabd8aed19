// pnpm demo [verify options]: the main job on its embedded default. Starts the reference engine
// on loopback with PREFILL_INTERLEAVE armed to 1, runs `pnpm verify` against it, stops it, and
// exits with verify's code. Extra options are passed to verify and win (e.g. --mode record).
import { startCompileCache } from './compile-cache.ts'

startCompileCache()
const [{ verify }, { startEngine }] = await Promise.all([import('../helpers/cli/verify.ts'), import('../engine/launch.ts')])

// Bound now: during the run vitest's runtime replaces process.exit with one that throws.
const exit = process.exit.bind(process)
const engine = await startEngine({ svc: 'demo', processName: 'radiance-demo', args: ['--prefill-interleave', '1'] })
let code = 3
try {
  process.env.PATH = engine.env.PATH
  const defaults = [
    '--svc', engine.svc, '--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--previous', '0',
    '--base-url', engine.baseUrl, '--host', 'local', '--process', engine.processName,
    '--health-budget', '60s', '--meter-window', '30s', '--report', 'reports/demo.json',
  ]
  const extra = process.argv.slice(2)
  const overridden = new Set(extra.filter((a) => a.startsWith('--')).map((a) => a.split('=')[0]))
  const args: string[] = []
  for (let i = 0; i < defaults.length; i += 2) if (!overridden.has(defaults[i]!)) args.push(defaults[i]!, defaults[i + 1]!)
  // On SIGINT/SIGTERM verify writes the partial report and exits; the engine's exit hook kills it.
  code = await verify({ rawArgs: [...args, ...extra], env: { ...process.env, VERIFY_NO_DOTENV: '1' }, cwd: process.cwd(), out: process.stdout, err: process.stderr, exit: (c) => exit(c) })
} finally {
  await engine.stop()
}
process.exit(code)
