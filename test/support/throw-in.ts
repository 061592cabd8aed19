// Preloaded into `pnpm verify` (NODE_OPTIONS=--import) by test/cli/contain.test.ts: one phase inside
// the suites throws, as a bug there would, so that the test sees it contained (one line, the
// report written, the contract's exit code, no stack trace). ARMPROOF_TEST_THROW_IN says where:
// `setup`: reading the --ca-file (VERIFY_CA_FILE) inside vitest's runtime, as the suites open the
// run's seams, throws (first contact, before the runtime, reads it fine); `step`: the judge of
// probe.tools throws. Never part of the product: only this test file preloads it.
import fs from 'node:fs'
import { syncBuiltinESMExports } from 'node:module'
import { JUDGES } from '../../helpers/steps/judges.ts'

const where = process.env.ARMPROOF_TEST_THROW_IN

if (where === 'setup') {
  const ca = process.env.VERIFY_CA_FILE
  const read = fs.readFileSync
  fs.readFileSync = function readFileSync(this: unknown, path: unknown, ...rest: unknown[]) {
    if ('__vitest_worker__' in globalThis && String(path) === ca)
      throw new TypeError('armproof-test: the CA file cannot be read inside the suites')
    return (read as (...a: unknown[]) => unknown).call(this, path, ...rest)
  } as typeof fs.readFileSync
  // The ESM named exports (`import { readFileSync } from 'node:fs'`) follow the patched function.
  syncBuiltinESMExports()
}

if (where === 'step') {
  ;(JUDGES as Record<string, unknown>)['probe.tools'] = async () => {
    throw new TypeError('armproof-test: a judge that throws')
  }
}
