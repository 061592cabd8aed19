// pnpm demo [verify options]: the main job on its embedded default, the runbook's two halves.
// Before the deploy: the reference engine runs the value before the arm, and `preflight` checks it
// (its --help, what it runs, drop-ins, a deploy checkout made for the demo, the checkout's env
// file against the engine's environment). Then the "deploy": that engine stops and one starts with
// PREFILL_INTERLEAVE armed to 1; `pnpm verify` proves it, and the demo exits with verify's code
// (preflight's, when it says do not deploy). Extra options are passed to verify and win (e.g. --mode record).
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
    before: { args: [], env: { PREFILL_INTERLEAVE: '0' } },
    verify: ['--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--previous', '0'],
    report: 'reports/demo.json',
  },
  vllm: {
    label: 'vLLM',
    processName: 'vllm-demo',
    args: ['--enable-prefix-caching'],
    before: { args: ['--no-enable-prefix-caching'], env: { ENABLE_PREFIX_CACHING: 'false' } },
    verify: ['--engine', 'vllm', '--knob', 'ENABLE_PREFIX_CACHING', '--value', 'true', '--previous', 'false'],
    report: 'reports/demo-vllm.json',
  },
  sglang: {
    label: 'SGLang',
    processName: 'sglang-demo',
    args: ['--chunked-prefill-size', '4096'],
    before: { args: [], env: {} },
    verify: ['--engine', 'sglang', '--knob', 'CHUNKED_PREFILL_SIZE', '--value', '4096'],
    report: 'reports/demo-sglang.json',
  },
  'llama.cpp': {
    label: 'llama.cpp',
    processName: 'llama-demo',
    args: ['-np', '2', '--metrics'],
    before: { args: ['--metrics'], env: {} },
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
const [{ preflight }, { demoCheckout }] = await Promise.all([import('../helpers/cli/preflight.ts'), import('../engine/demo-checkout.ts')])

/**
 * Before the deploy: the engine runs the value before the arm, and preflight checks it against a
 * deploy checkout made for the demo (on main, clean, its env file changing the knob alone). The
 * preflight's exit code; 0 where git is missing (the demo cannot make a checkout: said, and skipped).
 */
async function beforeTheDeploy(): Promise<number> {
  const v: readonly string[] = demo.verify
  const knob = v[v.indexOf('--knob') + 1]!
  const value = v[v.indexOf('--value') + 1]!
  const before = await startEngine({
    ...(chosen === 'radiance' ? {} : { profile: chosen as Exclude<Demo, 'radiance'> }),
    svc: 'demo',
    processName: demo.processName,
    args: demo.before.args,
    engineEnv: demo.before.env,
  })
  try {
    // The demo's knobs are named as their variables (PREFILL_INTERLEAVE=1 in the service's env file).
    const checkout = demoCheckout(before.root, { 'env/demo.env': `${knob}=${value}\n` })
    if ('problem' in checkout) {
      process.stderr.write(`demo: preflight skipped: ${checkout.problem}\n`)
      return 0
    }
    process.stdout.write(`\nBefore the deploy: ${command('preflight')}\n`)
    return await preflight({
      rawArgs: [
        ...['--svc', before.svc, ...demo.verify, '--base-url', before.baseUrl, '--host', 'local', '--process', before.processName],
        ...['--health-budget', '60s', '--checkout', checkout.dir, '--env-file', 'env/demo.env'],
      ],
      env: { ...process.env, PATH: before.env.PATH, VERIFY_NO_DOTENV: '1' },
      cwd: process.cwd(),
      out: process.stdout,
      err: process.stderr,
      hostEnv: before.env,
    })
  } finally {
    await before.stop()
  }
}
const ready = await beforeTheDeploy()
if (ready !== 0) exit(ready)
process.stdout.write(`\nThe deploy: the engine restarted with ${armed(chosen as Demo)}; after it: ${command('verify')}\n`)
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
