// A small TCP proxy in front of an engine: what a Service, a load balancer or a gateway on the
// same host looks like from the engine's side. Its listening socket belongs to the process that
// started it (never a process of the engine's name), and it forwards every connection as it is.
import { once } from 'node:events'
import { connect, createServer, type Socket } from 'node:net'
import { freePort, releasePort } from './proc.ts'

export interface ProxyHandle {
  baseUrl: string
  port: number
  stop(): Promise<void>
}

/** Listens on a free loopback port and forwards each connection to 127.0.0.1:`upstreamPort`. */
export async function startProxy(upstreamPort: number): Promise<ProxyHandle> {
  const port = await freePort()
  const open = new Set<Socket>()
  const server = createServer((client) => {
    const upstream = connect(upstreamPort, '127.0.0.1')
    for (const s of [client, upstream]) {
      open.add(s)
      s.on('close', () => open.delete(s))
      s.on('error', () => {
        client.destroy()
        upstream.destroy()
      })
    }
    client.pipe(upstream)
    upstream.pipe(client)
  })
  server.listen(port, '127.0.0.1')
  await once(server, 'listening')
  let stopping: Promise<void> | undefined
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    stop() {
      stopping ??= (async () => {
        for (const s of open) s.destroy()
        server.close()
        await once(server, 'close').catch(() => undefined)
        releasePort(port)
      })()
      return stopping
    },
  }
}
