// pnpm record-demo: re-records the committed demo fixtures against the reference engine.
//   fixtures/demo/PREFILL_INTERLEAVE          a green arm
//   fixtures/demo-ignored/PREFILL_INTERLEAVE  a red arm: the engine ignores the knob; a 4-minute meter watch
// Each run is recorded into a scratch folder beside its target, then checked before it replaces
// the committed one: the expected exit code, a replay (offline, as a child process) that reaches
// the same verdicts, digests that verify, and no path of this machine in any file. Any failure
// leaves the committed recording as it was and exits non-zero.
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execa } from 'execa'
import { startEngine } from '../engine/launch.ts'
import { verify } from '../helpers/cli/verify.ts'
import { checkRecording } from '../helpers/seams/recording.ts'
import { STEP_IDS } from '../helpers/steps/verdict.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const KNOB = 'PREFILL_INTERLEAVE'
const RUNS = [
  // Neither run has an earlier record of its service: the one-flag law's step is skipped on purpose, saying so.
  { svc: 'demo', faults: [] as const, window: '30s', expect: 0, verdict: 'green', notPassed: { 'one-flag': 'skipped' } },
  {
    svc: 'demo-ignored',
    faults: ['knob_ignored'] as const,
    window: '4m',
    expect: 1,
    verdict: 'red',
    notPassed: { meter: 'failed', 'one-flag': 'skipped' },
  },
]
const only = process.argv.slice(2)

function fail(message: string): never {
  throw new Error(`record-demo: ${message}; the committed recording was left as it was`)
}

/** Lines of the recording that hold a path of this machine. */
function machinePaths(folder: string): string[] {
  const places = [ROOT.replace(/\/$/, ''), tmpdir(), homedir()].filter((p) => p.length > 1)
  const found: string[] = []
  for (const name of readdirSync(folder)) {
    const lines = readFileSync(join(folder, name), 'utf8').split('\n')
    lines.forEach((line, i) => {
      if (places.some((p) => line.includes(p))) found.push(`${name}:${i + 1}`)
    })
  }
  return found
}

for (const r of RUNS.filter((x) => only.length === 0 || only.includes(x.svc))) {
  const target = join(ROOT, 'fixtures', r.svc, KNOB)
  const scratch = join(ROOT, 'fixtures', r.svc, `.${KNOB}.recording`)
  rmSync(scratch, { recursive: true, force: true })
  // A name of this run's own: every engine of the process's name on the host is named in the recording
  // (with its argv), so another checkout's demo engine running meanwhile must not share it.
  const engine = await startEngine({
    svc: r.svc,
    processName: `rd-${r.svc}`.slice(0, 10) + `-${process.pid % 10_000}`,
    args: ['--prefill-interleave', '1'],
    faults: [...r.faults],
  })
  try {
    process.env.PATH = engine.env.PATH
    const flags = ['--svc', r.svc, '--knob', KNOB, '--value', '1', '--previous', '0']
    const code = await verify({
      rawArgs: [
        ...flags,
        '--base-url',
        engine.baseUrl,
        '--process',
        engine.processName,
        '--meter-window',
        r.window,
        '--health-budget',
        '60s',
        '--mode',
        'record',
        '--fixtures',
        relative(ROOT, scratch),
      ],
      env: { ...process.env, VERIFY_NO_DOTENV: '1' },
      cwd: ROOT,
      out: process.stdout,
      err: process.stderr,
    })
    if (code !== r.expect) fail(`recording ${r.svc} exited ${code}, expected ${r.expect}`)
  } finally {
    await engine.stop()
  }
  try {
    const checked = checkRecording(scratch)
    if ('problem' in checked) fail(checked.problem)
    if (checked.set.meta.verdict !== r.verdict) fail(`${r.svc} was recorded ${checked.set.meta.verdict}, expected ${r.verdict}`)
    // Every step's verdict as the demo means it: a judge that changed its mind is a reason to stop and look.
    const want = Object.fromEntries(STEP_IDS.map((id) => [id, (r.notPassed as Record<string, string>)[id] ?? 'passed']))
    const got = checked.set.meta.steps ?? {}
    const differ = STEP_IDS.filter((id) => got[id] !== want[id]).map((id) => `${id} ${got[id] ?? 'absent'} (expected ${want[id]})`)
    if (differ.length) fail(`${r.svc} step verdicts differ from the demo's: ${differ.join(', ')}`)
    const paths = machinePaths(scratch)
    if (paths.length) fail(`paths of this machine in ${paths.join(', ')}`)
    const replay = await execa(
      process.execPath,
      [
        join(ROOT, 'bin/verify.ts'),
        '--svc',
        r.svc,
        '--knob',
        KNOB,
        '--value',
        '1',
        '--mode',
        'replay',
        '--fixtures',
        relative(ROOT, scratch),
      ],
      {
        cwd: ROOT,
        reject: false,
        env: { CI: 'true', VERIFY_NO_DOTENV: '1' },
        stdin: 'ignore',
      },
    )
    if (replay.exitCode !== r.expect)
      fail(`the new recording of ${r.svc} replays to exit ${replay.exitCode}, expected ${r.expect}:\n${replay.stdout}\n${replay.stderr}`)
    mkdirSync(dirname(target), { recursive: true })
    const old = `${target}.old`
    rmSync(old, { recursive: true, force: true })
    if (existsSync(target)) renameSync(target, old)
    renameSync(scratch, target)
    rmSync(old, { recursive: true, force: true })
    console.log(`record-demo: ${relative(ROOT, target)} recorded ${r.verdict}, replays the same, digests verified`)
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}
process.exitCode = 0
