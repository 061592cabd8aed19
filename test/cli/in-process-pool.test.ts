// The in-process pool's worker (helpers/cli/in-process-pool.ts) driven directly, with a stand-in for
// vitest's worker runtime: what it hands the runtime (the run and collect entries, the environment
// setup), messages copied both ways as a worker thread's would be and delivered on a later turn,
// one start however often asked, a runtime that fails to start rejecting start(), and what the
// runtime changes in this process (process.exit, the uncaught-error listeners) put back on stop
// and on the runtime's teardown, the module hooks it registered removed (a later run in the same
// process would otherwise wait on this run's closed pool: verify() run three times over in one
// process); and a vitest/worker that cannot be loaded at all, which sends the
// suite to vitest's stock pool. A runtime of another shape, and both pools' equal verdicts, are
// test/cli/stock-pool-fallback.test.ts's.
import { mkdtempSync, rmSync } from 'node:fs'
import nodeModule from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { afterEach, describe, expect, test } from 'vitest'
import type { WorkerRequest } from 'vitest/node'
import { inProcessPool, type WorkerRuntime } from '../../helpers/cli/in-process-pool.ts'
import { ROOT, cleanup, runVerify, armedArgs } from '../support/run-verify.ts'
import { armedEngine } from '../support/armed-engine.ts'
import { SUITE_PROCESS_LINE } from '../support/suite-process.ts'

type InitOptions = Parameters<WorkerRuntime['init']>[0]

/** A runtime that records what the pool gave it; `onInit` acts as vitest's would when started. */
function standIn(onInit: (options: InitOptions) => void = () => {}) {
  const seen = { inits: [] as InitOptions[], runs: [] as unknown[][] }
  const runtime: WorkerRuntime = {
    init: (options) => {
      seen.inits.push(options)
      onInit(options)
    },
    runBaseTests: async (method, state, traces) => void seen.runs.push([method, state, traces]),
    setupEnvironment: async (_context) => async () => {},
  }
  return { runtime, seen }
}

const worker = (runtime: WorkerRuntime) =>
  inProcessPool(runtime).createPoolWorker({} as Parameters<ReturnType<typeof inProcessPool>['createPoolWorker']>[0])
const turn = () => new Promise((r) => setImmediate(r))

const exit = process.exit
const listeners = () => ({ uncaught: process.listeners('uncaughtException'), rejection: process.listeners('unhandledRejection') })
const before = listeners()
afterEach(() => {
  // Whatever a test did, this worker's own process is left as it was.
  process.exit = exit
  expect(listeners()).toEqual(before)
})

