// The host reads of a target taken ahead (helpers/seams/read-ahead.ts): the planned reads run in
// one call when the first is asked, or earlier (right after first contact), and each step is
// answered its own part; what was not planned, or is asked again, runs alone; reads started too
// long before the steps are not used; a recording keeps each read apart.
import { afterEach, describe, expect, test, vi } from 'vitest'
import type { Gather, HostClient, HostResult, HostRun } from '../../helpers/seams/host-result.ts'
import { AHEAD_MAX_AGE_MS, readAhead, startReadsAhead, type Ahead } from '../../helpers/seams/read-ahead.ts'
import { recordingSeams } from '../../helpers/seams/record.ts'
import { realClock } from '../../helpers/seams/clock.ts'
import type { HttpClient } from '../../helpers/seams/http.ts'
import { plannedReads } from '../../helpers/steps/host-reads.ts'
import { loadConfig } from '../../helpers/config/load.ts'
import { useSharedReads } from '../../helpers/seams/host-gather.ts'

afterEach(() => vi.useRealTimers())

/** A client that answers every script with its own text, and counts its calls. */
function fake() {
  const calls: Array<{ kind: 'run' | 'runAll' | 'gather'; scripts: string[] }> = []
  const answer = (req: HostRun): HostResult => ({
    command: req.script,
    stdout: `out of ${req.script}`,
    stderr: '',
    exitCode: 0,
    durationMs: 1,
  })
  const client: HostClient = {
    where: 'local',
    async run(req) {
      calls.push({ kind: 'run', scripts: [req.script] })
      return answer(req)
    },
    async runAll(reqs) {
      calls.push({ kind: 'runAll', scripts: reqs.map((r) => r.script) })
      return reqs.map(answer)
    },
    async gather<K>(g: Gather<K>, key: K) {
      calls.push({ kind: 'gather', scripts: [g.script([key])] })
      return { command: 'shared', stdout: `part of ${g.keyOf(key)}`, stderr: '', exitCode: 0, durationMs: 1 }
    },
  }
  return { client, calls }
}

const read = (script: string): HostRun => ({ script, timeoutMs: 1000 })
const AHEAD: Ahead = { reads: [read('help'), read('survey'), read('ledger')], gathers: [] }

