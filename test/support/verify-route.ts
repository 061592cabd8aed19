// Which `pnpm verify` runs of the tests may go to a verify host (./verify-host.ts) instead of a
// child process of their own: a host is one node process for many runs, so a run goes there only
// when nothing it is given is read by Node (or by armproof) once per process, at start. Everything
// else is read per run from the env the host puts in place (helpers read `io.env`; host commands
// get the env they are given). A run the host could not give what its child would have had runs as
// a child, as before.
//
// Read once per process:
// - NODE_* (NODE_OPTIONS: preloads such as no-sockets, the fs faults, throw-in, socket logs;
//   NODE_EXTRA_CA_CERTS, read when TLS first loads its roots; NODE_COMPILE_CACHE, NODE_DEBUG…),
//   UV_* (libuv's thread pool), OPENSSL_* / SSL_CERT_* (OpenSSL's config and roots),
//   TZ and the locale (LANG, LC_*: ICU's, at the first date or collator);
// - npm_lifecycle_event and ARMPROOF_LAUNCHER: the launcher messages name (`node bin/verify.ts`,
//   `pnpm verify`, `sh bootstrap.sh verify`) is decided once (helpers/config/invocation.ts).
// A variable that names one of these goes to a child when its value differs from the worker's
// (the host starts with the worker's), and a run goes only to a host whose start had the same of
// them (`startKey`: a test may have stubbed one in the worker since); ARMPROOF_TEST_VERIFY_HOST=0
// sends every run to a child. One exception: a NODE_OPTIONS made only of `--import` preloads of
// PER_RUN_PRELOADS (each reads its env at each use, never at load) goes to a host started with
// that NODE_OPTIONS (its key differs from the worker's hosts': it never serves their runs).
import { isAbsolute, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ONCE = /^(?:NODE_|UV_|OPENSSL_|SSL_CERT_|LC_)|^(?:TZ|LANG|LANGUAGE|npm_lifecycle_event|ARMPROOF_LAUNCHER)$/

const SUPPORT = fileURLToPath(new URL('.', import.meta.url))
/** Preloads that read their env per use (so per run on a host), by absolute path. */
export const PER_RUN_PRELOADS: readonly string[] = [join(SUPPORT, 'no-sockets.ts'), join(SUPPORT, 'fs-faults.ts')]

/** Whether a NODE_OPTIONS is only `--import` of PER_RUN_PRELOADS, each by its absolute path. */
export function perRunPreloads(nodeOptions: string): boolean {
  const words = nodeOptions.trim().split(/\s+/)
  if (words[0] === '') return false
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!
    const file = word.startsWith('--import=') ? word.slice('--import='.length) : word === '--import' ? words[++i] : undefined
    if (file === undefined || !isAbsolute(file) || !PER_RUN_PRELOADS.includes(file)) return false
  }
  return true
}

/**
 * Why a run with `overlay` (what the run adds to the worker's env) cannot go to a host, or null
 * when it can. `base` is the env hosts start with (the worker's).
 */
export function unhostable(overlay: Readonly<Record<string, string>>, base: NodeJS.ProcessEnv = process.env): string | null {
  if (base.ARMPROOF_TEST_VERIFY_HOST === '0') return 'ARMPROOF_TEST_VERIFY_HOST=0'
  for (const [name, value] of Object.entries(overlay)) {
    if (!ONCE.test(name) || base[name] === value) continue
    if (name === 'NODE_OPTIONS' && base.NODE_OPTIONS === undefined && perRunPreloads(value)) continue
    return `${name} is read once per process`
  }
  return null
}

/** What of `env` is read once per process: a host started with it serves only runs whose key is the same. */
export function startKey(env: Readonly<Record<string, string | undefined>>): string {
  return JSON.stringify(
    Object.entries(env)
      .filter(([name, value]) => ONCE.test(name) && value !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  )
}
