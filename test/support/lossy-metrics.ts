// A relay of one engine's /metrics for Prometheus that loses the scrapes once traffic flows: it
// passes every page on until one shows a finished request, then answers 503 to that scrape and every later one. So
// Prometheus holds `up == 0` for the rest of the run while the engine (the pid armproof read) keeps
// serving: the case of scrapes lost between Prometheus and a healthy target.
import { once } from 'node:events'
import { createServer } from 'node:http'
import { freePort, releasePort } from '../../engine/proc.ts'

export interface LossyMetrics {
  /** host:port Prometheus scrapes. */
  host: string
  /** Scrapes answered 503 so far. */
  lost(): number
  stop(): Promise<void>
}

/** A finished request on a prometheus_client page: `vllm:request_success_total{…finished_reason="stop"…} N` with N above 0. */
const TRAFFIC = /^vllm:request_success_total\{[^}]*finished_reason="stop"[^}]*\} (?!0\.0$)\S+$/m

export async function startLossyMetrics(engineBaseUrl: string): Promise<LossyMetrics> {
  const port = await freePort()
  let failing = false
  let lost = 0
  const server = createServer((req, res) => {
    if (failing) {
      lost++
      res.writeHead(503).end('scrape lost\n')
      return
    }
    fetch(`${engineBaseUrl}${req.url ?? '/metrics'}`, { signal: AbortSignal.timeout(5000) })
      .then(async (r) => {
        const body = await r.text()
        failing ||= TRAFFIC.test(body)
        if (failing) {
          lost++
          res.writeHead(503).end('scrape lost\n')
          return
        }
        res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'text/plain' }).end(body)
      })
      .catch(() => res.writeHead(502).end())
  })
  server.listen(port, '127.0.0.1')
  await once(server, 'listening')
  return {
    host: `127.0.0.1:${port}`,
    lost: () => lost,
    async stop() {
      server.closeAllConnections()
      server.close()
      await once(server, 'close').catch(() => undefined)
      releasePort(port)
    },
  }
}
