// The fault table of writeback and replay: every way a careless operator or an attacker was seen
// to break them (issue 11), and what armproof must do instead. test/writeback/faults.test.ts runs
// every row (its `run` does the harm and checks the page, the files, the output) and checks the
// exit code and the message; docs/writeback-faults.md is generated from it (scripts/faults-doc.ts),
// and a test keeps the two equal.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { chmod, chown, cp, link, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileDigests, stableJson } from '../../helpers/seams/digest.ts'
import { verifyRecording } from '../../helpers/seams/recording.ts'
import type { RunMeta } from '../../helpers/seams/recording-files.ts'
import { nodeFs } from '../../helpers/writeback/atomic.ts'
import { alive, lockPathOf } from '../../helpers/writeback/lock.ts'
import { cliRace, race, startWorker } from './writeback-race.ts'
import { ROOT, cleanup, runVerify } from './run-verify.ts'
import { verifyInProcess } from './verify-in-process.ts'
import { greenReport, inSandbox, PAGE, passedSteps, sandbox, type Run } from './writeback-sandbox.ts'
import { runId } from '../../helpers/report/identity.ts'
import { oneVerifyAtATime, type FaultRow, type Outcome } from './fault-row.ts'
import { MERGE_FAULTS } from './merge-faults.ts'
import { OUTPUT_FAULTS, RECORD_FAULTS } from './record-faults.ts'
import { PAGE_FAULTS } from './page-faults.ts'
import { DEMO_ARM } from './demo-args.ts'

export type { FaultRow, Outcome } from './fault-row.ts'

/** The concurrency tests' size: writer processes per round, and rounds; `node bin/writeback.ts` processes on one held lock. */
export const RACE = { writers: 20, rounds: 10, commands: 5 } as const

const now = () => new Date().toISOString()
const outcome = (r: Run): Outcome => ({ exit: r.code, output: `${r.out}${r.err}` })
const ESC = '\u001b'

/**
 * A live process on this host other than this one, as a live writeback's lock names it: this
 * process's parent (vitest's main process, or whatever started it), alive for as long as this one runs.
 */
function liveOtherPid(): number {
  const pid = process.ppid
  assert.ok(pid !== process.pid && alive(pid), `the parent pid ${pid} is not a live process other than this one`)
  return pid
}

/** Writes `report` (an object patched over a fresh green report) and runs writeback; the page must be unchanged when refused. */
async function writebackWith(
  over: Record<string, unknown> | string | Buffer,
  args: string[] = [],
  run?: Parameters<typeof greenReport>[2],
): Promise<Outcome> {
  const report = typeof over === 'string' || Buffer.isBuffer(over) ? over : greenReport(now(), over, run)
  return inSandbox(
    async (box) => {
      const r = await box.run(args)
      if (r.code !== 0) {
        assert.equal(await box.page('llm-7.md'), PAGE, 'a refused writeback changed the page')
        assert.deepEqual(await box.files(), ['llm-7.md'], 'a refused writeback left files')
        for (const line of r.err.trimEnd().split('\n').slice(1))
          assert.match(line, /^ {2}- .+ \(.+\): .+; next: .+$/, 'a refusal line is not one line of what, where, found, next')
      }
      return outcome(r)
    },
    { 'llm-7.md': PAGE },
    report,
  )
}

const steps = (patch: (s: Record<string, unknown>[]) => Record<string, unknown>[]) => patch(passedSteps())
const withVerdict = (id: string, verdict: string, extra: Record<string, unknown> = {}) =>
  steps((s) => s.map((x) => (x.id === id ? { ...x, verdict, ...extra } : x)))

/** A copy of a committed demo recording in a temp folder; `edit` changes it; `reseal` recomputes its digests (a careless tool). */
async function recording(
  svc: 'demo' | 'demo-ignored',
  edit: (files: { run: RunMeta; http: unknown[]; host: unknown[] }) => void,
  reseal: boolean,
): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'armproof-rec-'))
  await cp(join(ROOT, 'fixtures', svc, 'PREFILL_INTERLEAVE'), dir, { recursive: true })
  const files = {
    run: JSON.parse(await readFile(join(dir, 'run.json'), 'utf8')) as RunMeta,
    http: JSON.parse(await readFile(join(dir, 'http.json'), 'utf8')) as unknown[],
    host: JSON.parse(await readFile(join(dir, 'host.json'), 'utf8')) as unknown[],
  }
  edit(files)
  const http = stableJson(files.http)
  const host = stableJson(files.host)
  const run = reseal ? { ...files.run, digests: fileDigests(files.run, { 'http.json': http, 'host.json': host }) } : files.run
  await writeFile(join(dir, 'run.json'), stableJson(run))
  await writeFile(join(dir, 'http.json'), http)
  await writeFile(join(dir, 'host.json'), host)
  return dir
}

