// Preloaded into `pnpm verify` (NODE_OPTIONS=--import) by test/cli/in-process-pool.test.ts:
// `vitest/worker` cannot be resolved at all, as with a vitest that no longer exports that entry
// point. The suite must run under vitest's forks pool instead, said in one line
// (helpers/cli/run-suites.ts). Only that one specifier fails: the forked worker loads vitest's
// runtime by its own paths.
import { registerHooks } from 'node:module'

registerHooks({
  resolve: (specifier, context, next) => {
    if (specifier !== 'vitest/worker') return next(specifier, context)
    throw Object.assign(new Error('Package subpath \'./worker\' is not defined by "exports" in node_modules/vitest/package.json'), {
      code: 'ERR_PACKAGE_PATH_NOT_EXPORTED',
    })
  },
})
