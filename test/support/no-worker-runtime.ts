// Preloaded into `pnpm verify` (NODE_OPTIONS=--import) by test/cli/stock-pool-fallback.test.ts: `vitest/worker`
// resolves to a module without `init`, as a vitest whose worker runtime changed would give. The
// in-process pool must see it (helpers/cli/in-process-pool.ts `workerRuntime`) and the suite run
// under vitest's forks pool instead, said in one line. Only that one specifier is redirected: the
// forked worker loads vitest's runtime by its own paths.
import { registerHooks } from 'node:module'

const CHANGED = `data:text/javascript,${encodeURIComponent('export function runBaseTests(method, state, traces) {}\nexport function setupEnvironment(context) {}\n')}`

registerHooks({
  resolve: (specifier, context, next) => (specifier === 'vitest/worker' ? { url: CHANGED, shortCircuit: true } : next(specifier, context)),
})
