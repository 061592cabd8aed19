// The record and output rows of the fault table (docs/writeback-faults.md). A record row runs a
// whole `pnpm verify --mode record` against its own reference engine, with the file system under
// the fixtures folder failing as a real one does (test/support/fs-faults.ts, loaded with
// NODE_OPTIONS: no root, no mount); an observed verdict must stand (exit 4 when the fixtures could
// not be written), nothing half-written may be left, and every recording written must replay to
// its recorded verdict. The output rows are refused before contact: the same verify() in this process.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startEngine, type EngineHandle, type EngineOptions } from '../../engine/launch.ts'
import { oneVerifyAtATime, type FaultRow, type Outcome } from './fault-row.ts'
import { FAST, ROOT, cleanup, engineArgs, runVerify, verdicts, type VerifyRun } from './run-verify.ts'
import { verifyExactly } from './verify-in-process.ts'
import { writeTargets } from './fleet.ts'

const ARM = ['--knob', 'PREFILL_INTERLEAVE', '--value', '1']
const unique = () => randomBytes(3).toString('hex')

/** Every file under `dir` (hidden ones too), sorted: what a run left behind. */
async function filesUnder(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).map(String).sort()
}

/** The env that makes the file system under `folder` fail as `fault` says (./fs-faults.ts). */
const faultEnv = (fault: 'EXDEV' | 'ENOSPC' | 'EACCES', folder: string) => ({
  NODE_OPTIONS: `--import=${join(ROOT, 'test/support/fs-faults.ts')}`,
  ARMPROOF_FS_FAULT: `${fault}:${folder}`,
})

/** A reference engine armed to 1, with `faults`. */
const armedEngine = (faults: NonNullable<EngineOptions['faults']>) =>
  startEngine({ svc: `rf-${unique()}`, processName: `rrf-${unique()}`, args: ['--prefill-interleave', '1'], faults })

/**
 * The engine armed to 1, without faults, of the rows that only record from it (their harm is in
 * the verify process's file system): one row after another (oneVerifyAtATime), so each verdict is
 * about it alone, with no other row's traffic in flight. Started by the first; stopSharedEngine
 * (faults.test.ts, after the table) stops it.
 */
let shared: Promise<EngineHandle> | undefined

export async function stopSharedEngine(): Promise<void> {
  const engine = shared
  shared = undefined
  await engine?.then(
    (e) => e.stop(),
    () => {},
  )
}

/**
 * A reference engine armed to 1 (`'shared'`, or one of its own with `faults`, stopped after `fn`)
 * and a fixtures folder `<parent>/rec` for `fn`, gone after it. One such row at a time
 * (oneVerifyAtATime): every one runs pnpm verify.
 */
function withEngine<T>(
  faults: 'shared' | NonNullable<EngineOptions['faults']>,
  fn: (engine: EngineHandle, folder: string, parent: string) => Promise<T>,
  prepare?: (folder: string) => Promise<void>,
): Promise<T> {
  return oneVerifyAtATime(async () => {
    const parent = await mkdtemp(join(tmpdir(), 'armproof-rec-row-'))
    const folder = join(parent, 'rec')
    await prepare?.(folder)
    const engine = await (faults === 'shared' ? (shared ??= armedEngine([])) : armedEngine(faults))
    try {
      return await fn(engine, folder, parent)
    } finally {
      if (faults !== 'shared') await engine.stop()
      await rm(parent, { recursive: true, force: true })
    }
  })
}

/** `run`'s outcome after `check`, the run's folder removed whatever happens. */
async function outcomeOf(run: VerifyRun, check: () => Promise<void> = async () => {}): Promise<Outcome> {
  try {
    await check()
    return { exit: run.exitCode, output: `${run.stdout}${run.stderr}` }
  } finally {
    cleanup(run)
  }
}

/**
 * Records a green arm into `<parent>/rec` with the file system there failing as `fault` says;
 * `prepare` sets the folder up first (e.g. an older recording there). `check` sees the run.
 */
async function record(
  fault: 'EXDEV' | 'ENOSPC' | 'EACCES',
  check: (run: VerifyRun, folder: string) => Promise<void>,
  options: { prepare?: (folder: string) => Promise<void>; args?: string[] } = {},
): Promise<Outcome> {
  return withEngine(
    'shared',
    async (engine, folder, parent) => {
      const run = await runVerify(
        [...engineArgs(engine), ...ARM, ...FAST, '--mode', 'record', '--fixtures', folder, ...(options.args ?? [])],
        { engine, env: faultEnv(fault, folder) },
      )
      return outcomeOf(run, async () => {
        assert.doesNotMatch(run.stderr, /^\s+at .+:\d+:\d+\)?$/m, 'a stack trace was printed')
        // The observed verdict stands, in the report and in the last line, whatever became of the fixtures.
        assert.equal(run.report?.verdict, 'green', run.stdout + run.stderr)
        assert.match(run.stdout, /^GREEN · PREFILL_INTERLEAVE=1 proven on /m)
        // Nothing half-written: no temp file or folder beside the recording or in it.
        for (const f of await filesUnder(parent)) assert.doesNotMatch(f, /\.tmp/, `left behind: ${f}`)
        await check(run, folder)
      })
    },
    options.prepare,
  )
}

