// The order `pnpm test` starts its files in. vitest runs the longest files first only when its
// results cache knows their durations, and a clean clone (CI) has none: it falls back to file
// size, which starts the long waits (fleets, Prometheus scrapes, the fault matrix's engines) late
// and leaves them running alone at the end. These files, longest first, start before the rest;
// the rest keep vitest's own order. Re-measure with `pnpm test` when the list seems stale: an
// outdated list costs time, never a result.
import { basename } from 'node:path'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

export const SLOW_FIRST: readonly string[] = [
  'fault-matrix.test.ts',
  'fleet.test.ts',
  'writeback-faults.test.ts',
  'record-replay.test.ts',
  'prometheus-verify.test.ts',
  'honest.test.ts',
  'secrets.test.ts',
  'ssh.test.ts',
  'engine.test.ts',
  'prometheus.test.ts',
]

export class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const rank = (spec: TestSpecification) => {
      const i = SLOW_FIRST.indexOf(basename(spec.moduleId))
      return i === -1 ? SLOW_FIRST.length : i
    }
    return sorted.map((spec, i) => ({ spec, i })).sort((a, b) => rank(a.spec) - rank(b.spec) || a.i - b.i).map(({ spec }) => spec)
  }
}
