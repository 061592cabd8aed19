// One row of the writeback, replay, merge-reports, record and output fault table
// (test/support/writeback-faults.ts, docs/writeback-faults.md).

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
