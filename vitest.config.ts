import { defineConfig } from 'vitest/config'
import { SUITES_PROJECT } from './suites/project.ts'

// Two projects share this file:
// - `unit`: armproof's own tests (`pnpm test`), under test/.
// - `suites`: the proof steps, run by `pnpm verify` or straight from env
//   (`VERIFY_SVC=… VERIFY_KNOB=… pnpm vitest run suites`).
export default defineConfig({
  test: {
    reporters: ['default', './test/support/closing-line.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          // The fault matrix runs whole `pnpm verify` processes side by side; more than this on
          // a 2-core machine starves the engines' loopback timings.
          maxConcurrency: 8,
        },
      },
      { test: SUITES_PROJECT },
    ],
  },
})
