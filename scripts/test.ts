// `pnpm test`: the typecheck (tsc --noEmit) and armproof's own tests (vitest, project unit) side
// by side; fails when either fails. Extra arguments go to vitest (e.g. a file or -t 'name').
// `pnpm test:fast` (`--fast` first): the same typecheck beside the fast project, the tests that
// start no engine, sshd, podman or Prometheus (vitest.config.ts, test/support/fast.ts).
// `tsc` and `vitest` are found on PATH, as pnpm puts node_modules/.bin there for its scripts.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { sharedTempRoot } from '../test/support/temp-root.ts'

const TS_BUILD_INFO = fileURLToPath(new URL('../node_modules/.cache/armproof/typecheck.tsbuildinfo', import.meta.url))

const run = (bin: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> =>
  new Promise((resolve) => {
    const child = spawn(bin, args, { stdio: 'inherit', env })
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)))
    child.on('error', () => resolve(1))
  })

function tests(): NodeJS.ProcessEnv {
  if (process.env.TMPDIR) return process.env
  const shared = sharedTempRoot()
  return shared ? { ...process.env, TMPDIR: shared } : process.env
}

const fast = process.argv[2] === '--fast'
const extra = process.argv.slice(fast ? 3 : 2)

const [tsc, vitest] = await Promise.all([
  // One checker thread: tsc runs beside the tests, and TypeScript's default of four checkers
  // doubles its CPU (about 8 s against 4 s here) for a wall time the tests hide anyway.
  // Incremental: what it learnt is kept under node_modules/.cache, so a run after a small change
  // rechecks what the change touches (a fresh clone, as in CI, checks everything).
  run('tsc', ['--noEmit', '-p', '.', '--singleThreaded', '--incremental', '--tsBuildInfoFile', TS_BUILD_INFO]),
  // The tests' temp files on a tmpfs, unless the caller chose a TMPDIR (test/support/temp-root.ts).
  run('vitest', ['run', '--project', fast ? 'fast' : 'unit', ...extra], tests()),
])
if (tsc !== 0) process.stderr.write(`pnpm test: the typecheck failed (tsc exit ${tsc})\n`)
process.exit(tsc !== 0 ? tsc : vitest)
