// A vitest pool that runs the arm suite in the process that started vitest, instead of a forked
// worker: `pnpm verify` runs one suite file once and then exits, so a second Node process (its
// start, vitest's runtime, undici and the helpers loaded a second time) is pure cost, about a third
// of a run's CPU. vitest's own worker runtime (`vitest/worker`) does the work, as in its forks and
// threads pools; only the transport differs: messages are handed over in this process, cloned as a
// worker thread's would be, never by reference.
//
// What the runtime changes in the process it runs in is put back when the pool stops: it replaces
// `process.exit` with one that throws (a test must not end the run), and listens for uncaught
// errors to report them as the run's. It reports them only when its listener is the only one, as
// in a worker of its own: vitest's own listener (print, then exit) is set aside for the run and
// put back after it, so an error no step caught reaches the report (never green), not a crash. The
// command's exit on SIGINT / SIGTERM (helpers/cli/interrupt.ts) is bound before the run starts
// (bin/verify.ts, bin/demo.ts). The console is not intercepted (SUITES_IN_PROCESS below): the
// suite writes through its reporter.
import { EventEmitter } from 'node:events'
import type { PoolRunnerInitializer, PoolWorker, WorkerRequest } from 'vitest/node'

const NAME = 'armproof-in-process'
type Listener = (...args: any[]) => void
const ERROR_EVENTS = ['uncaughtException', 'unhandledRejection'] as const
/** `process` as the plain emitter it is, for the error events by name. */
const emitter: EventEmitter = process

/** The inline config that goes with the pool: the runtime must leave this process's console alone. */
export const SUITES_IN_PROCESS = { disableConsoleIntercept: true } as const

class InProcessWorker implements PoolWorker {
  readonly name = NAME
  readonly #toPool = new EventEmitter()
  readonly #toWorker = new EventEmitter()
  #started: Promise<void> | undefined
  #exit: typeof process.exit | undefined
  /** The listeners for uncaught errors before the run, set aside meanwhile. */
  #listeners: Array<[event: string, listeners: Listener[]]> = []

  on(event: string, callback: Listener): void {
    this.#toPool.on(event, callback)
  }

  off(event: string, callback: Listener): void {
    this.#toPool.off(event, callback)
  }

  send(message: WorkerRequest): void {
    const copy = structuredClone(message)
    setImmediate(() => this.#toWorker.emit('message', copy))
  }

  deserialize(data: unknown): unknown {
    return data
  }

  start(): Promise<void> {
    this.#started ??= this.#start()
    return this.#started
  }

  async #start(): Promise<void> {
    this.#exit = process.exit
    this.#listeners = ERROR_EVENTS.map((event) => [event, emitter.listeners(event) as Listener[]])
    for (const [event, listeners] of this.#listeners) for (const listener of listeners) emitter.off(event, listener)
    const { init, runBaseTests, setupEnvironment } = await import('vitest/worker')
    init({
      post: (response) => {
        const copy = structuredClone(response)
        setImmediate(() => this.#toPool.emit('message', copy))
      },
      on: (callback) => void this.#toWorker.on('message', callback),
      off: (callback) => void this.#toWorker.off('message', callback),
      teardown: () => this.#restore(),
      runTests: (state, traces) => runBaseTests('run', state, traces),
      collectTests: (state, traces) => runBaseTests('collect', state, traces),
      setup: setupEnvironment,
    })
  }

  async stop(): Promise<void> {
    this.#restore()
  }

  #restore(): void {
    this.#toWorker.removeAllListeners('message')
    if (this.#exit) process.exit = this.#exit
    for (const [event, listeners] of this.#listeners) {
      for (const listener of emitter.listeners(event) as Listener[]) emitter.off(event, listener)
      for (const listener of listeners) emitter.on(event, listener)
    }
    this.#listeners = []
  }
}

/** The pool for `startVitest(..., { pool: inProcessPool(), ...SUITES_IN_PROCESS })`. */
export function inProcessPool(): PoolRunnerInitializer {
  return { name: NAME, createPoolWorker: () => new InProcessWorker() }
}
