// Where a test's `pnpm verify` run goes when it may go to a verify host (./verify-route.ts): to the
// pool of the whole `pnpm test` (./verify-host-broker.ts, a globalSetup of the unit project) when
// its address is known and it answers; else (a script, a vitest run without that globalSetup, the
// broker gone) to this process's own pool of HOSTS (./verify-host-pool.ts), reused by every later
// file of the worker (the unit project does not isolate files) and ended with it. Either way null
// when every host is busy: the run takes a child of its own.
import { BROKER_ENV, brokerRun } from './verify-host-broker.ts'
import { HostPool, type HostedRun } from './verify-host-pool.ts'

/**
 * Hosts of this process's own pool: a file's runs side by side (a fleet's shards, the secrets runs)
 * each take one; a run that finds them all busy takes a child of its own rather than wait (runs
 * wait on engines' budgets, so queueing them would cost the file its wall time).
 */
const HOSTS = 3

let own: HostPool | undefined
/** The broker's address that did not answer once: gone for the rest of this process. */
let unreachable: string | undefined

/** This process's own pool (started on first use). */
function ownPool(): HostPool {
  return (own ??= new HostPool(HOSTS))
}

/**
 * One run on a host: the args as given to bin/verify.ts, the env the child would have had
 * (wholesale), its folder; null when every host is busy (nothing ran).
 */
export async function hostRun(
  args: readonly string[],
  env: Record<string, string>,
  cwd: string,
  timeoutMs: number,
): Promise<HostedRun | null> {
  const address = process.env[BROKER_ENV]
  if (address && address !== unreachable) {
    const run = await brokerRun(address, { args, env, cwd, timeoutMs })
    if (run !== 'unreachable') return run
    unreachable = address
  }
  return ownPool().run(args, env, cwd, timeoutMs)
}
