// The `suites` vitest project, in one place: vitest.config.ts lists it beside the unit tests, and
// `pnpm verify` starts it directly (without loading the config file, which costs a bundling pass).
export const SUITES_PROJECT = {
  name: 'suites',
  include: ['suites/**/*.test.ts'],
  globalSetup: ['suites/_setup.ts'],
  fileParallelism: false,
  // Steps carry their own budgets (health budget, meter window, probe and host timeouts); vitest
  // adds no timeout of its own on top.
  testTimeout: 0,
  hookTimeout: 0,
}
