// Loaded with NODE_OPTIONS=--import into a replay run (and its vitest workers): any attempt to
// open a socket is written to $ARMPROOF_SOCKET_LOG and refused. Both are read at each attempt, not
// at load: every verify host (./verify-host-pool.ts) loads this preload at its start and serves
// many runs, each with its own env, and the refusal is in force only while the env in place names
// this file in its NODE_OPTIONS, as in a child started with it (./verify-route.ts, `imports`).
import { appendFileSync } from 'node:fs'
import net from 'node:net'
import { fileURLToPath } from 'node:url'
import { imports } from './verify-route.ts'

const SELF = fileURLToPath(import.meta.url)
const connect = net.Socket.prototype.connect
net.Socket.prototype.connect = function guarded(this: net.Socket, ...args: unknown[]) {
  if (!imports(SELF)) return (connect as (...a: unknown[]) => net.Socket).apply(this, args)
  const log = process.env.ARMPROOF_SOCKET_LOG
  if (log) appendFileSync(log, `${process.pid} connect ${JSON.stringify(args[0])}\n`)
  this.destroy(new Error('armproof test: replay must not open a socket'))
  return this
} as typeof connect
