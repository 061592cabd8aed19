// Several engines under one process name on one host (one per GPU) are a normal layout: each,
// verified through its own port, is green on its own evidence, and names the other.
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { startEngine, type EngineHandle } from '../../engine/launch.ts'
import { stepOf } from '../../helpers/steps/verdict.ts'
import { proveInProcess } from '../support/prove-in-process.ts'
import { armedArgs } from '../support/run-verify.ts'

const NAME = `rone-${process.pid % 100_000}`
let gpu0: EngineHandle
let gpu1: EngineHandle
beforeAll(async () => {
  gpu0 = await startEngine({ svc: 'one-gpu0', processName: NAME, args: ['--prefill-interleave', '1'] })
  gpu1 = await startEngine({ svc: 'one-gpu1', processName: NAME, args: ['--prefill-interleave', '1'] })
  await Promise.all([gpu0.waitReady(), gpu1.waitReady()])
})
afterAll(async () => {
  await Promise.all([gpu0?.stop(), gpu1?.stop()])
})

describe('two engines under one process name on one host', () => {
  test('each verifies green through its own port, its argv read from the process holding that port, the other named with its port', async () => {
    for (const [mine, other] of [
      [gpu0, gpu1],
      [gpu1, gpu0],
    ] as const) {
      const run = await proveInProcess(armedArgs(mine), { engine: mine })
      expect(run.report.verdict, run.stdout).toBe('green')
      const argv = stepOf(run.report.steps, 'argv')!
      expect(argv.evidence).toMatchObject({
        pid: mine.pids[0],
        foundBy: 'listener',
        listenerTied: true,
        others: [{ pid: String(other.pids[0]), ports: [other.port], portsFrom: 'sockets' }],
      })
      expect(argv.evidence.startTimeSeconds).toEqual(expect.any(Number))
      expect(argv.observed).toContain(`other engines named here: pid ${other.pids[0]} on port ${other.port}`)
      expect(stepOf(run.report.steps, 'meter')!.observed).toContain(
        `pid ${mine.pids[0]} (read by step argv) still holds the listening socket of port ${mine.port}`,
      )
    }
  })
})
