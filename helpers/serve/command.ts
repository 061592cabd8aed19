// `armproof serve --targets FILE [--listen HOST:PORT]` (and `pnpm serve`): options and token
// checked, the targets file checked as `pnpm verify --targets` checks it (exit 2 with every
// problem, before anything listens), then the server. SIGTERM / SIGINT stop listening, answer
// every request waiting for a slot with 503 (nothing new starts), stop the runs under way (each
// request is answered with its interrupted report) and exit 143 / 130; a second signal ends the
// runs' process groups at once. Runs end with serve whatever ends it (helpers/cli/served-run.ts).
import { createServer, type Server } from 'node:http'
import { formatDuration } from '../config/duration.ts'
import { dotenvProblem, readDotenv } from '../config/load.ts'
import { userCwd } from '../cli/verify.ts'
import { loadToken, TokenSource } from './auth.ts'
import { RunGate } from './gate.ts'
import { ServeMetrics } from './metrics.ts'
import { parseServeOptions, serveHelp } from './options.ts'
import { runTarget, sweepRunDirs, type RunResult } from './run.ts'
import { createServe, DEFAULT_LIMITS } from './server.ts'
import { loadServedTargets, loadTargetsOffThread, offThreadOr, TargetsCache, type TargetsView } from './targets.ts'
import { VERSION_TEXT } from '../config/invocation.ts'

export interface ServeIo {
  rawArgs: readonly string[]
  env: Readonly<Record<string, string | undefined>>
  cwd: string
  out: { write(text: string): unknown }
  err: { write(text: string): unknown }
  /** Resolves once serve is listening, with the address it took (a test's --listen 127.0.0.1:0). */
  onListening?: (url: string, metricsUrl?: string) => void
  /** Stops the server as SIGTERM does; for an in-process caller. Without it, SIGTERM and SIGINT do. */
  stop?: AbortSignal
}

const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143 } as const

/** How long the answers of a stop may take to leave before the last connections are cut. */
const DRAIN_MS = 2000

function listenOn(server: Server, host: string, port: number): Promise<string | Error> {
  return new Promise<string | Error>((resolve) => {
    server.once('error', (error) => resolve(error))
    server.listen(port, host, () => {
      const a = server.address()
      resolve(typeof a === 'object' && a ? `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}` : String(a))
    })
  })
}

