// Which `pnpm verify` runs of the tests may go to a verify host (./verify-host.ts) instead of a
// child process of their own: a host is one node process for many runs, so a run goes there only
// when nothing it is given is read by Node (or by armproof) once per process, at start. Everything
// else is read per run from the env the host puts in place (helpers read `io.env`; host commands
// get the env they are given). A run the host could not give what its child would have had runs as
// a child, as before.
//
// Read once per process:
// - NODE_* (NODE_OPTIONS: preloads such as throw-in, suite-process; NODE_EXTRA_CA_CERTS, read when TLS first loads its roots; NODE_COMPILE_CACHE, NODE_DEBUG…),
//   UV_* (libuv's thread pool), OPENSSL_* / SSL_CERT_* (OpenSSL's config and roots),
//   TZ and the locale (LANG, LC_*: ICU's, at the first date or collator);
// - npm_lifecycle_event and ARMPROOF_LAUNCHER: the launcher messages name (`node bin/verify.ts`,
//   `pnpm verify`, `sh bootstrap.sh verify`) is decided once (helpers/config/invocation.ts).
// A variable that names one of these goes to a child when its value differs from the calling
// worker's (a host starts with the env of the run it was started for, the worker's env and that
// run's own), and a run goes only to a host whose start had the same of them (`startKey`: a test may have stubbed one in the worker since); ARMPROOF_TEST_VERIFY_HOST=0
// sends every run to a child. One exception: a NODE_OPTIONS made only of `--import` preloads of
// PER_RUN_PRELOADS goes to any host of its key: every host loads those preloads at its start, and
// each is in force only in a run whose own NODE_OPTIONS names it (`imports`, read at each use),
// as it is in a child started with that NODE_OPTIONS; such a NODE_OPTIONS is left out of the key.
import { isAbsolute, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ONCE = /^(?:NODE_|UV_|OPENSSL_|SSL_CERT_|LC_)|^(?:TZ|LANG|LANGUAGE|npm_lifecycle_event|ARMPROOF_LAUNCHER)$/

const SUPPORT = fileURLToPath(new URL('.', import.meta.url))
/** Preloads that read their env per use (so per run on a host), by absolute path. */
export const PER_RUN_PRELOADS: readonly string[] = [join(SUPPORT, 'no-sockets.ts'), join(SUPPORT, 'fs-faults.ts')]

/** The files a NODE_OPTIONS imports (`--import=F`, `--import F`), as written, and whether it holds nothing else. */
function importsOf(nodeOptions: string | undefined): { files: string[]; only: boolean } {
  const words = (nodeOptions ?? '')
    .trim()
    .split(/\s+/)
    .filter((w) => w !== '')
  const files: string[] = []
  let only = true
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!
    const file = word.startsWith('--import=') ? word.slice('--import='.length) : word === '--import' ? words[++i] : undefined
    if (file === undefined) only = false
    else files.push(file)
  }
  return { files, only }
}

/** Whether a NODE_OPTIONS is only `--import` of PER_RUN_PRELOADS, each by its absolute path. */
function perRunPreloads(nodeOptions: string): boolean {
  const { files, only } = importsOf(nodeOptions)
  return only && files.length > 0 && files.every((f) => isAbsolute(f) && PER_RUN_PRELOADS.includes(f))
}

/**
 * Whether `preload` (an absolute path) is in force now: this process's NODE_OPTIONS, as it is at
 * this moment (a host puts each run's env in place), imports it, by its path or one relative to
 * the working folder. What no-sockets.ts and fs-faults.ts ask at each use.
 */
export function imports(preload: string, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): boolean {
  return importsOf(env.NODE_OPTIONS).files.some((file) => resolve(cwd, file) === preload)
}

/**
 * Why a run with `overlay` (what the run adds to the worker's env) cannot go to a host, or null
 * when it can. `base` is the calling worker's env (what its child, and a host started for it, start with).
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
      .filter(([name, value]) => ONCE.test(name) && value !== undefined && !(name === 'NODE_OPTIONS' && perRunPreloads(value)))
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  )
}
