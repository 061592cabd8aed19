// Measure 3: a verdict's fixed cost, side by side in one run. Each repetition runs, one after
// another: a bare vitest run of one trivial test (a throwaway file and a minimal config in a temp
// dir, this project's vitest), a replay of the recorded demo fixtures, a live verdict on a reference
// engine that answers at once (--completion-latency-ms 0), `node -e 0`, and the installed command's
// `armproof --help` and `armproof verify --help` (the package built into a temp dir as `pnpm pack`
// builds it). Then, untimed: one run of each under `node --cpu-prof` (where the ms go, profile.ts)
// and under a module-load counter (count-modules.mjs).
import { execFile } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startEngine, type EngineHandle } from '../../engine/launch.ts'
import type { Report } from '../../helpers/report/json.ts'
import { ROOT, engineArgs } from '../../test/support/run-verify.ts'
import { breakdownOf, type VerifyBreakdown } from './live.ts'
import { breakdown, type Breakdown } from './profile.ts'
import { isProfileData } from '../build-dependencies.ts'

export const REPLAY_ARGS = ['--svc', 'demo', '--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--mode', 'replay'] as const
const LIVE_FLAGS = [
  '--knob',
  'PREFILL_INTERLEAVE',
  '--value',
  '1',
  '--meter-window',
  '2s',
  '--health-budget',
  '8s',
  '--probe-timeout',
  '30s',
  '--host-timeout',
  '10s',
] as const

export interface FixedRep {
  trivialMs: number
  replayMs: number
  liveMs: number
  nodeMs: number
  helpMs: number
  verifyHelpMs: number
  /** The live run's own account of its time (report timestamps and step durations). */
  liveBreakdown: VerifyBreakdown
}

export type Command = 'trivial' | 'replay' | 'live' | 'node' | 'help' | 'verifyHelp'

export interface FixedResult {
  reps: FixedRep[]
  commands: Record<Command, string>
  /** One --cpu-prof'd run of each of these. */
  profiles: Record<'trivial' | 'replay' | 'live', Breakdown>
  /** Modules the armproof process loaded (undici's among them). */
  modules: Record<'help' | 'verifyHelp' | 'replay' | 'live', { modules: number; undici: number }>
}

const VITEST = join(ROOT, 'node_modules/vitest/vitest.mjs')
// What `pnpm verify` runs (package.json): the plain-JS launcher, then bin/verify.ts in the same process.
const VERIFY = [join(ROOT, 'bin/run.mjs'), 'verify']
const COUNTER = join(ROOT, 'scripts/perf/count-modules.mjs')

function run(args: readonly string[], env: Record<string, string | undefined>): Promise<{ ms: number; code: number; output: string }> {
  return new Promise((resolve) => {
    const started = performance.now()
    execFile(
      process.execPath,
      args,
      { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000, maxBuffer: 16 << 20 },
      (error, stdout, stderr) => {
        const ms = performance.now() - started
        const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : -1) : 0
        resolve({ ms, code, output: `${stdout}${stderr}` })
      },
    )
  })
}

/** The package as `pnpm pack` ships it (bin/armproof.mjs, bin/node-check.mjs, dist/), built into `dir`. */
async function buildPackage(dir: string): Promise<string> {
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc')
  const r = await run([tsc, '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', join(dir, 'dist')], {})
  if (r.code !== 0) throw new Error(`building the package failed:\n${r.output.slice(-2000)}`)
  mkdirSync(join(dir, 'bin'))
  for (const f of ['bin/armproof.mjs', 'bin/node-check.mjs', 'package.json']) cpSync(join(ROOT, f), join(dir, f))
  // tsc compiles no JavaScript: the plain module the entries import goes beside them as it is (scripts/build.ts bundles it).
  cpSync(join(ROOT, 'bin/compile-cache.mjs'), join(dir, 'dist/bin/compile-cache.mjs'))
  // The built-in engine profiles are data the profile loader reads beside itself, as scripts/build.ts copies them
  // (builtin.json too: without it, `armproof verify --help` found no profiles and this measure failed).
  const profiles = join(ROOT, 'helpers/profiles')
  for (const f of readdirSync(profiles).filter(isProfileData)) cpSync(join(profiles, f), join(dir, 'dist/helpers/profiles', f))
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
  return join(dir, 'bin/armproof.mjs')
}