describe('reads ahead', () => {
  test('the planned reads run in one call when the first is asked; each step gets its own part', async () => {
    const { client, calls } = fake()
    const host = readAhead(client, AHEAD, 'h')
    expect((await host.run(read('help'))).stdout).toBe('out of help')
    expect((await host.run(read('ledger'))).stdout).toBe('out of ledger')
    expect((await host.run(read('survey'))).stdout).toBe('out of survey')
    expect(calls).toEqual([{ kind: 'runAll', scripts: ['help', 'survey', 'ledger'] }])
  })

  test('a read not planned, or asked a second time, or planned with other options runs alone', async () => {
    const { client, calls } = fake()
    const host = readAhead(client, AHEAD, 'h')
    await host.run(read('help'))
    await host.run(read('help'))
    await host.run(read('config'))
    await host.run({ ...read('ledger'), privileged: true })
    expect(calls.map((c) => c.kind)).toEqual(['runAll', 'run', 'run', 'run'])
  })

  test('started right after first contact, they are taken by the run that opens later; too old, they are read anew', async () => {
    const { client, calls } = fake()
    startReadsAhead('h-early', client, AHEAD)
    const host = readAhead(client, AHEAD, 'h-early')
    await host.run(read('survey'))
    expect(calls).toEqual([{ kind: 'runAll', scripts: ['help', 'survey', 'ledger'] }])
    vi.useFakeTimers({ toFake: ['Date'] })
    startReadsAhead('h-old', client, AHEAD)
    vi.setSystemTime(Date.now() + AHEAD_MAX_AGE_MS + 1)
    const later = readAhead(client, AHEAD, 'h-old')
    await later.run(read('help'))
    expect(calls.map((c) => c.kind)).toEqual(['runAll', 'runAll', 'runAll'])
  })

  test("dropped when their run ends untaken (refused at first contact): a later run of the same target reads its own, never the earlier engine's", async () => {
    const { client } = fake()
    let engine = 'engine A'
    const answering: HostClient = {
      ...client,
      runAll: async (reqs) =>
        reqs.map((r) => ({ command: r.script, stdout: `${engine}: ${r.script}`, stderr: '', exitCode: 0, durationMs: 1 })),
    }
    const drop = startReadsAhead('h-dropped', answering, AHEAD)
    drop()
    engine = 'engine B'
    const later = readAhead(answering, AHEAD, 'h-dropped')
    expect((await later.run(read('ledger'))).stdout).toBe('engine B: ledger')
    // Dropping after the reads were taken leaves the next run's own in place.
    const taken = startReadsAhead('h-taken', answering, AHEAD)
    const next = startReadsAhead('h-taken', answering, AHEAD)
    taken()
    engine = 'engine C'
    expect((await readAhead(answering, AHEAD, 'h-taken').run(read('help'))).stdout).toBe('engine B: help')
    next()
  })

  test('a shared read planned ahead (the survey in a live fleet) is asked once, ahead, and answered to its step', async () => {
    const { client, calls } = fake()
    const g: Gather<string> = { kind: 'k', keyOf: (k) => k, script: (keys) => keys.join(','), view: (r) => r }
    const host = readAhead(
      client,
      { reads: [read('help'), read('ledger')], gathers: [{ g: g as Gather<unknown>, key: 'me', timeoutMs: 1000 }] },
      'h-g',
    )
    await host.run(read('help'))
    expect((await host.gather!(g, 'me', 1000)).stdout).toBe('part of me')
    expect(calls.map((c) => c.kind)).toEqual(['runAll', 'gather'])
  })

  test('under the recording, each read is kept apart in the order the steps asked', async () => {
    const { client } = fake()
    const http = {} as HttpClient
    const rec = recordingSeams({ http, host: readAhead(client, AHEAD, 'h-rec'), clock: realClock }, null)
    await rec.host.run(read('ledger'))
    await rec.host.run(read('help'))
    expect(rec.recording.host.map((e) => [e.command, e.stdout])).toEqual([
      ['ledger', 'out of ledger'],
      ['help', 'out of help'],
    ])
  })

  test("a target's plan: drop-ins when checked, --help, the survey (shared in a live fleet); never the ledger (read once loading has ended)", () => {
    const config = loadConfig({
      argv: ['--svc', 'llm-7', '--knob', 'PREFILL_INTERLEAVE', '--base-url', 'http://127.0.0.1:8000'],
      env: { VERIFY_NO_DOTENV: '1' },
    })
    if (!config.ok) throw new Error('config')
    const own = plannedReads(config.target)
    expect(own.reads.map((r) => r.script.split(/\s/)[0])).toEqual(['systemctl', '{', 'echo'])
    expect(own.reads.some((r) => r.script.includes('podman logs'))).toBe(false)
    expect(own.gathers).toEqual([])
    useSharedReads(true)
    try {
      const shared = plannedReads({ ...config.target, dropinCheck: false })
      expect(shared.reads).toHaveLength(1)
      expect(shared.gathers.map((x) => x.key)).toEqual([{ process: 'radiance', port: 8000 }])
    } finally {
      useSharedReads(false)
    }
  })
  test("a pod's plan: no drop-ins (no unit), --help, the pod, the survey in the pod (never shared), each through kubectl; never the ledger", () => {
    const config = loadConfig({
      argv: [
        '--svc',
        'llm-7',
        '--knob',
        'PREFILL_INTERLEAVE',
        '--base-url',
        'http://127.0.0.1:8000',
        '--runtime',
        'kubernetes',
        '--host',
        'llm/llm-7-0',
      ],
      env: { VERIFY_NO_DOTENV: '1' },
    })
    if (!config.ok) throw new Error('config')
    for (const on of [false, true]) {
      useSharedReads(on)
      try {
        const plan = plannedReads(config.target)
        expect(plan.gathers).toEqual([])
        const scripts = plan.reads.map((r) => r.script)
        expect(scripts).toHaveLength(3)
        expect(scripts[0]).toContain('kubectl exec --namespace=llm llm-7-0 -- radiance --help')
        expect(scripts[1]).toBe('kubectl get pod --namespace=llm llm-7-0 -o json')
        expect(scripts[2]!.startsWith("kubectl exec --namespace=llm llm-7-0 -- sh -c '")).toBe(true)
        expect(scripts.some((x) => x.includes('kubectl logs'))).toBe(false)
        // kubectl reads the deploy user's kubeconfig, never root's.
        expect(plan.reads.every((r) => r.asDeployUser === true && r.privileged !== true)).toBe(true)
      } finally {
        useSharedReads(false)
      }
    }
  })
})
