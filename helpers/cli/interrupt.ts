// SIGINT / SIGTERM (Ctrl-C, a CI cancel) during a run, one target's or a fleet's: `onStop` writes
// what was judged so far, synchronously, marked interrupted, before vitest's own handler ends the
// process; the exit code is 130 / 143; the suite, which runs in this process
// (helpers/cli/in-process-pool.ts), ends with it. Signals are caught only when the command itself
// gave `exit` (bin/verify.ts), never for an in-process caller.
import { INTERRUPT_EXIT } from '../steps/verdict.ts'

export type StopSignal = 'SIGINT' | 'SIGTERM'

export class Interrupt {
  stopped = false
  readonly startedAt = new Date()
  readonly #sigint = () => this.#on('SIGINT')
  readonly #sigterm = () => this.#on('SIGTERM')
  readonly #exit: ((code: number) => void) | undefined
  readonly #onStop: (signal: StopSignal) => void

  constructor(exit: ((code: number) => void) | undefined, onStop: (signal: StopSignal) => void) {
    this.#exit = exit
    this.#onStop = onStop
    if (!exit) return
    process.prependListener('SIGINT', this.#sigint)
    process.prependListener('SIGTERM', this.#sigterm)
  }

  dispose(): void {
    process.off('SIGINT', this.#sigint)
    process.off('SIGTERM', this.#sigterm)
  }

  #on(signal: StopSignal): void {
    if (this.stopped) return
    this.stopped = true
    const code = INTERRUPT_EXIT[signal]
    process.exitCode = code
    this.#onStop(signal)
    this.#exit?.(code)
  }
}
