// The two cases a review found open before the engine lookup (issue 20, rule 1) and the meter's
// rule 9 met: a base URL whose port no engine on the local host serves ends at first contact (exit
// 2, naming the ports the engines there listen on, with a short health budget as with the default
// one), and where that check does not apply (the host is reached over ssh, or an engine there may
// still be loading onto the port) a health step that ends inconclusive leaves the meter
// unwatched: inconclusive at once, not after its 5-minute default window.
import { createServer } from 'node:net'
import { afterAll, describe, expect, test } from 'vitest'
import { startEngine, type EngineHandle } from '../../engine/launch.ts'
import { cleanup, runVerify, verdicts, type VerifyRun } from '../support/run-verify.ts'
import { verifyInProcess } from '../support/verify-in-process.ts'

const engines: EngineHandle[] = []
afterAll(async () => {
  await Promise.all(engines.map((e) => e.stop()))
})

// Process names are machine-wide (pidof): this run's own suffix keeps another checkout's run apart.
const RUN = process.pid % 100_000
const ARM = ['--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--health-budget', '2s']

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** The meter was not watched: inconclusive at once, saying why (its default window is 5 minutes). */
function meterNotWatched(run: VerifyRun): void {
  const context = `${run.stdout}\n${run.stderr}`
  expect(run.exitCode, context).toBe(3)
  expect(run.report?.verdict, context).toBe('inconclusive')
  expect(verdicts(run.report), context).toMatchObject({
    health: 'inconclusive',
    'probe.exact': 'skipped',
    'probe.tools': 'skipped',
    'probe.vision': 'skipped',
    meter: 'inconclusive',
  })
  const meter = run.report!.steps.find((s) => s.id === 'meter')!
  expect(meter.observed, context).toMatch(/^not watched: \/health never answered 200 \(see step health\)/)
  expect(meter.expected, context).toContain('within 5m')
}

describe('a base URL no engine on the local host serves', () => {
  test('--base-url http://127.0.0.1:9 --health-budget 2s with an engine running on another port: exit 2 at first contact, naming its port', async () => {
    const engine = await startEngine({ args: ['--prefill-interleave', '1'], svc: 'ff-elsewhere', processName: `rff-${RUN}` })
    engines.push(engine)
    await engine.waitReady()
    const run = await verifyInProcess(
      ['--svc', 'demo', ...ARM, '--base-url', 'http://127.0.0.1:9', '--process', engine.processName, '--host', 'local'],
      { env: engine.env },
    )
    await engine.stop()
    expect(run.exitCode, run.stderr).toBe(2)
    expect(run.stderr.trim().split('\n'), run.stderr).toHaveLength(1)
    expect(run.stderr).toContain(
      `nothing on this host listens on port 9 and no container answers for demo: the engines named ${engine.processName} there listen on port ${engine.port} (pid ${engine.pids[0]})`,
    )
    expect(run.stderr).toContain(`did you mean --base-url http://127.0.0.1:${engine.port}?`)
    expect(run.stderr).toContain('[first contact: local: /proc/net/tcp{,6}')
    expect(run.report).toMatchObject({ verdict: 'error', steps: [] })
    cleanup(run)
  })
})

describe('where the unserved-port check does not apply, an inconclusive health step leaves the meter unwatched', () => {
  test('--host reached over ssh (the host unreadable): the health budget, then the meter inconclusive at once', {
    timeout: 150_000,
  }, async () => {
    const port = await closedPort()
    const run = await runVerify(
      [
        '--svc',
        'demo',
        ...ARM,
        '--base-url',
        'http://127.0.0.1:9',
        '--host',
        'armproof@127.0.0.1',
        '--ssh-opts',
        `-p ${port}`,
        '--host-timeout',
        '10s',
      ],
      { timeoutMs: 120_000 },
    )
    meterNotWatched(run)
    // The host steps could not reach the host either: inconclusive, never red.
    expect(verdicts(run.report)).toMatchObject({ help: 'inconclusive', argv: 'inconclusive', ledger: 'inconclusive' })
    cleanup(run)
  })

  test('an engine that may still be loading onto the port (its argv names it, it does not listen yet): the health budget, then the meter inconclusive at once', {
    timeout: 150_000,
  }, async () => {
    const engine = await startEngine({
      args: ['--prefill-interleave', '1'],
      faults: ['never_listen'],
      svc: 'ff-loading',
      processName: `rfl-${RUN}`,
    })
    engines.push(engine)
    const run = await runVerify(
      [
        '--svc',
        engine.svc,
        ...ARM,
        '--base-url',
        engine.baseUrl,
        '--process',
        engine.processName,
        '--host',
        'local',
        '--host-timeout',
        '10s',
      ],
      { engine, timeoutMs: 120_000 },
    )
    await engine.stop()
    meterNotWatched(run)
    // The engine itself was found (nothing listens on its port yet: the one process of its name) and its argv holds,
    // but it never listened within the budget: nothing ties the endpoint to it, so argv is not green either.
    expect(verdicts(run.report)).toMatchObject({ argv: 'inconclusive' })
    const argv = run.report!.steps.find((s) => s.id === 'argv')!.observed
    expect(argv).toContain(`(pid ${engine.pids[0]} is the only process pidof ${engine.processName} finds)`)
    expect(argv).toContain(
      `but nothing ties the endpoint to pid ${engine.pids[0]}: pid ${engine.pids[0]} was found by its name, and no process listened on port`,
    )
    cleanup(run)
  })
})
