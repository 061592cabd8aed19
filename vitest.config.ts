import { defineConfig } from 'vitest/config'
import type { TestProjectInlineConfiguration } from 'vitest/config'
import { SUITES_PROJECT } from './helpers/cli/suites-project.ts'
import { TEST_COMPILE_CACHE } from './test/support/compile-cache.ts'
import { fastFiles } from './test/support/fast.ts'
import { SlowFirst } from './test/support/slow-first.ts'

// Three projects share this file:
// - `unit`: armproof's own tests (`pnpm test`), under test/: the whole suite, CI's.
// - `fast`: the inner loop (`pnpm test:fast`): the unit project's files that start no child
//   engine, sshd, podman, Prometheus or llama-server, by the rule of test/support/fast.ts.
// - `suites`: the proof steps, run by `pnpm verify` or straight from env
//   (`VERIFY_SVC=… VERIFY_KNOB=… pnpm vitest run suites`).
/** The unit project: every test file under test/, and what they all run with. */
const UNIT = {
  name: 'unit',
  include: ['test/**/*.test.ts'],
  // The compile cache kept from growing; a run with a TMPDIR of its own ends red if the tests leave anything in it;
  // the verify hosts every worker shares (torn down first, its folder gone before the temp folder is checked);
  // the report schemas' validators, compiled once for every worker.
  globalSetup: [
    'test/support/compile-cache.ts',
    'test/support/temp-check.ts',
    'test/support/verify-host-broker.ts',
    'test/support/report-validators.ts',
  ],
  // After each file: the temp folders its tests made (test/support/temp-dir.ts) are removed.
  setupFiles: ['test/support/temp-dir-sweep.ts'],
  testTimeout: 60_000,
  hookTimeout: 60_000,
  // The fault matrix judges most rows in-process, side by side: they wait on the engines'
  // budgets (health, meter window), not the CPU.
  maxConcurrency: 6,
  // A worker lives for the whole run and allocates a lot (engines' pages, reports, property
  // tests): a 16 MB young generation (V8 sizes it smaller by default here) scavenges less
  // often and promotes less. Measured on 2 cores, whole suite, A/B pairs back to back:
  // 129–139 CPU-s against 142–159 without it (32 MB: 138–143; 64 MB: 151).
  execArgv: ['--max-semi-space-size=16'],
  // A worker keeps the modules it loaded from one test file to the next (helpers, undici,
  // the engine's server): a third less CPU for the whole suite on 2 cores. No test file
  // leaves global state behind (a stubbed env is unstubbed, PATH restored, the one dns
  // patch answers only for names under .invalid), and every file passes in either mode.
  isolate: false,
  // Node imports the test files and what they import itself (type stripping, with the
  // compile cache), as the suites project does: no vite transform of each file and no
  // module sent to the workers over RPC. No test mocks a module (vi.mock), which needs them.
  experimental: { viteModuleRunner: false, nodeLoader: false },
  // Every test must assert something (a test that cannot fail proves nothing).
  expect: { requireAssertions: true },
} satisfies TestProjectInlineConfiguration['test']

export default defineConfig({
  test: {
    reporters: ['default', './test/support/closing-line.ts'],
    // Most unit files wait on child processes and timers (engines, meter windows, progress lines),
    // not the CPU: five files at a time keep a 2-core machine busy while some of them wait. Whole
    // suite on 2 cores: wall per CPU-s 0.51–0.53 (5 runs, 131–218 CPU-s, all green) against
    // 0.54–0.58 with four (0.5 is no idle core).
    maxWorkers: 5,
    // The long files start first, also in a clean clone without vitest's results cache.
    sequence: { sequencer: SlowFirst },
    // Every node process the tests start (pnpm verify, writeback, the reference engine) reuses
    // compiled code from the previous ones (kept from growing without end: the unit project's
    // globalSetup).
    env: { NODE_COMPILE_CACHE: TEST_COMPILE_CACHE },
    projects: [{ test: UNIT }, { test: { ...UNIT, name: 'fast', include: fastFiles() } }, { test: SUITES_PROJECT }],
  },
})
