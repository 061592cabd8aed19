// Preloaded into `pnpm verify` (NODE_OPTIONS=--import) by test/cli/stock-pool-fallback.test.ts: as verify
// exits, one line says whether vitest's worker runtime ran in its process (the in-process pool) or
// not (a worker vitest forked). Only verify's own process says it: a forked worker, which loads the
// same preloads, has an IPC channel to its parent (process.send) and stays quiet.
export const SUITE_PROCESS_LINE = /^armproof-test: vitest's worker runtime ran in verify's process: (true|false)$/m

if (!process.send)
  process.on(
    'exit',
    () =>
      void process.stderr.write(`armproof-test: vitest's worker runtime ran in verify's process: ${'__vitest_worker__' in globalThis}\n`),
  )