const DEMO_ARGS = [...DEMO_ARM]

/**
 * Replays a recording folder as `pnpm verify --mode replay` does; the recording must be unchanged
 * afterwards. A replay that goes on to the proof steps runs as a process (sockets refused in it and
 * its workers); one refused before them (`before: 'the proof steps'`) runs the same verify() in this
 * process (test/support/verify-in-process.ts), and reaching the proof steps fails the row.
 */
async function replay(
  dir: string,
  args: string[] = DEMO_ARGS,
  options: { before?: 'the proof steps' } = {},
): Promise<Outcome & { report: unknown }> {
  const before = await Promise.all(['run.json', 'http.json', 'host.json'].map((f) => readFile(join(dir, f), 'utf8').catch(() => '')))
  const argv = [...args, '--mode', 'replay', '--fixtures', dir]
  const run = options.before
    ? await verifyInProcess(argv)
    : await oneVerifyAtATime(() => runVerify(argv, { env: { NODE_OPTIONS: `--import=${join(ROOT, 'test/support/no-sockets.ts')}` } }))
  try {
    assert.doesNotMatch(run.stderr, /^\s+at .+:\d+:\d+\)?$/m, 'a stack trace was printed')
    const after = await Promise.all(['run.json', 'http.json', 'host.json'].map((f) => readFile(join(dir, f), 'utf8').catch(() => '')))
    assert.deepEqual(after, before, 'the replay changed the recording')
    return { exit: run.exitCode, output: `${run.stdout}${run.stderr}`, report: run.report }
  } finally {
    cleanup(run)
    await rm(dir, { recursive: true, force: true })
  }
}

/** A replay `pnpm verify` refuses before any proof step (see replay). */
const refusedReplay = (dir: string, args: string[] = DEMO_ARGS) => replay(dir, args, { before: 'the proof steps' })

/**
 * The unedited demo recording replayed (a full `pnpm verify --mode replay`), once for the rows that
 * need it: "an unedited recording" judges it, the --allow-replay row writes back its report.
 */
let unedited: Promise<Outcome & { report: unknown }> | undefined
const uneditedReplay = () => (unedited ??= recording('demo', () => {}, true).then((dir) => replay(dir)))

type Exchange = { seq: number; method: string; path: string; response?: { body: string } }