/** Runs until stopped; the exit code (0 never: serving ends only by a signal, or 2 at start). */
export async function serve(io: ServeIo): Promise<number> {
  const problems = (lines: readonly string[]): number => {
    io.err.write(
      `armproof serve: ${lines.length} problem${lines.length === 1 ? '' : 's'}; not serving.\n${lines.map((l) => `  - ${l}\n`).join('')}`,
    )
    return 2
  }
  const here = userCwd(io)
  const parsed = parseServeOptions(io.rawArgs, io.env, here)
  if (!parsed.ok) {
    if (parsed.help || parsed.version) {
      io.out.write(parsed.help ? `${serveHelp()}\n` : `${VERSION_TEXT}\n`)
      return 0
    }
    return problems(parsed.problems)
  }
  const o = parsed.options
  const token = o.noToken ? null : loadToken(o.tokenFile, io.env)
  if (token && 'problem' in token) return problems([token.problem])
  let dotenv: string | undefined
  try {
    dotenv = readDotenv(io.cwd, io.env)
  } catch (error) {
    return problems([dotenvProblem(error)])
  }
  const load = () => loadServedTargets(o.targets, io.env, here, dotenv)
  const first = load()
  if ('file' in first) return problems(first.file.problems)
  if (first.problems.length > 0) return problems(first.problems)
  for (const w of first.targets.warnings) io.err.write(`armproof serve: warning: ${w}\n`)

  const log = (line: string): void => void io.out.write(`${new Date().toISOString()} ${line}\n`)
  const swept = sweepRunDirs()
  if (swept > 0) log(`armproof serve: removed ${swept} run folder(s) an earlier serve left behind`)
  const gate = new RunGate(o.maxRuns, o.queue, o.queueWaitMs)
  const metrics = new ServeMetrics()
  const said = (view: TargetsView): void => {
    const l = view.loaded
    if ('file' in l) {
      log(`armproof serve: the targets file changed and cannot be used (no run starts until it is fixed):`)
      for (const p of l.file.problems) log(`  - ${p}`)
      return
    }
    log(
      `armproof serve: the targets file was read again: ${l.targets.argv.size} target(s)${l.targets.broken.size > 0 ? `, ${l.targets.broken.size} with problems (their requests are refused, the others run):` : ''}`,
    )
    for (const p of l.problems) log(`  - ${p}`)
  }
  // At start on this thread (nothing is answered yet); each change after that in a thread of its
  // own, so that checking a large file holds no answer; on this thread should that thread fail.
  const reload = offThreadOr(() => loadTargetsOffThread(o.targets, io.env, here, dotenv), load, log)
  const targets = new TargetsCache(o.targets, reload, first, { onChange: said })
  const tokenSource = token ? new TokenSource(token.token, o.tokenFile, io.env, log, 1000, () => metrics.failed('token_file')) : null
  const children = new Set<number>()
  const { server, stopAll, probes } = createServe({
    token: tokenSource,
    gate,
    metrics,
    log,
    targets: () => targets.current(),
    targetCount: () => targets.last.count,
    keepRunsMs: o.keepRunsMs,
    limits: {
      ...DEFAULT_LIMITS,
      headersTimeoutMs: o.headerTimeoutMs,
      requestTimeoutMs: o.requestTimeoutMs,
      maxConnections: o.maxConnections,
      maxConnectionsPerClient: o.maxConnectionsPerClient,
    },
    run: async (svc, argv, signal): Promise<RunResult> => {
      let pid: number | undefined
      try {
        return await runTarget({
          svc,
          argv,
          env: io.env,
          cwd: here,
          timeoutMs: o.runTimeoutMs,
          signal,
          line: (l) => log(`[${svc}] ${l}`),
          started: (p) => {
            pid = p
            children.add(p)
            metrics.started()
            log(`armproof serve: ${svc}: verify runs as pid ${p} (its own process group)`)
          },
        }).then((r) => {
          if (r.exitCode === null && r.signal === null && r.reportText === null) metrics.failed('run_start')
          return r
        })
      } catch (error) {
        // The run's folder could not be made (a full or read-only temp folder): serve's own failure.
        metrics.failed('run_start')
        log(`armproof serve: ${svc}: the run could not be started (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
        return {
          exitCode: null,
          signal: null,
          reportText: null,
          stderrTail: 'serve could not start the run (its temp folder); see its log',
          stopped: null,
          ms: 0,
        }
      } finally {
        if (pid !== undefined) children.delete(pid)
      }
    },
  })
  const listened = await listenOn(server, o.host, o.port)
  if (listened instanceof Error)
    return problems([
      `--listen ${o.host}:${o.port}: ${(listened as NodeJS.ErrnoException).code ?? listened.message}${(listened as NodeJS.ErrnoException).code === 'EADDRINUSE' ? ' (another process listens there; pick another port)' : ''}`,
    ])
  let probeServer: Server | null = null
  let probeUrl: string | undefined
  if (o.metricsListen) {
    probeServer = createServer({ headersTimeout: 5000, requestTimeout: 5000, maxHeaderSize: 8 * 1024 }, probes)
    probeServer.maxConnections = 64
    const at = await listenOn(probeServer, o.metricsListen.host, o.metricsListen.port)
    if (at instanceof Error) {
      server.close()
      return problems([
        `--metrics-listen ${o.metricsListen.host}:${o.metricsListen.port}: ${(at as NodeJS.ErrnoException).code ?? at.message}`,
      ])
    }
    probeUrl = at
  }
  log(
    `armproof serve: ${VERSION_TEXT}, listening on ${listened}${probeUrl ? ` (probes and metrics on ${probeUrl})` : ''} · ${first.targets.argv.size} target(s) from ${o.targets} · ${tokenSource ? 'token required' : 'no token (loopback only)'} · at most ${o.maxRuns} run(s) at once, ${o.queue} waiting up to ${formatDuration(o.queueWaitMs)} · run timeout ${formatDuration(o.runTimeoutMs)} · connections ${o.maxConnections}, ${o.maxConnectionsPerClient} per client`,
  )
  io.onListening?.(listened, probeUrl)

  const signals: Array<keyof typeof SIGNAL_EXIT> = []
  let nextSignal: ((s: keyof typeof SIGNAL_EXIT) => void) | undefined
  const on = (s: keyof typeof SIGNAL_EXIT) => () => {
    signals.push(s)
    nextSignal?.(s)
  }
  const sigterm = on('SIGTERM')
  const sigint = on('SIGINT')
  if (io.stop) io.stop.addEventListener('abort', sigterm, { once: true })
  else {
    process.on('SIGTERM', sigterm)
    process.on('SIGINT', sigint)
  }
  const signal = await new Promise<keyof typeof SIGNAL_EXIT>((resolve) => {
    if (signals.length > 0) resolve(signals[0]!)
    else nextSignal = resolve
  })
  // A second signal: no more waiting for the runs' reports; their groups are killed now.
  nextSignal = (s) => {
    log(`armproof serve: ${s} again: killing ${children.size} run(s) now`)
    for (const pid of children) {
      try {
        process.kill(-pid, 'SIGKILL')
      } catch {
        // gone already
      }
    }
  }
  log(
    `armproof serve: ${signal}: not accepting requests; ${gate.queuedCount} waiting answered 503; stopping ${gate.runningCount} run(s) under way`,
  )
  server.close()
  probeServer?.close()
  await stopAll()
  // The answers just sent leave before the last connections are cut.
  server.closeIdleConnections()
  await new Promise<void>((resolve) => {
    const t = setTimeout(resolve, DRAIN_MS)
    t.unref()
    server.once('close', () => {
      clearTimeout(t)
      resolve()
    })
  })
  server.closeAllConnections()
  probeServer?.closeAllConnections()
  if (!io.stop) {
    process.off('SIGTERM', sigterm)
    process.off('SIGINT', sigint)
  }
  log('armproof serve: stopped')
  return SIGNAL_EXIT[signal]
}
