// Another process asking a verify host broker (./verify-host-broker.ts) for one run, as a second
// test worker would (test/cli/verify-host.test.ts): argv is the broker's address and then the run's
// args for bin/verify.ts; the run gets this process's env and the repository's folder. Prints the
// broker's answer as one line of JSON.
import { fileURLToPath } from 'node:url'
import { brokerRun } from './verify-host-broker.ts'

const [address, ...args] = process.argv.slice(2)
const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined))
const run = await brokerRun(address!, { args, env, cwd: fileURLToPath(new URL('../..', import.meta.url)), timeoutMs: 60_000 })
process.stdout.write(`${JSON.stringify(run)}\n`)
