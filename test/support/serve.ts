// Helpers for `armproof serve` tests: a served app on 127.0.0.1 with a run the test controls, raw
// HTTP exchanges over a socket (a request target sent byte for byte, as no client library would
// send `/verify/../x`), and the request shapes of Argo Rollouts' web provider and Flagger's webhooks.
import { connect } from 'node:net'
import type { AddressInfo } from 'node:net'
import { RunGate } from '../../helpers/serve/gate.ts'
import { ServeMetrics } from '../../helpers/serve/metrics.ts'
import type { RunResult } from '../../helpers/serve/run.ts'
import { createServe, DEFAULT_LIMITS, type ServeDeps, type ServeLimits, type ServeServer } from '../../helpers/serve/server.ts'
import type { TargetsView } from '../../helpers/serve/targets.ts'

export const TOKEN = 'tok-0123456789abcdef-serve'

export interface Served {
  url: string
  port: number
  logs: string[]
  runs: Array<{ svc: string; signal: AbortSignal }>
  metrics: ServeMetrics
  served: ServeServer
  close(): Promise<void>
}

/** The view of a targets file whose targets are all good. */
export const goodTargets = (targets: readonly string[]): TargetsView => ({
  loaded: { targets: { argv: new Map(targets.map((t) => [t, ['--svc', t]])), broken: new Map(), warnings: [] }, problems: [] },
  count: targets.length,
})

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
    token?: ServeDeps['token']
    maxRuns?: number
    queue?: number
    queueWaitMs?: number
    keepRunsMs?: number
    quietLogMs?: number
    limits?: Partial<ServeLimits>
    /** The targets as serve sees them (each call: one request's look); `targets` makes a good file of those. */
    view?: () => TargetsView | Promise<TargetsView>
  } = {},
): Promise<Served> {
  const logs: string[] = []
  const runs: Served['runs'] = []
  const targets = options.targets ?? ['llm-7', 'llm-8']
  const metrics = new ServeMetrics()
  const view = options.view ?? (() => goodTargets(targets))
  const served = createServe({
    token: options.token === undefined ? TOKEN : options.token,
    gate: new RunGate(options.maxRuns ?? 4, options.queue ?? 4, options.queueWaitMs ?? 60_000),
    metrics,
    log: (l) => void logs.push(l),
    targets: view,
    run: async (svc, argv, signal) => {
      runs.push({ svc, signal })
      return options.run ? options.run(svc, argv, signal) : finished(svc, 'green', 0)
    },
    limits: { ...DEFAULT_LIMITS, ...options.limits },
    ...(options.keepRunsMs !== undefined ? { keepRunsMs: options.keepRunsMs } : {}),
    ...(options.quietLogMs !== undefined ? { quietLogMs: options.quietLogMs } : {}),
  })
  const { server } = served
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    logs,
    runs,
    metrics,
    served,
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
  options: { endAfterWrite?: boolean; from?: string } = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', ...(options.from ? { localAddress: options.from } : {}) })
    let text = ''
    socket.on('data', (d) => (text += d.toString('latin1')))
    // The final answer's status: interim ones (102 Processing) come before it.
    const status = (): number => Number(/(?:^|\r\n\r\n)HTTP\/1\.1 ([2-5]\d{2})/.exec(text)?.[1] ?? 0)
    socket.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNRESET' ? resolve({ status: status(), text }) : reject(error),
    )
    socket.on('close', () => resolve({ status: status(), text }))
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
