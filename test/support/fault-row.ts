// One row of the writeback, replay, merge-reports, record and output fault table
// (test/support/writeback-faults.ts, docs/writeback-faults.md), and the one slot the rows that run
// a whole `pnpm verify` take in turn.
import { slots } from '../../helpers/seams/slots.ts'

export interface Outcome {
  exit: number
  /** stdout and stderr together. */
  output: string
}

/** The table's sections, in the doc's order. */
export const AREAS = {
  writeback: 'pnpm writeback',
  replay: 'pnpm verify --mode replay',
  'merge-reports': 'pnpm merge-reports',
  record: 'pnpm verify --mode record: the fixtures',
  outputs: 'pnpm verify: the outputs, checked before contact',
} as const

export interface FaultRow {
  area: keyof typeof AREAS
  fault: string
  /** What armproof does instead. */
  expected: string
  exit: number
  /** A piece of the output. */
  message: string
  /** Runs on its own (many processes): not beside the other rows, whose load would only slow it. */
  alone?: true
  /** Does the harm, checks what must hold besides the exit code and message (throws otherwise). */
  run(): Promise<Outcome>
}

const verifySlot = slots(1)

/**
 * Runs `fn`, a row's whole `pnpm verify` (its engine, its runs, what it checks between them), when
 * no other row's is under way. The rows run side by side (faults.test.ts), and each such run takes
 * a verify host of its own (test/support/verify-host.ts) or a child: six at once started six hosts,
 * some 0.4 CPU-s each, where one after another they share one. What a row runs and checks is the same.
 */
export const oneVerifyAtATime = <T>(fn: () => Promise<T>): Promise<T> => verifySlot.run(fn)