/** Replays `folder` (no socket, as test/e2e/record-replay.test.ts does) and returns the run. */
async function replay(svc: string, folder: string): Promise<VerifyRun> {
  return runVerify(['--svc', svc, ...ARM, '--mode', 'replay', '--fixtures', folder], {
    env: { NODE_OPTIONS: `--import=${join(ROOT, 'test/support/no-sockets.ts')}` },
    timeoutMs: 180_000,
  })
}

/** A committed demo recording copied to `folder`: an older recording the run overwrites with --force. */
const olderRecording = (folder: string) => cp(join(ROOT, 'fixtures/demo/PREFILL_INTERLEAVE'), folder, { recursive: true })
const texts = async (folder: string) => Promise.all(['run.json', 'http.json', 'host.json'].map((f) => readFile(join(folder, f), 'utf8')))

export const RECORD_FAULTS: readonly FaultRow[] = [
  {
    area: 'record',
    fault: 'recording into a folder that is its own mount (every rename across it fails EXDEV)',
    expected:
      'green, exit 0: each file is staged inside the folder and swapped in by a rename within it; the recording replays to its verdict',
    exit: 0,
    message: 'GREEN · PREFILL_INTERLEAVE=1 proven on',
    run: () =>
      record('EXDEV', async (run, folder) => {
        assert.deepEqual(await filesUnder(folder), ['host.json', 'http.json', 'run.json'])
        const replayed = await replay(run.report!.svc, folder)
        assert.equal(replayed.exitCode, 0, replayed.stdout + replayed.stderr)
        assert.deepEqual(verdicts(replayed.report), verdicts(run.report))
        cleanup(replayed)
      }),
  },
  {
    area: 'record',
    fault: 'recording onto a full disk (ENOSPC under the fixtures folder), over an older recording with --force',
    expected:
      'the verdict line stands, exit 4, one line saying the fixtures were not written; no temp file; the older recording is left whole',
    exit: 4,
    message: 'could not write the fixtures to',
    async run() {
      let before: string[] = []
      return record(
        'ENOSPC',
        async (run, folder) => {
          assert.match(run.stderr, /\(ENOSPC\); no fixture file was written or replaced/)
          assert.match(run.stderr, /exit 4: the verdict above stands \(green\)/)
          assert.deepEqual(await texts(folder), before, 'the older recording was changed')
        },
        {
          prepare: async (folder) => {
            await olderRecording(folder)
            before = await texts(folder)
          },
          args: ['--force'],
        },
      )
    },
  },
  {
    area: 'record',
    fault: 'recording into a folder this user may not write (EACCES after the check before contact)',
    expected: 'the verdict line stands, exit 4, one line; nothing left',
    exit: 4,
    message: '(EACCES); no fixture file was written or replaced',
    run: () =>
      record('EACCES', async (_run, folder) => {
        assert.deepEqual(await filesUnder(folder).catch(() => []), [])
      }),
  },
  {
    area: 'record',
    fault: "a fleet recorded onto a full disk (ENOSPC under one target's fixtures folder)",
    expected:
      'each target keeps its verdict (the fleet GREEN line), exit 4, one line naming the target whose fixtures were not written; no temp file',
    exit: 4,
    message: 'could not write the fixtures to',
    run: () =>
      withEngine('shared', async (engine, folder, parent) => {
        const file = writeTargets({ knob: 'PREFILL_INTERLEAVE', value: '1', host: 'local' }, [
          { svc: engine.svc, 'base-url': engine.baseUrl, process: engine.processName, fixtures: folder },
        ])
        const run = await runVerify(['--targets', file, '--mode', 'record', ...FAST], { engine, env: faultEnv('ENOSPC', folder) })
        return outcomeOf(run, async () => {
          assert.equal(
            (run.report as unknown as { targets: Array<{ report: { verdict: string } }> }).targets[0]!.report.verdict,
            'green',
            run.stdout + run.stderr,
          )
          assert.match(run.stdout, /^fleet GREEN · 1 green/m)
          assert.match(run.stderr, new RegExp(`armproof: ${engine.svc}: could not write the fixtures to`))
          for (const f of await filesUnder(parent)) assert.doesNotMatch(f, /\.tmp/, `left behind: ${f}`)
        })
      }),
  },
  {
    area: 'record',
    fault:
      'a recording made by the suites straight from env (VERIFY_MODE=record pnpm vitest run suites: no pnpm verify to note the verdict after)',
    expected: 'the recording carries the verdicts the suite judged, and replays to them (it once held none: "re-record it")',
    exit: 0,
    message: 'GREEN · PREFILL_INTERLEAVE=1 proven on',
    run: () =>
      withEngine([], async (engine, folder) => {
        const { execa } = await import('execa')
        const suites = await execa('pnpm', ['exec', 'vitest', 'run', 'suites'], {
          cwd: ROOT,
          reject: false,
          env: {
            ...engine.env,
            CI: 'true',
            VERIFY_NO_DOTENV: '1',
            VERIFY_SVC: engine.svc,
            VERIFY_KNOB: 'PREFILL_INTERLEAVE',
            VERIFY_VALUE: '1',
            VERIFY_BASE_URL: engine.baseUrl,
            VERIFY_PROCESS: engine.processName,
            VERIFY_HOST: 'local',
            VERIFY_MODE: 'record',
            VERIFY_FIXTURES: folder,
            VERIFY_HEALTH_BUDGET: '8s',
            VERIFY_METER_WINDOW: '2s',
            VERIFY_PROBE_TIMEOUT: '3s',
          },
        })
        await engine.stop()
        assert.equal(suites.exitCode, 0, String(suites.stdout) + String(suites.stderr))
        const meta = JSON.parse(await readFile(join(folder, 'run.json'), 'utf8')) as { verdict?: string; steps?: Record<string, string> }
        assert.equal(meta.verdict, 'green')
        assert.equal(Object.keys(meta.steps ?? {}).length, 10)
        const replayed = await replay(engine.svc, folder)
        return outcomeOf(replayed, async () =>
          assert.doesNotMatch(replayed.stdout, /holds no recorded verdict|differs from the recorded verdict/),
        )
      }),
  },
  {
    area: 'record',
    alone: true,
    fault: 'a run whose ledger passed the 64 MiB host-output cap (--ledger-cmd "podman logs {svc}"), recorded',
    expected:
      'recorded (the cut output and its `output-cut` failure kept), and its replay reaches the recorded verdict: inconclusive at ledger, exit 3 (armproof once refused its own recording, exit 2)',
    exit: 3,
    message: 'host-output cap and was cut',
    run: () =>
      withEngine(['ledger_huge'], async (engine, folder) => {
        const recorded = await runVerify(
          [...engineArgs(engine), ...ARM, ...FAST, '--ledger-cmd', 'podman logs {svc}', '--mode', 'record', '--fixtures', folder],
          { engine, timeoutMs: 180_000 },
        )
        await engine.stop()
        await outcomeOf(recorded, async () => {
          assert.equal(recorded.exitCode, 3, recorded.stdout + recorded.stderr)
          assert.equal(verdicts(recorded.report).ledger, 'inconclusive')
          assert.match(await readFile(join(folder, 'host.json'), 'utf8'), /"failure": "output-cut"/)
        })
        const replayed = await replay(engine.svc, folder)
        const o = await outcomeOf(replayed, async () => {
          assert.deepEqual(verdicts(replayed.report), verdicts(recorded.report))
          assert.doesNotMatch(replayed.stdout, /differs from the recorded verdict/)
        })
        return { ...o, output: `${o.output}${JSON.stringify(replayed.report?.steps.find((s) => s.id === 'ledger')?.observed)}` }
      }),
  },
]

