// The engine survey shared by the targets of one host (helpers/engine/survey-many.ts, gathered by
// helpers/seams/host-gather.ts): on this machine, each target's part of one shared survey reads
// as its own survey does (the same listeners, holders, pidof and processes), for engines of one
// name on their own ports, a fleet in one process, another name, no port and a port nobody serves;
// and the gathering: reads asked together are one, a read under way is never joined, each
// client's share key keeps its own reads, a failure reaches everyone who asked.
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startEngine, type EngineHandle } from '../../engine/launch.ts'
import { freePort } from '../../engine/proc.ts'
import { surveyRead, findEngine, readSurvey, type EngineQuery } from '../../helpers/engine/find.ts'
import { parseSurvey, surveyOf } from '../../helpers/engine/survey.ts'
import { SURVEYS, manySurveyScript, surveyView, type SurveyKey } from '../../helpers/engine/survey-many.ts'
import { gatherRead, useSharedReads } from '../../helpers/seams/host-gather.ts'
import type { Gather, HostResult, HostRun } from '../../helpers/seams/host-result.ts'
import { createHost } from '../../helpers/seams/host.ts'

const RUN = process.pid % 100_000
const NAME = `rmany-${RUN}`
let fleet: EngineHandle
let lone: EngineHandle
let other: EngineHandle

beforeAll(async () => {
  ;[fleet, lone, other] = await Promise.all([
    startEngine({ svc: 'many', processName: NAME, args: ['--prefill-interleave', '1', '--load-closed-ms', '0'], fleet: 3 }),
    startEngine({ svc: 'many-lone', processName: NAME, args: ['--load-closed-ms', '0'] }),
    startEngine({ svc: 'many-other', processName: `rother-${RUN}`, args: ['--load-closed-ms', '0'] }),
  ])
  await Promise.all([fleet.waitReady(), lone.waitReady(), other.waitReady()])
})
afterAll(async () => {
  await Promise.all([fleet?.stop(), lone?.stop(), other?.stop()])
})

const host = () => createHost({ host: { kind: 'local' }, sshOpts: [], deployUser: null, sudo: 'never' })
const query = (key: SurveyKey): EngineQuery => ({
  ...key,
  svc: 'many',
  unit: 'many',
  urlHost: '127.0.0.1',
  pidCmd: null,
  host: { kind: 'local' },
  timeoutMs: 10_000,
})

describe('one survey for many targets of a host', () => {
  test("each target's part parses as its own survey, read at the same moment", async () => {
    const nobody = await freePort()
    const keys: SurveyKey[] = [
      ...fleet.members!.map((m) => ({ process: NAME, port: m.port })),
      { process: NAME, port: lone.port },
      { process: NAME, port: null },
      { process: `rother-${RUN}`, port: other.port },
      { process: `rother-${RUN}`, port: fleet.members![0]!.port },
      { process: `rnone-${RUN}`, port: nobody },
    ]
    const h = host()
    const many = await h.run({ script: manySurveyScript(keys), privileged: true, timeoutMs: 10_000 })
    expect(many.failure, many.stderr).toBeUndefined()
    for (const key of keys) {
      const own = await h.run(surveyRead(query(key)))
      const part = surveyView(many.stdout, keys, key)
      expect(part.unreadable).toEqual([])
      expect(parseSurvey(part.stdout), JSON.stringify(key)).toEqual(parseSurvey(own.stdout))
      // The part as read already (the lookup reads it so, never from the text) is the same survey.
      expect(part.survey, JSON.stringify(key)).toEqual(parseSurvey(own.stdout))
      const viewed = SURVEYS.view(many, keys, key)
      expect(surveyOf(viewed)).toEqual(parseSurvey(viewed.stdout))
    }
    // And the lookups themselves agree: the fleet's members are one process, each port its listener.
    const found = await findEngine(h, query(keys[1]!))
    expect(found).toMatchObject({ kind: 'found', pid: String(fleet.pids[0]), foundBy: 'listener' })
  })

  test("a key asked twice is one; a target's view never holds another name's processes", () => {
    const keys: SurveyKey[] = [
      { process: 'a', port: 1 },
      { process: 'b', port: 2 },
    ]
    const script = manySurveyScript([...keys, keys[0]!])
    expect(script.match(/pidof a;/g)).toHaveLength(1)
    const out = [
      '@@armproof btime\n1\n',
      '@@armproof clk_tck\n100\n',
      '@@armproof listen\n',
      '@@armproof owners\n',
      '@@armproof pidof 0\n10\n',
      '@@armproof pidof 1\n20\n',
      '@@armproof stat 10\n10 (a) S 1\n',
      '@@armproof cmdline 10\na\0\n',
      '@@armproof stat 20\n20 (b) S 1\n',
      '@@armproof cmdline 20\nb\0\n',
    ].join('')
    expect(surveyView(out, keys, keys[0]!).stdout).not.toContain('cmdline 20')
    expect(parseSurvey(surveyView(out, keys, keys[1]!).stdout).named).toEqual(['20'])
  })
})

