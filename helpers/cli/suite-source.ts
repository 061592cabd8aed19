// The arm suite's file, loaded by the in-process pool (./in-process-pool.ts) as the JavaScript it
// is. vitest imports a test file with a query of its own (`suites/arm.test.ts?vitest=<time>`, so
// a rerun imports it afresh), and Node's compile cache keys stripped TypeScript by that URL: in
// every run the cache misses, and Node loads its TypeScript stripper (amaro, some 30 ms of CPU)
// for one file that holds no TypeScript syntax. The suite file is kept free of it
// (test/cli/suite-source.test.ts: stripping its types changes nothing), so it is loaded as plain
// JavaScript; every module it imports keeps its cached, stripped form (no query on those).
import type nodeModule from 'node:module'
import { fileURLToPath } from 'node:url'
import { ARM_SUITE } from './suites-project.ts'

/** The suite file's URL without a query (the checkout's .ts; when installed, dist's .js, which needs nothing). */
export const ARM_SUITE_URL = new URL(`../../${ARM_SUITE}`, import.meta.url).href

type LoadHook = NonNullable<Parameters<typeof nodeModule.registerHooks>[0]['load']>

/** A load hook: the suite file (under any query), read as TypeScript, is given to Node as a JavaScript module. */
export const suiteAsJavaScript: LoadHook = (url, context, nextLoad) => {
  const loaded = nextLoad(url, context)
  const at = url.indexOf('?')
  if (loaded.format !== 'module-typescript' || (at < 0 ? url : url.slice(0, at)) !== ARM_SUITE_URL) return loaded
  return { ...loaded, format: 'module' }
}

/** The suite file's path, for the test that keeps it free of TypeScript syntax. */
export const ARM_SUITE_PATH = fileURLToPath(ARM_SUITE_URL)
