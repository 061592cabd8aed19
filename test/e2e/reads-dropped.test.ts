// A run refused at first contact (the fault matrix's "api key missing") leaves no host program
// running once verify() returns: neither the steps' host reads it started ahead, beside first
// contact (helpers/cli/verify.ts, helpers/seams/read-ahead.ts), nor first contact's own host side
// (helpers/steps/first-contact/contact.ts: the survey for a port nothing serves); each is cancelled
// with its process group. In a fleet (helpers/cli/fleet.ts, host programs started from the
// spawner) a refused target's reads are cancelled as soon as first contact is over, while the
// other targets' run on for their steps. Seen through host commands wrapped in one that notes when
// it starts (and its session: the program's process group) and sleeps before doing its work; the
// refused endpoint answers only once they have started, so the refusal comes while they run.
import { execFileSync } from 'node:child_process'
import { once } from 'node:events'
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { connect, createServer, type Socket } from 'node:net'
import { join } from 'node:path'
import { afterAll, describe, expect, test, vi } from 'vitest'
import { startEngine, type EngineHandle } from '../../engine/launch.ts'
import { shQuote } from '../../engine/shims.ts'
import { engineEntry, writeTargets } from '../support/fleet.ts'
import { engineArgs, groupLive } from '../support/run-verify.ts'
import { verifyInProcess } from '../support/verify-in-process.ts'
import { tempDir } from '../support/temp-dir.ts'