/** A client that counts its reads; each answers after `ms`. */
function counting(ms = 20, result: Partial<HostResult> = {}) {
  const runs: HostRun[] = []
  return {
    runs,
    run: async (req: HostRun): Promise<HostResult> => {
      runs.push(req)
      await new Promise((r) => setTimeout(r, ms))
      return { command: req.script, stdout: req.script, stderr: '', exitCode: 0, durationMs: ms, ...result }
    },
  }
}

const ECHO: Gather<string> = {
  kind: 'echo',
  keyOf: (k) => k,
  script: (keys) => keys.join(','),
  view: (r, _keys, key) => ({ ...r, stdout: `${key} of ${r.stdout}` }),
}

describe('gathering', () => {
  test('reads asked together are one call; each asker gets its own part', async () => {
    const c = counting()
    const parts = await Promise.all(['x', 'y', 'x'].map((k) => gatherRead('h1', c.run, ECHO, k, 1000)))
    expect(c.runs.map((r) => r.script)).toEqual(['x,y'])
    expect(parts.map((p) => p.stdout)).toEqual(['x of x,y', 'y of x,y', 'x of x,y'])
  })

  test('a read under way is never joined: who asks meanwhile gets the next one, started when it ends', async () => {
    const c = counting(60)
    const first = gatherRead('h2', c.run, ECHO, 'a', 1000)
    await new Promise((r) => setTimeout(r, 20))
    const later = await Promise.all([gatherRead('h2', c.run, ECHO, 'b', 1000), gatherRead('h2', c.run, ECHO, 'c', 1000)])
    await first
    expect(c.runs.map((r) => r.script)).toEqual(['a', 'b,c'])
    expect(later.map((p) => p.stdout)).toEqual(['b of b,c', 'c of b,c'])
  })

  test('other share keys (another host, user or access) are gathered apart; a failure reaches every asker', async () => {
    const c = counting(10, { failure: 'unreachable', exitCode: 255 })
    const [p, q] = await Promise.all([gatherRead('h3', c.run, ECHO, 'a', 1000), gatherRead('h4', c.run, ECHO, 'a', 1000)])
    expect(c.runs).toHaveLength(2)
    expect(
      SURVEYS.view({ command: 'x', stdout: '', stderr: 'refused', exitCode: 255, failure: 'unreachable', durationMs: 1 }, [], {
        process: 'a',
        port: 1,
      }).failure,
    ).toBe('unreachable')
    expect([p.failure, q.failure]).toEqual(['unreachable', 'unreachable'])
  })

  test('the lookup shares its survey only where reads are shared; a live client then gathers', async () => {
    const key = { process: NAME, port: lone.port }
    const h = host()
    const alone = await readSurvey(h, query(key))
    expect(alone.command).toBe(surveyRead(query(key)).script)
    useSharedReads(true)
    try {
      const [a, b] = await Promise.all([
        readSurvey(h, query(key)),
        readSurvey(host(), query({ process: NAME, port: fleet.members![2]!.port })),
      ])
      expect(a.command).toBe(b.command)
      expect(a.command).toContain('F0=$( { pidof ')
      expect(parseSurvey(a.stdout).listeners.map((l) => l.port)).toContain(lone.port)
    } finally {
      useSharedReads(false)
    }
  })
})
