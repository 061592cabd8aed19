// The order `pnpm test` starts its files in. vitest runs the longest files first only when its
// results cache knows their durations, and a clean clone (CI) has none: it falls back to file
// size, which starts the long waits (fleets, Prometheus scrapes, the fault matrix's engines) late
// and leaves them running alone at the end. These files, longest first (each file's duration in a
// `CI=true pnpm test` on 2 cores, paths under test/), start before the rest; the rest keep vitest's
// own order. Re-measure with `pnpm test` when the list seems stale: an outdated list costs time,
// never a result.
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

export const SLOW_FIRST: readonly string[] = [
  'fault-matrix.test.ts',
  'writeback-faults.test.ts',
  'record-replay.test.ts',
  'conventions.test.ts',
  'fleet.test.ts',
  'serve.test.ts',
  'package.test.ts',
  'engine.test.ts',
  'honest.test.ts',
  'secrets.test.ts',
  'ssh.test.ts',
  'fail-fast.test.ts',
  'prometheus-verify.test.ts',
  'fault-matrix-profiles.test.ts',
  'prometheus.test.ts',
  'writeback.test.ts',
  'prometheus-faults.test.ts',
  'contain.test.ts',
  'prometheus-exemplar.test.ts',
  'in-process-pool.test.ts',
  'fault-matrix-heavy.test.ts',
  'effect/prometheus.test.ts',
  'effect/property.test.ts',
  'profile-replay.test.ts',
  'verify-cli.test.ts',
  'fleet-plan.test.ts',
  'ci-examples.test.ts',
]

/** Names in SLOW_FIRST are relative to test/ (a file in a folder keeps its folder: effect/x.test.ts). */
const TEST_DIR = fileURLToPath(new URL('..', import.meta.url))

export class SlowFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const rank = (spec: TestSpecification) => {
      const i = SLOW_FIRST.indexOf(relative(TEST_DIR, spec.moduleId))
      return i === -1 ? SLOW_FIRST.length : i
    }
    return sorted.map((spec, i) => ({ spec, i })).sort((a, b) => rank(a.spec) - rank(b.spec) || a.i - b.i).map(({ spec }) => spec)
  }
}