const dir = tempDir('armproof-reads-dropped-')
/** How long a wrapped command sleeps before its work: past the moment each test looks. */
const SLEEP_S = 4
const KEY = 'sk-armproof-test-9f8e7d6c'
const engines: EngineHandle[] = []
const gates: Array<ReturnType<typeof createServer>> = []
const sockets = new Set<Socket>()
afterAll(async () => {
  for (const s of sockets) s.destroy()
  for (const g of gates) g.close()
  await Promise.all(engines.map((e) => e.stop()))
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * `slow LABEL CMD…` of one test (its own log): notes its start (pid, session, label), sleeps,
 * notes its end, then runs CMD; and what its log says.
 */
function slowCommands(name: string) {
  const log = join(dir, `${name}.log`)
  const slow = join(dir, `${name}-slow`)
  writeFileSync(
    slow,
    `#!/bin/sh
echo "start $$ $(ps -o sid= -p $$ | tr -d ' ') $1" >> ${shQuote(log)}
shift
sleep ${SLEEP_S}
echo "end $$" >> ${shQuote(log)}
exec "$@"
`,
  )
  chmodSync(slow, 0o755)
  const lines = (): string[] => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [])
  return {
    slow,
    lines,
    started: (label: string): boolean => lines().some((l) => l.startsWith('start ') && l.endsWith(` ${label}`)),
    /** The sessions (each its program's process group) of the commands that started, of `label` or all. */
    sessions: (label?: string): number[] =>
      [
        ...new Set(
          lines().flatMap((l) => (label === undefined || l.endsWith(` ${label}`) ? (/^start \d+ (\d+) /.exec(l)?.[1] ?? []) : [])),
        ),
      ].map(Number),
    ended: (): string[] => lines().filter((l) => l.startsWith('end ')),
  }
}
type Slow = ReturnType<typeof slowCommands>

/** A folder of commands named as the engine's shims (and pidof) that run them through `slow`. */
function slowShims(engine: EngineHandle, slow: string): string {
  const wrapped = join(dir, `bin-${engine.svc}`)
  mkdirSync(wrapped)
  const real = new Map(readdirSync(engine.binDir).map((name) => [name, join(engine.binDir, name)]))
  real.set('pidof', execFileSync('sh', ['-c', 'command -v pidof'], { encoding: 'utf8' }).trim())
  for (const [name, target] of real) {
    writeFileSync(join(wrapped, name), `#!/bin/sh\nexec ${shQuote(slow)} ${name} ${shQuote(target)} "$@"\n`)
    chmodSync(join(wrapped, name), 0o755)
  }
  return wrapped
}

/** A loopback port that forwards to `port` once every label has started (at most 10 s). */
async function gatedUntil(w: Slow, labels: readonly string[], port: number): Promise<string> {
  const gate = createServer((client) => {
    sockets.add(client)
    client.pause()
    void (async () => {
      for (let i = 0; i < 500 && !labels.every(w.started); i++) await sleep(20)
      const upstream = connect(port, '127.0.0.1')
      sockets.add(upstream)
      for (const s of [client, upstream]) s.on('error', () => (client.destroy(), upstream.destroy()))
      client.pipe(upstream)
      upstream.pipe(client)
      client.resume()
    })()
  })
  gates.push(gate)
  gate.listen(0, '127.0.0.1')
  await once(gate, 'listening')
  const address = gate.address()
  if (address === null || typeof address === 'string') throw new Error('the gate has no port')
  return `http://127.0.0.1:${address.port}`
}

async function engine(svc: string, args: readonly string[] = []): Promise<EngineHandle> {
  const e = await startEngine({ svc, processName: `r${svc}${process.pid % 100_000}`, args: ['--prefill-interleave', '1', ...args] })
  engines.push(e)
  await e.waitReady()
  return e
}

/** Well within the commands' sleep, none of `sids` has a live process (a bound on a kill that never comes, not on speed). */
async function gone(sids: readonly number[], context: string): Promise<void> {
  await vi.waitFor(
    async () => {
      for (const sid of sids) expect(await groupLive(sid), `process group ${sid}\n${context}`).toEqual([])
    },
    { timeout: 3000, interval: 20 },
  )
}

describe.concurrent('reads of a run refused at first contact', () => {
  test('one target: once verify() returns, no host program of its reads ahead or of first contact runs, and none does its work after', async () => {
    const w = slowCommands('one')
    const e = await engine('rdone', ['--api-key', KEY])
    // The batch's first part (systemctl, the drop-ins) and first contact's survey (its pidof).
    const baseUrl = await gatedUntil(w, ['systemctl', 'pidof'], e.port)
    const run = await verifyInProcess([...engineArgs(e, baseUrl), '--knob', 'PREFILL_INTERLEAVE', '--value', '1'], {
      env: e.env,
      hostEnv: { PATH: `${slowShims(e, w.slow)}:${e.env.PATH}` },
    })
    const context = `${run.stderr}\n${w.lines().join('\n')}`
    expect(run.exitCode, context).toBe(2)
    expect(run.stderr, context).toContain('set VERIFY_API_KEY (env or .env) or pass --api-key-file')
    // The refusal came while both ran.
    expect([w.started('systemctl'), w.started('pidof')], context).toEqual([true, true])
    const sids = w.sessions()
    expect(sids.length, context).toBeGreaterThanOrEqual(2)
    await gone(sids, context)
    // Past the sleep: none went on to its work.
    await sleep(SLEEP_S * 1000 + 300)
    expect(w.ended(), context).toEqual([])
  })

  test("a fleet: the refused target's reads are cancelled when first contact is over, through the spawner; the others' run on until the fleet ends", async () => {
    const w = slowCommands('fleet')
    const [refused, other] = await Promise.all([engine('rdfa', ['--api-key', KEY]), engine('rdfb')])
    const entry = (e: EngineHandle, label: string) => ({
      ...engineEntry(e),
      'help-cmd': `${w.slow} ${label} ${e.binDir}/podman exec {svc} radiance --help`,
    })
    const file = writeTargets({ knob: 'PREFILL_INTERLEAVE', value: '1', host: 'local' }, [
      { ...entry(refused, 'refused'), 'base-url': await gatedUntil(w, ['refused', 'other'], refused.port) },
      entry(other, 'other'),
    ])
    let atSuites: { refused: number[]; other: string[][] } | undefined
    // Drop-ins checked: with the help command they are two reads, which the seams take ahead in one
    // batch (a single read is not read ahead; the ledger never is: it is read once loading ended).
    const run = await verifyInProcess(['--targets', file], {
      atSuites: async () => {
        await gone(w.sessions('refused'), w.lines().join('\n'))
        atSuites = {
          refused: w.sessions('refused'),
          other: await Promise.all(w.sessions('other').map((sid) => groupLive(sid))),
        }
        return 'no proof steps in this test'
      },
    })
    const context = `${run.stderr}\n${w.lines().join('\n')}`
    expect(run.stderr, context).toMatch(/^armproof: rdfa: \/v1\/models answers HTTP 401 \(the key\)/m)
    // When the suites would start: the refused target's programs are gone, the other's still run (its steps' to take).
    expect(atSuites?.refused.length, context).toBe(1)
    expect(atSuites?.other.length, context).toBe(1)
    expect(atSuites?.other[0], context).not.toEqual([])
    // The fleet over, the other's are cancelled too; none went on to its work.
    await gone(w.sessions(), context)
    await sleep(SLEEP_S * 1000 + 300)
    expect(w.ended(), context).toEqual([])
  })
})