export async function measureFixedCost(options: { reps: number; log: (line: string) => void }): Promise<FixedResult> {
  if (!existsSync(VITEST)) throw new Error(`no vitest at ${VITEST}: run pnpm install`)
  const dir = mkdtempSync(join(tmpdir(), 'armproof-perf-fixed-'))
  let engine: EngineHandle | undefined
  try {
    // The baseline: vitest's own start, config load (a .ts config, as the project's) and one test.
    writeFileSync(join(dir, 'vitest.config.ts'), "export default { test: { globals: true, include: ['trivial.test.ts'] } }\n")
    writeFileSync(join(dir, 'trivial.test.ts'), "test('trivial', () => { if (1 + 1 !== 2) throw new Error('arithmetic') })\n")
    const armproof = await buildPackage(join(dir, 'pkg'))
    engine = await startEngine({
      svc: 'perf-instant',
      processName: 'rperf-instant',
      args: ['--prefill-interleave', '1', '--completion-latency-ms', '0'],
    })
    await engine.waitReady()
    const report = join(dir, 'report.json')
    const argv: Record<Command, string[]> = {
      trivial: [VITEST, 'run', '--root', dir, '--config', join(dir, 'vitest.config.ts')],
      replay: [...VERIFY, ...REPLAY_ARGS, '--report', report, '--junit', join(dir, 'junit.xml')],
      live: [...VERIFY, ...engineArgs(engine), ...LIVE_FLAGS, '--report', report, '--junit', join(dir, 'junit.xml')],
      node: ['-e', '0'],
      help: [armproof, '--help'],
      verifyHelp: [armproof, 'verify', '--help'],
    }
    // As an operator runs them: CI=true (no progress line), no .env; the host commands through the engine's shims.
    const env = { CI: 'true', VERIFY_NO_DOTENV: '1', PATH: engine.env.PATH }
    const once = async (c: Command, prefix: string[] = [], extra: Record<string, string> = {}): Promise<number> => {
      const r = await run([...prefix, ...argv[c]], { ...env, ...extra })
      const ok = c === 'trivial' ? r.code === 0 && /1 passed/.test(r.output) : r.code === 0
      if (!ok) throw new Error(`${c} failed (exit ${r.code}):\n${r.output.slice(-1500)}`)
      if ((c === 'replay' || c === 'live') && (JSON.parse(readFileSync(report, 'utf8')) as Report).verdict !== 'green')
        throw new Error(`${c}: the verdict is not green`)
      return r.ms
    }
    const order: Command[] = ['trivial', 'replay', 'live', 'node', 'help', 'verifyHelp']
    // One untimed round first: cold disk caches and Node's compile cache are filled for every command.
    for (const c of order) await once(c)
    const reps: FixedRep[] = []
    for (let i = 0; i < options.reps; i++) {
      const ms = {} as Record<Command, number>
      let liveBreakdown: VerifyBreakdown | undefined
      for (const c of i % 2 === 0 ? order : [...order].reverse()) {
        const spawnedAt = Date.now()
        ms[c] = await once(c)
        if (c === 'live') liveBreakdown = breakdownOf(JSON.parse(readFileSync(report, 'utf8')) as Report, spawnedAt, ms[c])
      }
      reps.push({
        trivialMs: ms.trivial,
        replayMs: ms.replay,
        liveMs: ms.live,
        nodeMs: ms.node,
        helpMs: ms.help,
        verifyHelpMs: ms.verifyHelp,
        liveBreakdown: liveBreakdown!,
      })
      options.log(
        `  fixed cost ${i + 1}/${options.reps}: trivial vitest ${ms.trivial.toFixed(0)} ms, replay ${ms.replay.toFixed(0)} (${(ms.replay / ms.trivial).toFixed(2)}×), live instant ${ms.live.toFixed(0)} (${(ms.live / ms.trivial).toFixed(2)}×); node -e 0 ${ms.node.toFixed(0)} ms, armproof --help ${ms.help.toFixed(0)} (${(ms.help / ms.node).toFixed(2)}×), verify --help ${ms.verifyHelp.toFixed(0)}`,
      )
    }
    const profiles = {} as FixedResult['profiles']
    for (const c of ['trivial', 'replay', 'live'] as const) {
      const profDir = join(dir, `prof-${c}`)
      await once(c, ['--cpu-prof', `--cpu-prof-dir=${profDir}`])
      profiles[c] = breakdown(profDir, ROOT)
    }
    const modules = {} as FixedResult['modules']
    for (const c of ['help', 'verifyHelp', 'replay', 'live'] as const) {
      const out = join(dir, `modules-${c}.jsonl`)
      await once(c, ['--import', COUNTER], { PERF_MODULES_OUT: out })
      // The first line is the armproof process's own (its children, the engine's shims, come after it or not at all).
      const counts = readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { modules: number; undici: number })
      modules[c] = counts.sort((a, b) => b.modules - a.modules)[0]!
    }
    // No path of this machine in the doc: the temp folder is <tmp>, the checkout the current folder.
    const tmp = (s: string): string => s.replaceAll(dir, '<tmp>').replaceAll(ROOT.endsWith('/') ? ROOT : `${ROOT}/`, '')
    const commands = Object.fromEntries(order.map((c) => [c, `node ${argv[c].map(tmp).join(' ')}`])) as Record<Command, string>
    commands.live = commands.live.replace(/--base-url \S+/, '--base-url <engine>')
    return { reps, commands, profiles, modules }
  } finally {
    await engine?.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}
