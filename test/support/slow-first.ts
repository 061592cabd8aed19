// The order `pnpm test` starts its files in. vitest runs the longest files first only when its
// results cache knows their durations, and a clean clone (CI) has none: it falls back to file
// size, which starts the long waits (fleets, Prometheus scrapes, the fault matrix's engines) late
// and leaves them running alone at the end. These files, longest first (each file's duration in a
// `CI=true pnpm test` on 2 cores, paths under test/), start before the rest; the rest keep vitest's
// own order. The files that mostly wait on timers (prometheus-verify, prometheus-meter, verify-host,
// read-ahead-cancel, reads-dropped: scrapes, meter windows, a host's idle eviction) start early,
// each beside the long files that keep the CPU busy: started side by side late in the run, they
// left both cores idle for some 6 s of it (/proc/stat each second).
// Re-measured 2026-12-02 (vitest's JSON reporter, `CI=true`, 2 cores shared with other work): the
// real llama-server's file (67 s), the series tie through Prometheus and the 10 s files that had
// been left out (mistakes-later, script-engine, compile-cache, in-process-pool, page-memory) had
// been starting after 120 s of a 195 s run and ending it alone.
// Re-measure with `pnpm test` when the list seems stale: an outdated list costs time,
// never a result.
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

export const SLOW_FIRST: readonly string[] = [
  'real/llama-server.test.ts',
  'e2e/fault-matrix.test.ts',
  'e2e/prometheus-verify.test.ts',
  'repo/package.test.ts',
  'e2e/prometheus-tie.test.ts',
  'writeback/faults.test.ts',
  'cli/verify-host.test.ts',
  'e2e/fault-matrix-profiles.test.ts',
  'e2e/record-replay.test.ts',
  'e2e/conventions.test.ts',
  'e2e/prometheus-meter.test.ts',
  'engine/radiance.test.ts',
  'repo/ci-examples.test.ts',
  'e2e/fleet.test.ts',
  'e2e/serve.test.ts',
  'seams/read-ahead-cancel.test.ts',
  'e2e/mistakes-later.test.ts',
  'cli/contain.test.ts',
  'e2e/ssh.test.ts',
  'effect/property.test.ts',
  'e2e/verify.test.ts',
  'e2e/interrupt-progress-cli.test.ts',
  'e2e/reads-dropped.test.ts',
  'e2e/script-engine.test.ts',
  'e2e/fault-matrix-heavy.test.ts',
  'e2e/fail-fast.test.ts',
  'e2e/secrets.test.ts',
  'bin/compile-cache.test.ts',
  'cli/stock-pool-fallback.test.ts',
  'e2e/profile-replay.test.ts',
  'cli/in-process-pool.test.ts',
  'effect/prometheus.test.ts',
  'writeback/command.test.ts',
  'e2e/prometheus-faults.test.ts',
  'e2e/prometheus-exemplar.test.ts',
  'steps/meter/page-memory.test.ts',
  'engine/shims.test.ts',
  'scripts/reference-doc.test.ts',
  'fleet/plan.test.ts',
  'steps/meter/judge.test.ts',
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
    return sorted
      .map((spec, i) => ({ spec, i }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.i - b.i)
      .map(({ spec }) => spec)
  }
}