describe('the in-process worker, against a stand-in for vitest/worker', () => {
  test('the runtime gets the run and collect entries, and the environment setup, as its own worker would', async () => {
    const { runtime, seen } = standIn()
    const w = worker(runtime)
    expect(w.name).toBe('armproof-in-process')
    await w.start()
    await w.start()
    expect(seen.inits).toHaveLength(1)
    const [options] = seen.inits
    await options!.runTests({ a: 1 } as never, { t: 1 } as never)
    await options!.collectTests({ b: 2 } as never, { t: 2 } as never)
    expect(seen.runs).toEqual([
      ['run', { a: 1 }, { t: 1 }],
      ['collect', { b: 2 }, { t: 2 }],
    ])
    expect(options!.setup).toBe(runtime.setupEnvironment)
    await w.stop()
  })

  test("messages are copies, both ways, delivered on a later turn (never the sender's object)", async () => {
    const { runtime, seen } = standIn()
    const w = worker(runtime)
    await w.start()
    const toWorker: unknown[] = []
    seen.inits[0]!.on((m: unknown) => toWorker.push(m))
    const request = { type: 'run', context: { files: ['suites/arm.test.ts'] } } as unknown as WorkerRequest
    w.send(request)
    expect(toWorker).toEqual([])
    await turn()
    expect(toWorker).toEqual([request])
    expect(toWorker[0]).not.toBe(request)
    ;(request as unknown as { context: { files: string[] } }).context.files.push('changed after sending')
    expect(toWorker[0]).toEqual({ type: 'run', context: { files: ['suites/arm.test.ts'] } })

    const toPool: unknown[] = []
    w.on('message', (m: unknown) => toPool.push(m))
    const response = { type: 'testfileFinished', result: { ok: true } }
    seen.inits[0]!.post(response)
    expect(toPool).toEqual([])
    await turn()
    expect(toPool).toEqual([response])
    expect(toPool[0]).not.toBe(response)
    // A value a worker thread could not receive is refused when sent, not shared.
    expect(() => w.send({ fn: () => {} } as unknown as WorkerRequest)).toThrow(/could not be cloned/)
    await w.stop()
    // Stopped: nothing more reaches the runtime.
    w.send(request)
    await turn()
    expect(toWorker).toHaveLength(1)
  })

  test('what the runtime changes in this process is put back on stop: process.exit and the uncaught-error listeners', async () => {
    const throwingExit = (() => {
      throw new Error('process.exit called in a test')
    }) as typeof process.exit
    const own = () => {}
    const { runtime } = standIn(() => {
      process.exit = throwingExit
      process.on('uncaughtException', own)
    })
    const w = worker(runtime)
    await w.start()
    // During the run, the runtime's listener is the only one (as in a worker of its own).
    expect(process.listeners('uncaughtException')).toEqual([own])
    expect(process.listeners('unhandledRejection')).toEqual([])
    expect(process.exit).toBe(throwingExit)
    await w.stop()
    expect(process.exit).toBe(exit)
    expect(listeners()).toEqual(before)
  })

  test("the runtime's teardown puts everything back too", async () => {
    const { runtime, seen } = standIn(() => {
      process.exit = (() => undefined) as never
    })
    const w = worker(runtime)
    await w.start()
    seen.inits[0]!.teardown!()
    expect(process.exit).toBe(exit)
    expect(listeners()).toEqual(before)
    await w.stop()
  })

  test('the module hooks the runtime registers are removed on stop, and module.registerHooks put back', async () => {
    const registerHooks = nodeModule.registerHooks
    const resolved: string[] = []
    const { runtime } = standIn(() => {
      nodeModule.registerHooks({
        resolve(specifier, context, next) {
          if (specifier.startsWith('armproof-hook-probe:')) resolved.push(specifier)
          return next(specifier.replace(/^armproof-hook-probe:/, ''), context)
        },
      })
    })
    const w = worker(runtime)
    await w.start()
    expect(nodeModule.registerHooks).not.toBe(registerHooks)
    const probe = (name: string): Promise<unknown> => import(`armproof-hook-probe:${name}`)
    await probe('node:os')
    expect(resolved).toEqual(['armproof-hook-probe:node:os'])
    await w.stop()
    expect(nodeModule.registerHooks).toBe(registerHooks)
    // Deregistered: the same specifier is no longer rewritten, so it no longer resolves.
    await expect(probe('node:path')).rejects.toThrow()
    expect(resolved).toEqual(['armproof-hook-probe:node:os'])
  })

  test('a runtime that throws when started rejects start(), as a worker that fails to start does; stop puts things back', async () => {
    const w = worker(
      standIn(() => {
        throw new Error('init: unknown message shape')
      }).runtime,
    )
    await expect(w.start()).rejects.toThrow('init: unknown message shape')
    await w.stop()
    expect(listeners()).toEqual(before)
  })
})

describe('the real runtime, run after run in one process', () => {
  const armed = armedEngine('pool-again', 'rpoolagain')

  test('verify() three times over in one process: three green verdicts, none waiting on a run before it', async () => {
    const engine = armed()
    const dir = mkdtempSync(join(tmpdir(), 'armproof-repeat-'))
    try {
      const r = await execa(process.execPath, [join(ROOT, 'test/support/verify-repeated.ts'), ...armedArgs(engine)], {
        cwd: ROOT,
        reject: false,
        timeout: 45_000,
        env: { ...engine.env, CI: 'true', VERIFY_NO_DOTENV: '1', ARMPROOF_REPEAT: '3', ARMPROOF_REPEAT_DIR: dir },
      })
      const out = `${r.stdout}\n${r.stderr}`
      expect(r.timedOut, out).toBe(false)
      expect(r.exitCode, out).toBe(0)
      expect(String(r.stdout).split('\n'), out).toEqual(
        // Each run has no earlier record of its service: the one-flag step is skipped on purpose.
        [0, 1, 2].map((i) =>
          expect.stringMatching(new RegExp(`^run ${i}: exit 0 · steps: 9 passed, 0 failed, 0 inconclusive, 1 skipped · `)),
        ),
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('a vitest whose worker runtime cannot be loaded at all', () => {
  const armed = armedEngine('pool-gone', 'rpoolgone')

  test('the suite runs in a forked worker to a green verdict, and the warning says why in one line', async () => {
    const engine = armed()
    const preload = ['suite-process.ts', 'no-worker-module.ts'].map((f) => `--import=${join(ROOT, 'test/support', f)}`).join(' ')
    const run = await runVerify(armedArgs(engine), {
      engine,
      env: { NODE_OPTIONS: preload },
    })
    try {
      const out = `${run.stdout}\n${run.stderr}`
      expect(run.exitCode, out).toBe(0)
      expect(run.report?.verdict, out).toBe('green')
      expect(run.stderr.match(SUITE_PROCESS_LINE)?.[1], out).toBe('false')
      expect(run.stderr.match(/^armproof: warning: .*$/gm)).toEqual([
        'armproof: warning: the suite runs in a worker forked by vitest, not in this process: vitest/worker could not be loaded (Package subpath \'./worker\' is not defined by "exports" in node_modules/vitest/package.json)',
      ])
    } finally {
      cleanup(run)
    }
  })
})
