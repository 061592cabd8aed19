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
// sends every run to a child.

const ONCE = /^(?:NODE_|UV_|OPENSSL_|SSL_CERT_|LC_)|^(?:TZ|LANG|LANGUAGE|npm_lifecycle_event|ARMPROOF_LAUNCHER)$/

/**
 * Why a run with `overlay` (what the run adds to the worker's env) cannot go to a host, or null
 * when it can. `base` is the env hosts start with (the worker's).
 */
export function unhostable(overlay: Readonly<Record<string, string>>, base: NodeJS.ProcessEnv = process.env): string | null {
  if (base.ARMPROOF_TEST_VERIFY_HOST === '0') return 'ARMPROOF_TEST_VERIFY_HOST=0'
  for (const [name, value] of Object.entries(overlay))
    if (ONCE.test(name) && base[name] !== value) return `${name} is read once per process`
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
