// Loaded with NODE_OPTIONS=--import into a replay run (and its vitest workers): any attempt to
// open a socket is written to $ARMPROOF_SOCKET_LOG and refused. The log is read at each attempt,
// not at load: a verify host (./verify-host.ts) started with this preload serves many runs, each
// with its own env (./verify-route.ts, PER_RUN_PRELOADS).
import { appendFileSync } from 'node:fs'
import net from 'node:net'

const connect = net.Socket.prototype.connect
net.Socket.prototype.connect = function guarded(this: net.Socket, ...args: unknown[]) {
  const log = process.env.ARMPROOF_SOCKET_LOG
  if (log) appendFileSync(log, `${process.pid} connect ${JSON.stringify(args[0])}\n`)
  this.destroy(new Error('armproof test: replay must not open a socket'))
  return this
} as typeof connect