const FAULTS_OF_ISSUE_11: readonly FaultRow[] = [
  // 1. No lost update
  {
    area: 'writeback',
    fault: `${RACE.writers} writer processes on one page at once, ${RACE.rounds} rounds`,
    alone: true,
    expected: 'the page lock serialises them: every writeback that exits 0 has its entry on the page; no temp or lock file is left',
    exit: 0,
    message: `${RACE.writers * RACE.rounds} of ${RACE.writers * RACE.rounds} entries present`,
    async run() {
      const r = await race(RACE.writers, RACE.rounds)
      assert.deepEqual(r.problems, [])
      assert.deepEqual(r.leftovers, [])
      return {
        exit: r.lost === 0 && r.problems.length === 0 ? 0 : 1,
        output: `${r.exitedZero - r.lost} of ${r.writers * r.rounds} entries present (${r.ms} ms)`,
      }
    },
  },
  {
    area: 'writeback',
    fault: `${RACE.commands} \`node bin/writeback.ts\` processes, all waiting on the page's lock, released together`,
    alone: true,
    expected: 'the same, through the command itself: each waits, then writes; every one exits 0 with its entry on the page',
    exit: 0,
    message: `${RACE.commands} of ${RACE.commands} entries present`,
    async run() {
      const r = await cliRace(RACE.commands)
      assert.deepEqual(r.problems, [])
      assert.deepEqual(r.leftovers, [])
      return {
        exit: r.lost === 0 && r.problems.length === 0 ? 0 : 1,
        output: `${r.exitedZero - r.lost} of ${r.writers} entries present (${r.ms} ms)`,
      }
    },
  },
  {
    area: 'writeback',
    fault: 'a writer SIGKILLed after writing its temp file, before the rename',
    alone: true,
    expected: "the page is intact; the next run breaks the dead writer's lock, removes its temp file, and writes",
    exit: 0,
    message: 'removed .llm-7.md.armproof-',
    async run() {
      const box = await sandbox({ 'llm-7.md': PAGE }, greenReport(now()))
      const worker = await startWorker()
      try {
        worker.child.send({ type: 'go', args: ['--report', box.reportPath, '--vault', box.vault], cwd: box.dir, pauseBeforeRename: true })
        await worker.next('paused')
        worker.child.kill('SIGKILL')
        await once(worker.child, 'exit')
        assert.equal(await box.page('llm-7.md'), PAGE, 'the killed write changed the page')
        const left = await box.files()
        assert.ok(
          left.some((f) => /^\.llm-7\.md\.armproof-\d+-[0-9a-f]+\.tmp$/.test(f)),
          `no temp file after the kill: ${left.join(', ')}`,
        )
        assert.ok(left.includes('.llm-7.md.armproof.lock'), 'no lock file after the kill')
        const r = await box.run()
        assert.deepEqual(await box.files(), ['llm-7.md'])
        assert.match(await box.page('llm-7.md'), /<!-- armproof:llm-7:PREFILL_INTERLEAVE:/)
        return outcome(r)
      } finally {
        await box.remove()
      }
    },
  },
  {
    area: 'writeback',
    fault: 'another writeback (a live process) holds the page lock past the wait',
    expected: "refused with the holder's pid, after a bounded wait; the page untouched",
    exit: 2,
    message: 'page lock (',
    async run() {
      const box = await sandbox({ 'llm-7.md': PAGE })
      const holder = liveOtherPid()
      try {
        await writeFile(lockPathOf(join(box.vault, 'llm-7.md')), `${holder} ${hostname().replace(/\s/g, '_') || 'localhost'} ${now()}\n`)
        const r = await box.run([], { lockWaitMs: 300 })
        assert.match(r.err, new RegExp(`locked by pid ${holder}`))
        assert.equal(await box.page('llm-7.md'), PAGE)
        return outcome(r)
      } finally {
        await box.remove()
      }
    },
  },
  {
    area: 'writeback',
    fault: 'a lock left an hour ago by a pid that now names another live process (pid reuse)',
    expected: 'the lock is stale by age (no write holds a page for minutes): broken, and the entry written',
    exit: 0,
    message: 'wrote the PREFILL_INTERLEAVE entry',
    async run() {
      const box = await sandbox({ 'llm-7.md': PAGE })
      const other = liveOtherPid()
      try {
        const page = join(box.vault, 'llm-7.md')
        await writeFile(
          lockPathOf(page),
          `${other} ${hostname().replace(/\s/g, '_') || 'localhost'} ${new Date(Date.now() - 3_600_000).toISOString()}\n`,
        )
        // A temp file of this page whose pid is alive (reused) is garbage too: only the lock holder writes one.
        await writeFile(join(box.vault, `.llm-7.md.armproof-${other}-0badc0de.tmp`), 'half a page')
        const r = await box.run([], { lockWaitMs: 2000 })
        assert.deepEqual(await box.files(), ['llm-7.md'])
        return outcome(r)
      } finally {
        await box.remove()
      }
    },
  },
  {
    area: 'writeback',
    fault: 'a read-only page (mode 0444)',
    expected: 'refused, not replaced',
    exit: 2,
    message: 'is read-only (mode 0444)',
    async run() {
      return inSandbox(
        async (box) => {
          await chmod(join(box.vault, 'llm-7.md'), 0o444)
          const r = await box.run()
          assert.equal(await box.page('llm-7.md'), PAGE)
          assert.equal((await stat(join(box.vault, 'llm-7.md'))).mode & 0o777, 0o444)
          return outcome(r)
        },
        { 'llm-7.md': PAGE },
      )
    },
  },
  {
    area: 'writeback',
    fault: 'a page owned by another user (writeback run as root)',
    expected: "written with the page's owner, group and mode kept (as a user that cannot keep them: refused, nothing replaced)",
    exit: 0,
    message: 'wrote the PREFILL_INTERLEAVE entry',
    async run() {
      return inSandbox(
        async (box) => {
          const page = join(box.vault, 'llm-7.md')
          await chmod(page, 0o664)
          if (process.getuid?.() === 0) await chown(page, 4242, 4343)
          const before = await stat(page)
          const r = await box.run()
          const after = await stat(page)
          if (r.code === 0) assert.deepEqual([after.uid, after.gid, after.mode & 0o7777], [before.uid, before.gid, 0o664])
          return outcome(r)
        },
        { 'llm-7.md': PAGE },
      )
    },
  },
  {
    area: 'writeback',
    fault: 'a page owned by another user, written by a user that cannot give files away',
    expected: 'refused: replacing it would change its owner; nothing replaced, no temp file left',
    exit: 2,
    message: 'the page is owned by uid 4242 gid 4343, and this user',
    async run() {
      return inSandbox(
        async (box) => {
          const page = join(box.vault, 'llm-7.md')
          // The page as another user's (the seam's view of it), and chown refused as for a non-root user.
          const fs = {
            ...nodeFs,
            stat: async (p: string) => (p === page ? { ...(await nodeFs.stat(p)), uid: 4242, gid: 4343 } : nodeFs.stat(p)),
            chown: async () => {
              throw Object.assign(new Error('EPERM: operation not permitted, chown'), { code: 'EPERM' })
            },
          }
          const r = await box.run([], { fs })
          assert.equal(await box.page('llm-7.md'), PAGE)
          assert.deepEqual(await box.files(), ['llm-7.md'])
          return outcome(r)
        },
        { 'llm-7.md': PAGE },
      )
    },
  },
  {
    area: 'writeback',
    fault: 'a page with a second hard link',
    expected: 'refused: replacing it would split the links',
    exit: 2,
    message: 'has 2 hard links',
    async run() {
      return inSandbox(
        async (box) => {
          await link(join(box.vault, 'llm-7.md'), join(box.dir, 'elsewhere.md'))
          const r = await box.run()
          assert.equal(await box.page('llm-7.md'), PAGE)
          return outcome(r)
        },
        { 'llm-7.md': PAGE },
      )
    },
  },
  // 2. The gate re-derives the verdict
  {
    area: 'writeback',
    fault: 'verdict "green", exitCode 0, but a step failed',
    expected: 'refused: the verdict is derived again from the steps',
    exit: 2,
    message: 'steps not held: meter failed',
    run: () => writebackWith({ steps: withVerdict('meter', 'failed') }),
  },
  {
    area: 'writeback',
    fault: 'verdict "green" with no steps',
    expected: 'refused',
    exit: 2,
    message: 'steps: none recorded',
    run: () => writebackWith({ steps: [] }),
  },
  {
    area: 'writeback',
    fault: 'verdict "green" with steps missing',
    expected: 'refused, naming them',
    exit: 2,
    message: 'steps missing: probe.vision, meter',
    run: () => writebackWith({ steps: passedSteps().slice(0, 7) }),
  },
  {
    area: 'writeback',
    fault: 'verdict "green" with a step given twice',
    expected: 'refused',
    exit: 2,
    message: 'steps given twice: meter',
    run: () => writebackWith({ steps: [...passedSteps(), passedSteps()[8]!] }),
  },
  {
    area: 'writeback',
    fault: 'verdict "green" without the steps field',
    expected: 'refused as not an armproof report',
    exit: 2,
    message: 'missing or malformed steps',
    run: () => writebackWith({ steps: undefined }),
  },
  {
    area: 'writeback',
    fault: 'notes carry an unhandled error',
    expected: 'refused',
    exit: 2,
    message: 'notes: 1 error note, first "unhandled error: boom"',
    run: () => writebackWith({ notes: ['unhandled error: boom'] }),
  },
  {
    area: 'writeback',
    fault: 'mode "Replay"',
    expected: 'refused: mode must be exactly live, record or replay',
    exit: 2,
    message: 'mode must be one of "live", "record", "replay", found "Replay"',
    run: () => writebackWith({ mode: 'Replay' }),
  },
  {
    area: 'writeback',
    fault: 'mode "bogus"',
    expected: 'refused',
    exit: 2,
    message: 'found "bogus"',
    run: () => writebackWith({ mode: 'bogus' }),
  },
  {
    area: 'writeback',
    fault: 'the drop-in check skipped without the report marking it intended',
    expected: 'refused',
    exit: 2,
    message: 'dropins skipped (not a skip the operator asked for)',
    run: () => writebackWith({ steps: withVerdict('dropins', 'skipped') }),
  },
  {
    area: 'writeback',
    fault: 'the drop-in check skipped on purpose (--no-dropin-check: the report declares it in run.skips, the step is marked intendedSkip)',
    expected: 'written',
    exit: 0,
    message: 'wrote the PREFILL_INTERLEAVE entry',
    run: () => writebackWith({ steps: withVerdict('dropins', 'skipped', { intendedSkip: true }) }, [], { skips: ['dropins'] }),
  },
  {
    area: 'writeback',
    fault: 'the drop-in step marked intendedSkip, but the report declares no skip (run.skips empty, or a report without run)',
    expected: 'refused: the gate allows the skips the run declares and the knob implies, not what a step says of itself',
    exit: 2,
    message: 'dropins skipped (not a skip this run declared or its knob implies)',
    run: () => writebackWith({ steps: withVerdict('dropins', 'skipped', { intendedSkip: true }) }, [], {}),
  },
  {
    area: 'writeback',
    fault: 'the meter step skipped and marked intendedSkip for PREFILL_INTERLEAVE (a knob with a meter)',
    expected: 'refused: only a knob without a meter implies that skip',
    exit: 2,
    message: 'meter skipped (not a skip this run declared or its knob implies)',
    run: () => writebackWith({ steps: withVerdict('meter', 'skipped', { intendedSkip: true }) }, [], {}),
  },
  {
    area: 'writeback',
    fault: 'the green run of a knob without a meter (CHECKPOINT_SLOTS: its meter step skipped, the ledger is its proof)',
    expected: 'written: the skip is the one its knob implies; the entry says the ledger proved it',
    exit: 0,
    message: 'wrote the CHECKPOINT_SLOTS entry',
    async run() {
      const o = await writebackWith(
        {
          knob: 'CHECKPOINT_SLOTS',
          expected: '16',
          previous: 'auto',
          meter: null,
          rollback: 'CHECKPOINT_SLOTS=auto then redeploy --service llm-7',
          steps: withVerdict('meter', 'skipped', { intendedSkip: true }),
        },
        [],
        {},
      )
      assert.match(o.output, /CHECKPOINT_SLOTS entry/)
      return o
    },
  },
  {
    area: 'writeback',
    fault: "a probe skipped on purpose (the contract's --skip probe.vision: declared in run.skips, the step marked intendedSkip)",
    expected: 'written: exactly the skips the report declares are allowed',
    exit: 0,
    message: 'wrote the PREFILL_INTERLEAVE entry',
    run: () => writebackWith({ steps: withVerdict('probe.vision', 'skipped', { intendedSkip: true }) }, [], { skips: ['probe.vision'] }),
  },
  {
    area: 'writeback',
    fault: 'a report whose run.skips declares a probe its options did not skip (run.skips edited, run.id resealed)',
    expected: "refused: the declared skips follow from the run's options",
    exit: 2,
    message: "its skips is not the run identity's",
    async run() {
      const report = greenReport(now(), { steps: withVerdict('probe.vision', 'skipped', { intendedSkip: true }) }, {}) as {
        run: { skips: string[]; target: Record<string, unknown>; id: string }
      }
      const fields = { mode: 'live', skips: ['probe.vision'], target: report.run.target }
      report.run = { id: runId(fields), ...fields }
      return writebackWith(report as unknown as Record<string, unknown>)
    },
  },
  {
    area: 'writeback',
    fault: 'a probe skipped and marked intendedSkip while the report declares only the drop-in skip',
    expected: 'refused, naming the probe',
    exit: 2,
    message: 'probe.tools skipped (not a skip this run declared or its knob implies)',
    run: () => writebackWith({ steps: withVerdict('probe.tools', 'skipped', { intendedSkip: true }) }, [], { skips: ['dropins'] }),
  },
  {
    area: 'writeback',
    fault: 'a report whose run identity was edited (run.target.value changed, run.id kept)',
    expected: "refused: the id is the digest of the identity's fields",
    exit: 2,
    message: 'its run identity was edited',
    async run() {
      const report = greenReport(now(), {}, {}) as { run: { target: Record<string, unknown> } }
      report.run.target.value = '7'
      return writebackWith(report as unknown as Record<string, unknown>)
    },
  },
  {
    area: 'writeback',
    fault: "a report whose expected value is not its run identity's (expected edited, run resealed for another value)",
    expected: 'refused: the report was edited',
    exit: 2,
    message: "its expected is not the run identity's",
    run: () => writebackWith({ run: greenReport(now(), { expected: '2' }, {}).run }),
  },
  {
    area: 'writeback',
    fault: 'an error field set on a green report',
    expected: 'refused',
    exit: 2,
    message: 'error: "vitest did not start"',
    run: () => writebackWith({ error: 'vitest did not start' }),
  },
  // 4. Replay reports
  {
    area: 'writeback',
    fault: 'a replay report without recordedAt (--allow-replay)',
    expected: 'refused: its age cannot be known',
    exit: 2,
    message: 'a replay report without recordedAt',
    run: () => writebackWith({ mode: 'replay' }, ['--allow-replay']),
  },
  {
    area: 'writeback',
    fault: 'a replay (--allow-replay) of a recording older than --max-age, replayed just now',
    expected: 'refused: --max-age measures from recordedAt, not finishedAt',
    exit: 2,
    message: 'recordedAt (report.json): recorded 2020-01-01T00:00:00.000Z',
    async run() {
      const rec = {
        fixtures: join(ROOT, 'fixtures/demo/PREFILL_INTERLEAVE'),
        digest: '0'.repeat(64),
        recordedAt: '2020-01-01T00:00:00.000Z',
        recordedVerdict: 'green',
      }
      return writebackWith({ mode: 'replay', recordedAt: rec.recordedAt, recording: rec }, ['--allow-replay'])
    },
  },
  {
    area: 'writeback',
    fault: 'a replay report (--allow-replay) whose recording was edited after the replay',
    expected: 'refused: the recording is verified again',
    exit: 2,
    message: 'fixtures edited since recording',
    async run() {
      const replayed = await uneditedReplay()
      assert.equal(replayed.exit, 0, replayed.output)
      const report = replayed.report as Record<string, unknown> & { recording: { fixtures: string; digest: string } }
      // The replayed recording again, byte for byte (its digest says so), then edited after the replay.
      const dir = await recording('demo', () => {}, true)
      try {
        assert.equal(verifyRecording(dir, report.recording.digest), null, 'the copy is not the recording that was replayed')
        const http = JSON.parse(await readFile(join(dir, 'http.json'), 'utf8')) as Exchange[]
        http[0]!.path = '/edited'
        await writeFile(join(dir, 'http.json'), stableJson(http))
        return await writebackWith({ ...report, recording: { ...report.recording, fixtures: dir }, svc: 'llm-7', rollback: 'x' }, [
          '--allow-replay',
          '--max-age',
          '100000h',
        ])
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
    },
  },
  // 5. Nothing forged
  {
    area: 'writeback',
    fault: 'a knob value with a newline and ANSI codes',
    expected: 'refused; the value is shown escaped, on one line',
    exit: 2,
    message: '\\n\\u001b[32m',
    async run() {
      const o = await writebackWith({ expected: `1\n${ESC}[32mGREEN` })
      assert.ok(!o.output.includes(ESC), 'a raw ESC reached the terminal')
      return o
    },
  },
  {
    area: 'writeback',
    fault: 'a page whose file name holds ESC and a newline',
    expected: 'written; the name is shown escaped',
    exit: 0,
    message: 'llm\\x1b[2J\\x0a-7.md',
    async run() {
      return inSandbox(
        async (box) => {
          const r = await box.run()
          assert.ok(!`${r.out}${r.err}`.includes(ESC))
          assert.equal(`${r.out}${r.err}`.trimEnd().split('\n').length, 1)
          return outcome(r)
        },
        { [`llm${ESC}[2J\n-7.md`]: PAGE },
      )
    },
  },
  {
    area: 'writeback',
    fault: 'meter label values carrying a Markdown link, an image, a wiki link, HTML, a bidi override and a forged entry marker',
    expected: 'written as data: in a code span, escaped; the forged marker cannot make a later report "already there"',
    exit: 0,
    message: 'wrote the PREFILL_INTERLEAVE entry',
    async run() {
      const later = new Date(Date.now() - 1000).toISOString()
      const forged = `<!-- armproof:llm-7:PREFILL_INTERLEAVE:${later} -->`
      const evil = `[x](javascript:alert(1)) ![](http://t.example/p.png) [[Secrets]] <img src=x> \u202Eevil ${forged}`
      return inSandbox(
        async (box) => {
          const r = await box.run()
          const page = await box.page('llm-7.md')
          assert.ok(!page.includes('\u202E') && !page.includes('<img') && !page.includes(forged))
          await writeFile(box.reportPath, JSON.stringify(greenReport(later)))
          const second = await box.run()
          assert.match(second.out, /wrote the/, 'the forged marker made the later report look already written')
          return outcome(r)
        },
        { 'llm-7.md': PAGE },
        greenReport(new Date(Date.now() - 5000).toISOString(), {
          meter: { name: 'radiance:engine_steps_held_total', first: 0, last: 3, movedAt: null, movedAfterMs: 5, labels: { engine: evil } },
        }),
      )
    },
  },
  // 6. Malformed reports, pages
  {
    area: 'writeback',
    fault: 'a report starting with a UTF-8 BOM',
    expected: 'accepted',
    exit: 0,
    message: 'wrote the PREFILL_INTERLEAVE entry',
    run: () => writebackWith(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(greenReport(now())))])),
  },
  {
    area: 'writeback',
    fault: 'a truncated report',
    expected: 'refused, one line',
    exit: 2,
    message: 'is not JSON (it ends early: a truncated file?)',
    run: () => writebackWith(JSON.stringify(greenReport(now())).slice(0, 200)),
  },
  {
    area: 'writeback',
    fault: '--report is a FIFO with no writer',
    expected: 'refused at once, without hanging',
    exit: 2,
    message: 'is not a regular file (a FIFO)',
    async run() {
      return inSandbox(
        async (box) => {
          await rm(box.reportPath)
          const { execa } = await import('execa')
          await execa('mkfifo', [box.reportPath])
          return outcome(await box.run())
        },
        { 'llm-7.md': PAGE },
      )
    },
  },
  {
    area: 'writeback',
    fault: 'the last Knob log item has a continuation paragraph after a blank line',
    expected: 'the entry goes after the paragraph, never between the item and its paragraph',
    exit: 0,
    message: 'wrote the',
    async run() {
      const item =
        '- 2026-10-02 · old entry\n  rollback: `X=` then redeploy `--service llm-7`\n\n  Rolled back the next day: see the incident.\n'
      const page = `# llm-7\n\n## Knob log\n\n${item}\n## Contacts\n`
      return inSandbox(
        async (box) => {
          const r = await box.run()
          const after = await box.page('llm-7.md')
          assert.ok(after.indexOf('see the incident.') < after.indexOf('<!-- armproof:llm-7'), 'the entry was inserted inside the item')
          assert.ok(after.startsWith(`# llm-7\n\n## Knob log\n\n${item}- `))
          return outcome(r)
        },
        { 'llm-7.md': page },
      )
    },
  },
  {
    area: 'writeback',
    fault: 'a code fence that never closes, before where the entry would go',
    expected: 'refused with the line number: the appended heading and entry would render as code',
    exit: 2,
    message: 'page shape (vault/llm-7.md:3): has a code fence opened at line 3 that never closes',
    run: async () => {
      return inSandbox(
        async (box) => {
          return outcome(await box.run())
        },
        { 'llm-7.md': '# llm-7\n\n```sh\nsystemctl restart llm-7\n' },
      )
    },
  },
  // 3, 4, 6. Replay
  {
    area: 'replay',
    fault: 'run.json target.svc edited to another service (digests resealed)',
    expected: 'refused before replaying: the recording disagrees with itself',
    exit: 2,
    message: 'disagrees with itself: svc is "demo" but target.svc is "llm-7"',
    run: async () =>
      refusedReplay(
        await recording(
          'demo',
          (f) => {
            ;(f.run.target as { svc: string }).svc = 'llm-7'
          },
          true,
        ),
      ),
  },
  {
    area: 'replay',
    fault: 'run.json target.value edited (digests resealed)',
    expected: "refused: the value judged is the command line's, checked against the recording",
    exit: 2,
    message: 'value is "1" but target.value is "2"',
    run: async () =>
      refusedReplay(
        await recording(
          'demo',
          (f) => {
            ;(f.run.target as { value: string }).value = '2'
          },
          true,
        ),
      ),
  },
  {
    area: 'replay',
    fault: '--previous on the command line differs from the recording',
    expected: 'refused',
    exit: 2,
    message: 'was recorded for --previous 0, not 2',
    run: async () => refusedReplay(await recording('demo', () => {}, true), [...DEMO_ARM, '--previous', '2']),
  },
  {
    area: 'replay',
    fault: 'a recorded body edited (digests not resealed)',
    expected: 'refused: fixtures edited since recording',
    exit: 2,
    message: 'fixtures edited since recording',
    run: async () =>
      refusedReplay(
        await recording(
          'demo',
          (f) => {
            const e = (f.http as Exchange[]).find((x) => x.path === '/metrics')
            e!.response!.body = e!.response!.body.replace(/engine_steps_held_total(\{[^}]*\})? \d+/g, 'engine_steps_held_total$1 999')
          },
          false,
        ),
      ),
  },
  {
    area: 'replay',
    fault: 'run.json without digests (an older or hand-made recording)',
    expected: 'refused: its files cannot be checked',
    exit: 2,
    message: 'field digests is missing',
    run: async () =>
      refusedReplay(
        await recording(
          'demo',
          (f) => {
            delete f.run.digests
          },
          false,
        ),
      ),
  },
  {
    area: 'replay',
    fault: 'the recorded verdict edited to red (digests resealed) while the exchanges say green',
    expected: 'both verdicts reported; not green',
    exit: 3,
    message: 'replay: verdict green differs from the recorded verdict red (steps: meter failed → passed)',
    run: async () =>
      replay(
        await recording(
          'demo',
          (f) => {
            f.run.verdict = 'red'
            f.run.steps = { ...f.run.steps, meter: 'failed' }
          },
          true,
        ),
      ),
  },
  {
    area: 'replay',
    fault: 'a recorded exchange the replay never asks for (digests resealed)',
    expected: 'the replay fails, naming it',
    exit: 3,
    message: 'unused (http.json #999 GET /extra)',
    run: async () =>
      replay(
        await recording(
          'demo',
          (f) => {
            ;(f.http as Exchange[]).push({ ...(f.http as Exchange[])[0]!, seq: 999, path: '/extra' })
          },
          true,
        ),
      ),
  },
  {
    area: 'replay',
    fault: 'an exchange missing from http.json (digests resealed)',
    expected:
      'inconclusive (a step was judged, so never exit 2): one line naming the file and the request, and the re-record command; no stack trace',
    exit: 3,
    message: 'the recording does not hold this run: No recorded response for GET /health',
    run: async () =>
      replay(
        await recording(
          'demo',
          (f) => {
            f.http = (f.http as Exchange[]).filter((x) => x.path !== '/health')
          },
          true,
        ),
      ),
  },
  {
    area: 'replay',
    fault: 'run.json target.host a string',
    expected: 'one line naming the file and field, exit 2',
    exit: 2,
    message: 'run.json: field target.host must be an object with kind local or ssh or pod, found "local"',
    run: async () =>
      refusedReplay(
        await recording(
          'demo',
          (f) => {
            ;(f.run.target as unknown as { host: string }).host = 'local'
          },
          true,
        ),
      ),
  },
  {
    area: 'replay',
    fault: 'http.json is {}',
    expected: 'one line naming the file, exit 2',
    exit: 2,
    message: 'http.json: field (the whole file) must be a list, found an object',
    run: async () =>
      refusedReplay(
        await recording(
          'demo',
          (f) => {
            f.http = {} as unknown as unknown[]
          },
          false,
        ),
      ),
  },
  {
    area: 'replay',
    fault: 'a truncated host.json',
    expected: 'one line naming the file, exit 2',
    exit: 2,
    message: 'host.json is not valid JSON (it ends early: truncated?)',
    run: async () => {
      const dir = await recording('demo', () => {}, true)
      await writeFile(join(dir, 'host.json'), (await readFile(join(dir, 'host.json'), 'utf8')).slice(0, 100))
      return refusedReplay(dir)
    },
  },
  {
    area: 'replay',
    fault: 'an unedited recording',
    expected: "green, with recordedAt and the recording's digest in the report; writeback --allow-replay accepts it",
    exit: 0,
    message: 'GREEN',
    run: async () => {
      const r = await uneditedReplay()
      const report = r.report as { recordedAt?: string; recording?: { digest: string; recordedVerdict: string } }
      assert.match(report.recordedAt ?? '', /^\d{4}-/)
      assert.equal(report.recording?.recordedVerdict, 'green')
      return r
    },
  },
]

/** Every row: the table of issue 11, then the page, merge-reports, record and output rows of issue 21. */
export const WRITEBACK_FAULTS: readonly FaultRow[] = [
  ...FAULTS_OF_ISSUE_11.filter((r) => r.area === 'writeback'),
  ...PAGE_FAULTS,
  ...FAULTS_OF_ISSUE_11.filter((r) => r.area === 'replay'),
  ...MERGE_FAULTS,
  ...RECORD_FAULTS,
  ...OUTPUT_FAULTS,
]
