// pnpm demo [verify options]: the main job on its embedded default. Starts the reference engine
// on loopback with PREFILL_INTERLEAVE armed to 1, runs `pnpm verify` against it, stops it, and
// exits with verify's code. Extra options are passed to verify and win (e.g. --mode record).
// `--engine vllm|sglang|llama.cpp` starts the reference engine speaking that engine instead, one of
// its profile's knobs armed, and verifies it with that profile (`verify --engine …`).
import { startCompileCache } from './compile-cache.mjs'

startCompileCache()
// verify and the engine's launcher are loaded only once the version and the help are answered (below).
const { asksVersion, command, VERSION_TEXT } = await import('../helpers/config/invocation.ts')

/** What each demo arms: the engine's flags, and the verify options that prove them. */
const DEMOS = {
  radiance: {
    label: 'radiance',
    processName: 'radiance-demo',
    args: ['--prefill-interleave', '1'],
    verify: ['--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--previous', '0'],
    report: 'reports/demo.json',
  },
  vllm: {
    label: 'vLLM',
    processName: 'vllm-demo',
    args: ['--enable-prefix-caching'],
    verify: ['--engine', 'vllm', '--knob', 'ENABLE_PREFIX_CACHING', '--value', 'true', '--previous', 'false'],
    report: 'reports/demo-vllm.json',
  },
  sglang: {
    label: 'SGLang',
    processName: 'sglang-demo',
    args: ['--chunked-prefill-size', '4096'],
    verify: ['--engine', 'sglang', '--knob', 'CHUNKED_PREFILL_SIZE', '--value', '4096'],
    report: 'reports/demo-sglang.json',
  },
  'llama.cpp': {
    label: 'llama.cpp',
    processName: 'llama-demo',
    args: ['-np', '2', '--metrics'],
    verify: ['--engine', 'llama.cpp', '--knob', 'PARALLEL', '--value', '2'],
    report: 'reports/demo-llama.cpp.json',
  },
} as const
type Demo = keyof typeof DEMOS
/** `KNOB=value`, as the demo's verify options arm it. */
const armed = (demo: Demo): string => {
  const v: readonly string[] = DEMOS[demo].verify
  return `${v[v.indexOf('--knob') + 1]}=${v[v.indexOf('--value') + 1]}`
}
const ENGINES = Object.keys(DEMOS) as Demo[]
const OTHERS = ENGINES.filter((d) => d !== 'radiance')

// Answered before verify and the engine load: the version, and what the demo is.
if (asksVersion(process.argv.slice(2))) {
  process.stdout.write(`${VERSION_TEXT}\n`)
  process.exit(0)
}
if (process.argv.slice(2).some((a) => a === '--help' || a === '-h')) {
  process.stdout.write(
    `Usage: ${command('demo')} [--engine radiance|vllm|sglang|llama.cpp] [verify options]\n\nStarts the reference engine on loopback with ${armed('radiance')} armed, verifies it (no endpoint, no GPU, no network) and exits with verify's code; options given here are verify's (${command('verify')} --help) and win over the demo's own. --engine vllm, sglang or llama.cpp starts the reference engine speaking that engine instead, with ${OTHERS.map(
      (e) => `${armed(e)} (${DEMOS[e].label})`,
    )
      .join(', ')
      .replace(/, ([^,]*)$/, ' or $1')} armed, and verifies it with that engine's profile (${command('verify')} --engine …).\n`,
  )
  process.exit(0)
}
const [{ verify }, { startEngine }] = await Promise.all([import('../helpers/cli/verify.ts'), import('../engine/launch.ts')])
// Bound now: during the run vitest's runtime replaces process.exit with one that throws.
const exit = process.exit.bind(process)
const engineAt = process.argv.findIndex((a) => a === '--engine' || a.startsWith('--engine='))
const chosen =
  engineAt < 0
    ? 'radiance'
    : process.argv[engineAt]!.startsWith('--engine=')
      ? process.argv[engineAt]!.slice('--engine='.length)
      : process.argv[engineAt + 1]
if (engineAt >= 0) process.argv.splice(engineAt, process.argv[engineAt]!.startsWith('--engine=') ? 1 : 2)
if (!ENGINES.includes(chosen as Demo)) {
  process.stderr.write(`demo: --engine must be one of ${ENGINES.join(', ')}, got ${JSON.stringify(chosen ?? '')}\n`)
  exit(2)
}
const demo = DEMOS[chosen as Demo]
const engine = await startEngine({
  ...(chosen === 'radiance' ? {} : { profile: chosen as Exclude<Demo, 'radiance'> }),
  svc: 'demo',
  processName: demo.processName,
  args: demo.args,
})
let code = 3
try {
  process.env.PATH = engine.env.PATH
  const defaults = [
    '--svc',
    engine.svc,
    ...demo.verify,
    '--base-url',
    engine.baseUrl,
    '--host',
    'local',
    '--process',
    engine.processName,
    '--health-budget',
    '60s',
    '--meter-window',
    '30s',
    '--report',
    demo.report,
  ]
  const extra = process.argv.slice(2)
  const overridden = new Set(extra.filter((a) => a.startsWith('--')).map((a) => a.split('=')[0]))
  const args: string[] = []
  for (let i = 0; i < defaults.length; i += 2) if (!overridden.has(defaults[i]!)) args.push(defaults[i]!, defaults[i + 1]!)
  // On SIGINT/SIGTERM verify writes the partial report and exits; the engine's exit hook kills it.
  code = await verify({
    rawArgs: [...args, ...extra],
    env: { ...process.env, VERIFY_NO_DOTENV: '1' },
    cwd: process.cwd(),
    out: process.stdout,
    err: process.stderr,
    exit: (c) => exit(c),
  })
} finally {
  await engine.stop()
}
process.exit(code)