/**
 * A refusal before contact through the same verify() as pnpm verify, in this process, with exactly
 * `args` (no output of its own added); a run that got as far as the proof steps fails the row. The
 * files `absent` must not exist after it.
 */
async function refusedBeforeContact(args: string[], options: { absent?: string[] } = {}): Promise<Outcome> {
  const { exitCode, output } = await verifyExactly(args)
  for (const p of options.absent ?? []) await assert.rejects(readFile(p), `${p} was written`)
  assert.doesNotMatch(output, /^\s+at .+:\d+:\d+\)?$/m)
  return { exit: exitCode, output }
}

/** A temp folder for one row, removed after `fn`. */
async function inTemp<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'armproof-out-row-'))
  try {
    return await fn(dir)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

const LIVE = ['--svc', 'demo', ...ARM, '--base-url', 'http://127.0.0.1:9']

export const OUTPUT_FAULTS: readonly FaultRow[] = [
  {
    area: 'outputs',
    fault: '--report X --junit X',
    expected: 'refused before contact: one would overwrite the other (X once held the JUnit XML while the last line named the report)',
    exit: 2,
    message: '--report and --junit: both name',
    run: () =>
      inTemp((dir) =>
        refusedBeforeContact([...LIVE, '--report', join(dir, 'x.json'), '--junit', join(dir, 'x.json')], { absent: [join(dir, 'x.json')] }),
      ),
  },
  {
    area: 'outputs',
    fault: '--mode record --fixtures D --report D/run.json',
    expected: 'refused before contact: a fixtures folder holds its recording only (the report once overwrote the recording)',
    exit: 2,
    message: 'is inside the fixtures folder being recorded',
    run: () =>
      inTemp((dir) =>
        refusedBeforeContact([...LIVE, '--mode', 'record', '--fixtures', join(dir, 'D'), '--report', join(dir, 'D', 'run.json')], {
          absent: [join(dir, 'D', 'run.json')],
        }),
      ),
  },
  {
    area: 'outputs',
    fault: '--mode replay --fixtures D --report D/run.json',
    expected: 'refused before anything runs: the recording is not written into',
    exit: 2,
    message: 'is inside the fixtures folder being replayed',
    run: () =>
      inTemp(async (dir) => {
        await olderRecording(join(dir, 'D'))
        const before = await texts(join(dir, 'D'))
        const o = await refusedBeforeContact([
          '--svc',
          'demo',
          ...ARM,
          '--mode',
          'replay',
          '--fixtures',
          join(dir, 'D'),
          '--report',
          join(dir, 'D', 'run.json'),
        ])
        assert.deepEqual(await texts(join(dir, 'D')), before, 'the replayed recording was written into')
        return o
      }),
  },
  {
    area: 'outputs',
    fault: '--svc .. (it fits [A-Za-z0-9_.-]+; record mode once wrote to fixtures/../PREFILL_INTERLEAVE)',
    expected: 'refused before contact: a path step is not a service name',
    exit: 2,
    message: '".." is a path step, not a service name',
    run: () =>
      refusedBeforeContact(['--svc', '..', ...ARM, '--base-url', 'http://127.0.0.1:9', '--mode', 'record'], {
        absent: [join(ROOT, 'PREFILL_INTERLEAVE', 'run.json')],
      }),
  },
  {
    area: 'outputs',
    fault: '--svc .',
    expected: 'refused before contact',
    exit: 2,
    message: '"." is a path step, not a service name',
    run: () => refusedBeforeContact(['--svc', '.', ...ARM, '--base-url', 'http://127.0.0.1:9']),
  },
  {
    area: 'outputs',
    fault: '--junit a symlink to the --report path',
    expected: 'refused: one path once symlinks are resolved',
    exit: 2,
    message: 'are one path once symlinks are resolved',
    run: () =>
      inTemp(async (dir) => {
        await writeFile(join(dir, 'report.json'), '')
        await symlink(join(dir, 'report.json'), join(dir, 'link.xml'))
        return refusedBeforeContact([...LIVE, '--report', join(dir, 'report.json'), '--junit', join(dir, 'link.xml')])
      }),
  },
  {
    area: 'outputs',
    fault: "a fleet in --mode record whose target's fixtures folder already holds a recording (no --force)",
    expected: 'refused before contact, as a one-target run refuses it',
    exit: 2,
    message: 'already holds a recording (demo PREFILL_INTERLEAVE=1',
    run: () =>
      inTemp(async (dir) => {
        await olderRecording(join(dir, 'held'))
        const file = writeTargets({ knob: 'PREFILL_INTERLEAVE', value: '1', host: 'local' }, [
          { svc: 'llm-7', 'base-url': 'http://127.0.0.1:9', fixtures: join(dir, 'held') },
        ])
        return refusedBeforeContact(['--targets', file, '--mode', 'record'])
      }),
  },
  {
    area: 'outputs',
    fault: "a fleet whose --report is inside a target's fixtures folder being recorded",
    expected: 'refused before contact',
    exit: 2,
    message: 'is inside the fixtures folder being recorded (targets[0] fixtures',
    run: () =>
      inTemp(async (dir) => {
        await mkdir(join(dir, 'rec'))
        const file = writeTargets({ knob: 'PREFILL_INTERLEAVE', value: '1', host: 'local' }, [
          { svc: 'llm-7', 'base-url': 'http://127.0.0.1:9', fixtures: join(dir, 'rec') },
        ])
        return refusedBeforeContact(['--targets', file, '--mode', 'record', '--report', join(dir, 'rec', 'fleet.json')], {
          absent: [join(dir, 'rec', 'fleet.json')],
        })
      }),
  },
]
