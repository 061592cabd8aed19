// A vitest pool that runs the arm suite in the process that started vitest, instead of a forked
// worker: `pnpm verify` runs one suite file once and then exits, so a second Node process (its
// start, vitest's runtime, undici and the helpers loaded a second time) is pure cost: about 40%
// of a verdict's CPU, replayed or live (`node scripts/perf/pool.ts` runs both pools side by side).
// vitest's own worker runtime (`vitest/worker`) does the work, as in its forks and threads pools;
// only the transport differs: messages are handed over in this process, cloned as a worker
// thread's would be, never by reference.
//
// That runtime's `init`, `runBaseTests` and `setupEnvironment` are marked @experimental in vitest
// 5.1.2 (as is the custom-pool API as a whole, vitest.dev/advanced/pool). vitest is pinned exactly
// and the typecheck reads them, so an upgrade that changes them fails `pnpm test`; an install that
// resolves another vitest anyway is caught by `workerRuntime` below: what it imports is checked
// (each is a function, with the parameters this pool calls it with), and when it is not what this
// pool was written for, the suite runs under vitest's own forks pool and the run says why in one
// line (./run-suites.ts). Both pools give the same verdicts and report (test/cli/stock-pool-fallback.test.ts).
//
// What the runtime changes in the process it runs in is put back when the pool stops: it replaces
// `process.exit` with one that throws (a test must not end the run), registers module hooks for
// its native loader (removed, or the next run in this process would wait on them), and listens
// for uncaught errors to report them as the run's (the pool adds one module hook of its own, ./suite-source.ts, removed likewise). It reports them only when its listener is the only one, as
// in a worker of its own: vitest's own listener (print, then exit) is set aside for the run and
// put back after it, so an error no step caught reaches the report (never green), not a crash. The
// command's exit on SIGINT / SIGTERM (helpers/cli/interrupt.ts) is bound before the run starts
// (bin/verify.ts, bin/demo.ts). The console is not intercepted (SUITES_IN_PROCESS below): the
// suite writes through its reporter.
import { EventEmitter } from 'node:events'
import nodeModule from 'node:module'
import type { PoolRunnerInitializer, PoolWorker, WorkerRequest } from 'vitest/node'
import type * as VitestWorker from 'vitest/worker'
import { suiteAsJavaScript } from './suite-source.ts'

const NAME = 'armproof-in-process'
type Listener = (...args: unknown[]) => void
const ERROR_EVENTS = ['uncaughtException', 'unhandledRejection'] as const
/** `process` as the plain emitter it is, for the error events by name. */
const emitter: EventEmitter = process
type RegisterHooks = typeof nodeModule.registerHooks

/** What this pool takes from `vitest/worker`. */
export type WorkerRuntime = Pick<typeof VitestWorker, 'init' | 'runBaseTests' | 'setupEnvironment'>

/** Each function this pool calls, with the number of parameters it passes (vitest 5.1.2's). */
const RUNTIME_SHAPE: Readonly<Record<keyof WorkerRuntime, number>> = { init: 1, runBaseTests: 3, setupEnvironment: 1 }

/**
 * `vitest/worker`'s exports as this pool calls them, or why they are not (one line): a function
 * missing, or one that takes another number of parameters than the pool passes.
 */
export function workerRuntime(exports: Readonly<Record<string, unknown>>): WorkerRuntime | { why: string } {
  for (const [name, parameters] of Object.entries(RUNTIME_SHAPE)) {
    const value = exports[name]
    if (value === undefined) return { why: `vitest/worker exports no ${name}` }
    if (typeof value !== 'function') return { why: `vitest/worker's ${name} is of type ${typeof value}, not a function` }
    if (value.length !== parameters)
      return { why: `vitest/worker's ${name} takes ${value.length} parameter(s), this pool passes ${parameters}` }
  }
  return exports as unknown as WorkerRuntime
}

/** The inline config that goes with the pool: the runtime must leave this process's console alone. */
export const SUITES_IN_PROCESS = { disableConsoleIntercept: true } as const

class InProcessWorker implements PoolWorker {
  readonly name = NAME
  readonly #runtime: WorkerRuntime
  readonly #toPool = new EventEmitter()
  readonly #toWorker = new EventEmitter()
  #started: Promise<void> | undefined
  #exit: typeof process.exit | undefined
  /** The listeners for uncaught errors before the run, set aside meanwhile. */
  #listeners: Array<[event: string, listeners: Listener[]]> = []
  /** `module.registerHooks` before the run, and the module hooks the runtime registered during it. */
  #registerHooks: RegisterHooks | undefined
  #ownRegisterHooks: RegisterHooks | undefined
  #hooks: Array<ReturnType<RegisterHooks>> = []

  constructor(runtime: WorkerRuntime) {
    this.#runtime = runtime
  }

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

  // async: an init that throws rejects start(), as a worker that fails to start does.
  async #start(): Promise<void> {
    this.#exit = process.exit
    this.#watchModuleHooks()
    this.#listeners = ERROR_EVENTS.map((event) => [event, emitter.listeners(event) as Listener[]])
    for (const [event, listeners] of this.#listeners) for (const listener of listeners) emitter.off(event, listener)
    const { init, runBaseTests, setupEnvironment } = this.#runtime
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

  /**
   * The runtime registers module hooks for the run (vitest's native loader) and never removes
   * them: kept, a later run in this process would still call this run's hooks, which report each
   * import to this run's closed pool and wait for its answer forever. They are removed at the end.
   */
  #watchModuleHooks(): void {
    const original = nodeModule.registerHooks
    if (typeof original !== 'function' || this.#registerHooks) return
    this.#registerHooks = original
    // The suite file loaded as the JavaScript it is (./suite-source.ts); removed with the runtime's.
    this.#hooks.push(original({ load: suiteAsJavaScript }))
    this.#ownRegisterHooks = (options) => {
      const hooks = original(options)
      this.#hooks.push(hooks)
      return hooks
    }
    nodeModule.registerHooks = this.#ownRegisterHooks
  }

  #restore(): void {
    this.#toWorker.removeAllListeners('message')
    if (this.#exit) process.exit = this.#exit
    // Put back only where it is still this worker's own (whoever replaced it since keeps theirs).
    if (this.#registerHooks && nodeModule.registerHooks === this.#ownRegisterHooks) nodeModule.registerHooks = this.#registerHooks
    this.#registerHooks = undefined
    this.#ownRegisterHooks = undefined
    for (const hooks of this.#hooks.splice(0)) hooks.deregister?.()
    for (const [event, listeners] of this.#listeners) {
      for (const listener of emitter.listeners(event) as Listener[]) emitter.off(event, listener)
      for (const listener of listeners) emitter.on(event, listener)
    }
    this.#listeners = []
  }
}

/** The pool for `startVitest(..., { pool: inProcessPool(runtime), ...SUITES_IN_PROCESS })`, the runtime checked by `workerRuntime`. */
export function inProcessPool(runtime: WorkerRuntime): PoolRunnerInitializer {
  return { name: NAME, createPoolWorker: () => new InProcessWorker(runtime) }
}
