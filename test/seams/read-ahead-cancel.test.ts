// Reads started ahead (helpers/seams/read-ahead.ts) that a run drops untaken are cancelled, through
// a real sh: a batch still running is ended with its whole process group and does nothing after
// the drop, here and through the spawner (helpers/seams/spawner.ts); one still waiting for a host
// session never starts; reads the steps took, and reads that already ended, are left as they are.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, test, vi } from 'vitest'
import { LARGE_RSS, useSpawner } from '../../helpers/seams/executor.ts'
import { createHost, quote, type HostClient, type HostResult, type HostRun } from '../../helpers/seams/host.ts'
import { hostSessions, LOCAL_SESSIONS } from '../../helpers/seams/host-sessions.ts'
import { AHEAD_MAX_AGE_MS, readAhead, startReadsAhead, type Ahead } from '../../helpers/seams/read-ahead.ts'
import { groupLive } from '../support/run-verify.ts'
import { tempDir } from '../support/temp-dir.ts'

const dir = tempDir('armproof-cancel-')
afterEach(() => {
  vi.useRealTimers()
  vi.restoreAllMocks()
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const read = (script: string): HostRun => ({ script, timeoutMs: 10_000 })
/** Each test its own `where`: nothing one leaves started is taken by another. */
const where = (name: string) => `cancel-${name}-${process.pid}`

/** The local host client, with every runAll it is asked kept (the batch started ahead). */
function watched(): { host: HostClient; batches: Array<Promise<HostResult[]>> } {
  const host = createHost({ host: { kind: 'local' }, sshOpts: [], deployUser: null })
  const batches: Array<Promise<HostResult[]>> = []
  return {
    host: {
      ...host,
      runAll(reqs, signal) {
        const p = host.runAll!(reqs, signal)
        batches.push(p)
        return p
      },
    },
    batches,
  }
}

/** A batch whose first part writes its group (the batch's shell) and that shell's parent, sleeps, then leaves `after`. */
function sleeper(name: string): { ahead: Ahead; pidFile: string; after: string } {
  const pidFile = join(dir, `${name}.pid`)
  const after = join(dir, `${name}.after`)
  const first = read(`echo "$$ $PPID" > ${quote(pidFile)}; sleep 4; : > ${quote(after)}`)
  return { ahead: { reads: [first, read(`: > ${quote(after)}.second`)], gathers: [] }, pidFile, after }
}

/** Starts `name`'s sleeper ahead, waits until it runs, drops it: its group is gone well before its sleep would end, and it leaves nothing after. */
async function dropWhileRunning(name: string): Promise<{ parent: number }> {
  const { host, batches } = watched()
  const { ahead, pidFile, after } = sleeper(name)
  const drop = startReadsAhead(where(name), host, ahead)
  await vi.waitFor(() => expect(existsSync(pidFile) && readFileSync(pidFile, 'utf8')).toMatch(/^\d+ \d+\n$/), { timeout: 10_000 })
  const [group, parent] = readFileSync(pidFile, 'utf8').trim().split(' ').map(Number) as [number, number]
  expect(await groupLive(group)).not.toEqual([])
  drop()
  // Gone, zombies aside (where PID 1 never reaps orphans, as on some VM inits, a killed group's orphans stay zombies).
  await vi.waitFor(async () => expect(await groupLive(group), `process group ${group} after the drop`).toEqual([]), {
    // Well within the sleeper's 4 s (a bound on a kill that never comes, not on speed: a loaded machine's ps is slow).
    timeout: 3000,
    interval: 20,
  })
  // The promise settles, each part marked cancelled (nobody reads it: no rejection either).
  expect((await batches[0]!).map((r) => r.failure)).toEqual(['cancelled', 'cancelled'])
  await sleep(4300)
  expect([existsSync(after), existsSync(`${after}.second`)]).toEqual([false, false])
  return { parent }
}

describe('dropped reads ahead are cancelled', () => {
  test('a batch still running is ended with its whole process group, and does nothing after the drop', async () => {
    // Started here, or from the spawner when this worker is large (helpers/seams/executor.ts, LARGE_RSS).
    const small = process.memoryUsage.rss() < LARGE_RSS
    const { parent } = await dropWhileRunning('running')
    // (A worker that grew past the size meanwhile may have started it either way.)
    if (small === process.memoryUsage.rss() < LARGE_RSS) expect(parent === process.pid).toBe(small)
  })

  test('through the spawner (a fleet run): the same, in the spawner, by a cancel message', async () => {
    useSpawner(true)
    try {
      const { parent } = await dropWhileRunning('spawned')
      // The batch's shell was the spawner's child, not this process's.
      expect(parent).not.toBe(process.pid)
    } finally {
      useSpawner(false)
    }
  })

  test('a batch still waiting for a host session never starts, and leaves the queue', async () => {
    const gate = hostSessions('local')
    const held = await Promise.all(Array.from({ length: LOCAL_SESSIONS - gate.inUse() }, () => gate.acquire()))
    const { host, batches } = watched()
    const after = join(dir, 'queued.after')
    const drop = startReadsAhead(where('queued'), host, { reads: [read(`: > ${quote(after)}`), read('echo two')], gathers: [] })
    try {
      await vi.waitFor(() => expect(gate.waiting()).toBe(1))
      drop()
      expect(gate.waiting()).toBe(0)
    } finally {
      for (const release of held) release()
    }
    expect((await batches[0]!).map((r) => r.failure)).toEqual(['cancelled', 'cancelled'])
    await sleep(300)
    expect(existsSync(after)).toBe(false)
    expect(gate.inUse()).toBe(0)
  })

  test('reads the steps took before the drop are theirs: the drop leaves them running to their end', async () => {
    const { host, batches } = watched()
    const ahead: Ahead = { reads: [read('sleep 0.3; echo one'), read('echo two')], gathers: [] }
    const drop = startReadsAhead(where('taken'), host, ahead)
    const steps = readAhead(host, ahead, where('taken'))
    drop()
    const one = await steps.run(read('sleep 0.3; echo one'))
    expect([one.stdout, one.exitCode, one.failure]).toEqual(['one\n', 0, undefined])
    expect((await steps.run(read('echo two'))).stdout).toBe('two\n')
    // The steps were answered by the batch started ahead, not by one of their own.
    expect(batches).toHaveLength(1)
  })

  test('a drop after the batch ended changes nothing: its results stand, and no signal is sent to its group', async () => {
    const { host, batches } = watched()
    const drop = startReadsAhead(where('ended'), host, { reads: [read('echo one'), read('echo two')], gathers: [] })
    const results = await batches[0]!
    const before = structuredClone(results)
    const kill = vi.spyOn(process, 'kill')
    drop()
    await sleep(50)
    expect(kill).not.toHaveBeenCalled()
    expect(results).toEqual(before)
    expect(results.map((r) => [r.stdout, r.failure])).toEqual([
      ['one\n', undefined],
      ['two\n', undefined],
    ])
  })

  test('reads started too long before the steps are cancelled when the steps find them so, and read anew', async () => {
    const signals: AbortSignal[] = []
    const answer = (r: HostRun): HostResult => ({ command: r.script, stdout: 'fresh', stderr: '', exitCode: 0, durationMs: 1 })
    const host: HostClient = {
      where: 'local',
      run: async (r) => answer(r),
      runAll(_reqs, signal) {
        signals.push(signal!)
        return new Promise(() => {}) // never ends on its own
      },
    }
    const ahead: Ahead = { reads: [read('a'), read('b')], gathers: [] }
    vi.useFakeTimers({ toFake: ['Date'] })
    startReadsAhead(where('old'), host, ahead)
    vi.setSystemTime(Date.now() + AHEAD_MAX_AGE_MS + 1)
    const steps = readAhead({ ...host, runAll: async (reqs) => reqs.map(answer) }, ahead, where('old'))
    expect(signals.map((s) => s.aborted)).toEqual([true])
    expect((await steps.run(read('a'))).stdout).toBe('fresh')
  })
})
