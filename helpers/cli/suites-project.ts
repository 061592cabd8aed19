// The `suites` vitest project, in one place: vitest.config.ts lists it beside the unit tests, and
// `pnpm verify` starts it directly (without loading the config file, which costs a bundling pass).
//
// The installed package runs the suites compiled to JavaScript (dist/suites/*.js, built by
// `pnpm build`), the checkout runs the .ts sources: the extension follows this file's own.
export const SUITES_EXT = import.meta.url.endsWith('.js') ? 'js' : 'ts'
/** The proof steps' file, relative to the suites' root (the checkout, or dist/ when installed). */
export const ARM_SUITE = `suites/arm.test.${SUITES_EXT}`

export const SUITES_PROJECT = {
  name: 'suites',
  include: [`suites/**/*.test.${SUITES_EXT}`],
  globalSetup: [`suites/_setup.${SUITES_EXT}`],
  fileParallelism: false,
  // Steps carry their own budgets (health budget, meter window, probe and host timeouts); vitest
  // adds no timeout of its own on top.
  testTimeout: 0,
  hookTimeout: 0,
  // The suites and the helpers they load are plain Node TypeScript (type stripping), or JavaScript
  // when installed: Node imports them itself, with its compile cache, instead of vite transforming
  // every file again in each run (about 10% of a run's CPU).
  experimental: { viteModuleRunner: false, nodeLoader: false },
}
