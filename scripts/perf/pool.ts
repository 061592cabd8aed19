// The in-process pool (helpers/cli/in-process-pool.ts) next to vitest's stock forks pool, the one
// `pnpm verify` falls back to, side by side in one run: a replay verdict (the demo recording) and a
// live verdict on an instant reference engine, each pool in turn, the order alternated per rep.
// Wall time, and CPU (user + system of verify and every process it waited for, from sh's `times`).
// The stock pool is reached as a user would reach it: a preload makes vitest/worker look changed.
//
//   node scripts/perf/pool.ts [--reps N]
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { startEngine } from '../../engine/launch.ts'
import { ROOT, engineArgs } from '../../test/support/run-verify.ts'
import { REPLAY_ARGS } from './fixed-cost.ts'
import { fixed, spread, type Spread } from './stats.ts'

const POOLS = ['in-process', 'forks'] as const
type Pool = (typeof POOLS)[number]
/** Both pools load one preload, so that neither pays for hooks alone. */
const PRELOAD: Record<Pool, string> = { 'in-process': 'suite-process.ts', forks: 'no-worker-runtime.ts' }
const FELL_BACK = /the suite runs in a worker forked by vitest/

export interface PoolRun {
  wallMs: number
  cpuMs: number
}

/** `sh`'s `times` second line: the children's user and system time, e.g. `0m1.230s 0m0.210s`. */
function childrenCpuMs(times: string): number {
  const line = times.trim().split('\n').at(-1) ?? ''
  const parts = [...line.matchAll(/(\d+)m([\d.]+)s/g)]
  if (parts.length !== 2) throw new Error(`cannot read sh's times output: ${times}`)
  return parts.reduce((sum, m) => sum + (Number(m[1]) * 60 + Number(m[2])) * 1000, 0)
}

function verifyOnce(pool: Pool, args: readonly string[], env: Record<string, string>): Promise<PoolRun> {
  const dir = mkdtempSync(join(tmpdir(), 'armproof-perf-pool-'))
  const report = join(dir, 'report.json')
  const script = '"$@" >"$OUT" 2>&1; code=$?; times >"$TIMES"; exit $code'
  const files = { OUT: join(dir, 'out'), TIMES: join(dir, 'times') }
  const started = performance.now()
  const child = spawn('sh', ['-c', script, 'sh', process.execPath, 'bin/verify.ts', ...args, '--report', report], {
    cwd: ROOT,
    stdio: 'ignore',
    env: {
      ...process.env,
      CI: 'true',
      VERIFY_NO_DOTENV: '1',
      ...env,
      ...files,
      NODE_OPTIONS: `--import=${join(ROOT, 'test/support', PRELOAD[pool])}`,
    },
  })
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => {
      const wallMs = performance.now() - started
      try {
        const out = readFileSync(files.OUT, 'utf8')
        const verdict = (JSON.parse(readFileSync(report, 'utf8')) as { verdict: string }).verdict
        if (code !== 0 || verdict !== 'green') throw new Error(`verify (${pool}) exited ${code} (${verdict}):\n${out.slice(-1500)}`)
        if (FELL_BACK.test(out) !== (pool === 'forks'))
          throw new Error(`verify ran in the wrong pool (wanted ${pool}):\n${out.slice(-1500)}`)
        resolve({ wallMs, cpuMs: childrenCpuMs(readFileSync(files.TIMES, 'utf8')) })
      } catch (error) {
        reject(error)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })
  })
}

export type PoolResult = Record<'replay' | 'live', Record<Pool, { wall: Spread; cpu: Spread }>>

export async function measurePools(options: { reps: number; log: (line: string) => void }): Promise<PoolResult> {
  const engine = await startEngine({
    svc: 'perf-pool',
    processName: 'rperf-pool',
    args: ['--prefill-interleave', '1', '--completion-latency-ms', '0'],
  })
  try {
    await engine.waitReady()
    const kinds = {
      replay: { args: REPLAY_ARGS, env: {} },
      live: {
        args: [
          ...engineArgs(engine),
          '--knob',
          'PREFILL_INTERLEAVE',
          '--value',
          '1',
          '--health-budget',
          '8s',
          '--meter-window',
          '2s',
          '--probe-timeout',
          '3s',
          '--host-timeout',
          '10s',
        ],
        env: engine.env,
      },
    } as const
    const runs: Record<string, PoolRun[]> = {}
    // One untimed run of each first: neither pool pays for a cold disk or compile cache alone.
    for (const kind of ['replay', 'live'] as const) for (const pool of POOLS) await verifyOnce(pool, kinds[kind].args, kinds[kind].env)
    for (let i = 0; i < options.reps; i++) {
      const order = i % 2 === 0 ? POOLS : [...POOLS].reverse()
      for (const kind of ['replay', 'live'] as const)
        for (const pool of order) (runs[`${kind} ${pool}`] ??= []).push(await verifyOnce(pool, kinds[kind].args, kinds[kind].env))
      options.log(
        `  pool ${i + 1}/${options.reps}: ${Object.entries(runs)
          .map(([k, v]) => `${k} ${fixed(v.at(-1)!.wallMs / 1000)} s`)
          .join(', ')}`,
      )
    }
    const of = (kind: 'replay' | 'live', pool: Pool) => ({
      wall: spread(runs[`${kind} ${pool}`]!.map((r) => r.wallMs)),
      cpu: spread(runs[`${kind} ${pool}`]!.map((r) => r.cpuMs)),
    })
    return {
      replay: { 'in-process': of('replay', 'in-process'), forks: of('replay', 'forks') },
      live: { 'in-process': of('live', 'in-process'), forks: of('live', 'forks') },
    }
  } finally {
    await engine.stop()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { reps: { type: 'string', default: '8' } } })
  const reps = Number(values.reps)
  if (!Number.isInteger(reps) || reps < 3) throw new Error(`--reps must be an int ≥ 3, got ${values.reps}`)
  const result = await measurePools({ reps, log: (line) => void process.stderr.write(`${line}\n`) })
  const s = (x: Spread) => `${fixed(x.median / 1000)} s (min ${fixed(x.min / 1000)})`
  for (const kind of ['replay', 'live'] as const) {
    const [a, b] = [result[kind]['in-process'], result[kind].forks]
    process.stdout.write(
      `${kind.padEnd(6)} in-process wall ${s(a.wall)}, cpu ${s(a.cpu)} · forks wall ${s(b.wall)}, cpu ${s(b.cpu)} · in-process saves ${fixed(100 * (1 - a.cpu.median / b.cpu.median), 0)}% CPU, ${fixed(100 * (1 - a.wall.median / b.wall.median), 0)}% wall (medians, n=${reps})\n`,
    )
  }
}
