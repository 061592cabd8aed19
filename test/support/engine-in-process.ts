// The reference engine's HTTP surface served in this process: the same flags, state and server
// (engine/flags.ts, engine/state.ts, engine/server.ts) a launched engine serves, without its
// process. For tests of what the engine answers over HTTP only; anything that needs the process
// (its argv and pidof, its log, the host shims, a port that never opens) launches it
// (engine/launch.ts startEngine).
import type { Server } from 'node:http'
import { once } from 'node:events'
import { readFlags } from '../../engine/flags.ts'
import { buildServer } from '../../engine/server.ts'
import { createState } from '../../engine/state.ts'

export interface InProcessEngine {
  baseUrl: string
  stop(): Promise<void>
}

/** Serves `argv` (radiance flags, `--fault X` included) on a free loopback port; rejects on flags the engine refuses. */
export async function serveInProcess(argv: readonly string[]): Promise<InProcessEngine> {
  const parsed = await readFlags(argv)
  if (parsed.kind !== 'config')
    throw new Error(
      `serveInProcess: the engine refuses ${argv.join(' ')}: ${parsed.kind === 'error' ? parsed.errors.join('; ') : parsed.kind}`,
    )
  if (parsed.config.loadClosedMs > 0) throw new Error("serveInProcess: a closed port while loading is the launched engine's (startEngine)")
  let listenedAt = Number.POSITIVE_INFINITY
  const served = await listenOnLoopback(buildServer(createState(parsed.config), () => listenedAt))
  listenedAt = Date.now()
  return { baseUrl: served.baseUrl, stop: served.stop }
}

/** Listens on a free loopback port; `stop()` closes every connection, then the server (idempotent). */
export async function listenOnLoopback(server: Server): Promise<{ baseUrl: string; port: number; stop(): Promise<void> }> {
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  let stopping: Promise<void> | undefined
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    stop() {
      stopping ??= (async () => {
        server.closeAllConnections()
        server.close()
        await once(server, 'close').catch(() => undefined)
      })()
      return stopping
    },
  }
}
