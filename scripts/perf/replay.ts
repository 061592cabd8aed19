// Measure 3: a full offline replay of the recorded demo fixtures next to a bare vitest run of one
// trivial test (a throwaway file and a minimal config in a temp dir, run by this project's vitest).
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT, cleanup, runVerify } from '../../test/support/run-verify.ts'

export const REPLAY_ARGS = ['--svc', 'demo', '--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--mode', 'replay'] as const

export interface ReplayRep {
  replayMs: number
  trivialMs: number
  ratio: number
}

export interface ReplayResult {
  reps: ReplayRep[]
  replayCommand: string
  trivialCommand: string
}

const VITEST = join(ROOT, 'node_modules/vitest/vitest.mjs')

function timed(cmd: string, args: readonly string[], env: Record<string, string>): Promise<{ ms: number; code: number; output: string }> {
  return new Promise((resolve) => {
    const started = performance.now()
    execFile(cmd, args, { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => {
      const ms = performance.now() - started
      const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : -1) : 0
      resolve({ ms, code, output: `${stdout}${stderr}` })
    })
  })
}

async function replayOnce(): Promise<number> {
  const run = await runVerify(REPLAY_ARGS, { timeoutMs: 60_000 })
  const verdict = run.report?.verdict
  const ms = run.ms
  const out = `${run.stdout.slice(-1500)}\n${run.stderr.slice(-1500)}`
  cleanup(run)
  if (run.exitCode !== 0 || verdict !== 'green') throw new Error(`replay exited ${run.exitCode} (${verdict ?? 'no report'}):\n${out}`)
  return ms
}

export async function measureReplay(options: { reps: number; log: (line: string) => void }): Promise<ReplayResult> {
  if (!existsSync(VITEST)) throw new Error(`no vitest at ${VITEST}: run pnpm install`)
  const dir = mkdtempSync(join(tmpdir(), 'armproof-perf-trivial-'))
  try {
    // The baseline: vitest's own startup, config load (a .ts config, as the project's) and one test.
    writeFileSync(join(dir, 'vitest.config.ts'), "export default { test: { globals: true, include: ['trivial.test.ts'] } }\n")
    writeFileSync(join(dir, 'trivial.test.ts'), "test('trivial', () => { if (1 + 1 !== 2) throw new Error('arithmetic') })\n")
    const trivialArgs = [VITEST, 'run', '--root', dir, '--config', join(dir, 'vitest.config.ts')]
    const trivialOnce = async (): Promise<number> => {
      const r = await timed(process.execPath, trivialArgs, { CI: 'true' })
      if (r.code !== 0 || !/1 passed/.test(r.output)) throw new Error(`trivial vitest run failed (exit ${r.code}):\n${r.output.slice(-1500)}`)
      return r.ms
    }
    // One untimed pair first, so neither side pays for cold disk caches alone.
    await replayOnce()
    await trivialOnce()
    const reps: ReplayRep[] = []
    for (let i = 0; i < options.reps; i++) {
      const replayMs = await replayOnce()
      const trivialMs = await trivialOnce()
      reps.push({ replayMs, trivialMs, ratio: replayMs / trivialMs })
      options.log(`  replay ${i + 1}/${options.reps}: ${(replayMs / 1000).toFixed(2)} s vs trivial vitest ${(trivialMs / 1000).toFixed(2)} s (${(replayMs / trivialMs).toFixed(2)}×)`)
    }
    return {
      reps,
      replayCommand: `node bin/verify.ts ${REPLAY_ARGS.join(' ')} --report <tmp>/report.json --junit <tmp>/junit.xml`,
      trivialCommand: 'node node_modules/vitest/vitest.mjs run --root <tmp> --config <tmp>/vitest.config.ts (one test, globals, no imports)',
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
