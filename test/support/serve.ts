// Helpers for `armproof serve` tests: a served app on 127.0.0.1 with a run the test controls, raw
// HTTP exchanges over a socket (a request target sent byte for byte, as no client library would
// send `/verify/../x`), and the request shapes of Argo Rollouts' web provider and Flagger's webhooks.
import { connect } from 'node:net'
import type { AddressInfo } from 'node:net'
import { RunGate } from '../../helpers/serve/gate.ts'
import { ServeMetrics } from '../../helpers/serve/metrics.ts'
import type { RunResult } from '../../helpers/serve/run.ts'
import { createServe, type ServeDeps, type ServeLimits } from '../../helpers/serve/server.ts'

export const TOKEN = 'tok-0123456789abcdef-serve'

export interface Served {
  url: string
  port: number
  logs: string[]
  runs: Array<{ svc: string; signal: AbortSignal }>
  close(): Promise<void>
}

/** A report text as verify writes one (the fields a controller reads). */
export const reportOf = (svc: string, verdict: string): string =>
  `${JSON.stringify({ svc, knob: 'PREFILL_INTERLEAVE', verdict, steps: [] }, null, 2)}\n`

export function finished(svc: string, verdict: string, exitCode: number): RunResult {
  return { exitCode, signal: null, reportText: reportOf(svc, verdict), stderrTail: '', stopped: null, ms: 5 }
}

export async function serveApp(
  options: {
    targets?: string[]
    run?: ServeDeps['run']
    token?: string | null
    maxRuns?: number
    queue?: number
    limits?: ServeLimits
  } = {},
): Promise<Served> {
  const logs: string[] = []
  const runs: Served['runs'] = []
  const targets = options.targets ?? ['llm-7', 'llm-8']
  const { server } = createServe({
    token: options.token === undefined ? TOKEN : options.token,
    gate: new RunGate(options.maxRuns ?? 4, options.queue ?? 4),
    metrics: new ServeMetrics(),
    log: (l) => void logs.push(l),
    loadTargets: () => ({ targets: { argv: new Map(targets.map((t) => [t, ['--svc', t]])), warnings: [] } }),
    run: async (svc, argv, signal) => {
      runs.push({ svc, signal })
      return options.run ? options.run(svc, argv, signal) : finished(svc, 'green', 0)
    },
    ...(options.limits ? { limits: options.limits } : {}),
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    logs,
    runs,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}

/** Sends `raw` as it is and reads until the server closes; the status line's code (0 when none came) and the whole answer. */
export function rawExchange(
  port: number,
  raw: string | Buffer,
  options: { endAfterWrite?: boolean } = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let text = ''
    socket.on('data', (d) => (text += d.toString('latin1')))
    socket.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNRESET' ? resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text }) : reject(error),
    )
    socket.on('close', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text }))
    socket.write(raw)
    if (options.endAfterWrite !== false) socket.end()
  })
}

/** What Argo Rollouts' `web` metric provider sends: method POST, the template's headers and its body string. */
export function argoRequest(token: string, body = '{"rollout":"llm-7"}'): RequestInit {
  return {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'User-Agent': 'Go-http-client/1.1' },
    body,
  }
}

/** What a Flagger webhook sends: POST, Content-Type application/json, no other header, its payload with the webhook's metadata. */
export function flaggerRequest(metadata: Record<string, string>, phase = 'Progressing'): RequestInit {
  return {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'User-Agent': 'Go-http-client/1.1' },
    body: JSON.stringify({ name: 'podinfo', namespace: 'test', phase, checksum: '6f4c1d9b', metadata }),
  }
}
