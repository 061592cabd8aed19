// Preloaded into `pnpm verify` (NODE_OPTIONS=--import) by test/e2e/verify.test.ts: at the first
// HTTP request of a proof step (undici's request channel, once vitest's runtime is there, so not
// the first contact made before the run), one promise is rejected that nothing handles, as a bug
// in a step would. The run must say so in its report and must not come out green.
import { subscribe, unsubscribe } from 'node:diagnostics_channel'

const CHANNEL = 'undici:request:create'

function onRequest(): void {
  if (!('__vitest_worker__' in globalThis)) return
  unsubscribe(CHANNEL, onRequest)
  void Promise.reject(new Error('armproof-test: a rejection nothing handles'))
}
subscribe(CHANNEL, onRequest)
