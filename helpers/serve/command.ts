// `armproof serve --targets FILE [--listen HOST:PORT]` (and `pnpm serve`): options and token
// checked, the targets file checked as `pnpm verify --targets` checks it (exit 2 with every
// problem, before anything listens), then the server. SIGTERM / SIGINT stop listening, stop the
// runs under way (each request is answered with its interrupted report) and exit 143 / 130.
import { formatDuration } from '../config/duration.ts'
import { readDotenv } from '../config/load.ts'
import { userCwd } from '../cli/verify.ts'
import { loadToken } from './auth.ts'
import { RunGate } from './gate.ts'
import { ServeMetrics } from './metrics.ts'
import { parseServeOptions, serveHelp } from './options.ts'
import { runTarget } from './run.ts'
import { createServe } from './server.ts'
import { loadServedTargets } from './targets.ts'
import { VERSION_TEXT } from '../config/invocation.ts'

export interface ServeIo {
  rawArgs: readonly string[]
  env: Readonly<Record<string, string | undefined>>
  cwd: string
  out: { write(text: string): unknown }
  err: { write(text: string): unknown }
  /** Resolves once serve is listening, with the address it took (a test's --listen 127.0.0.1:0). */
  onListening?: (url: string) => void
  /** Stops the server as SIGTERM does; for an in-process caller. Without it, SIGTERM and SIGINT do. */
  stop?: AbortSignal
}

const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143 } as const

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
    return problems([
      `.env: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); fix it, or set VERIFY_NO_DOTENV=1`,
    ])
  }
  const load = () => loadServedTargets(o.targets, io.env, here, dotenv)
  const first = load()
  if ('problems' in first) return problems(first.problems)
  for (const w of first.targets.warnings) io.err.write(`armproof serve: warning: ${w}\n`)

  const gate = new RunGate(o.maxRuns, o.queue)
  const log = (line: string): void => void io.out.write(`${new Date().toISOString()} ${line}\n`)
  const { server, stopAll } = createServe({
    token: token ? token.token : null,
    gate,
    metrics: new ServeMetrics(),
    log,
    loadTargets: load,
    run: (svc, argv, signal) =>
      runTarget({ svc, argv, env: io.env, cwd: here, timeoutMs: o.runTimeoutMs, signal, line: (l) => log(`[${svc}] ${l}`) }),
  })
  const listened = await new Promise<string | Error>((resolve) => {
    server.once('error', (error) => resolve(error))
    server.listen(o.port, o.host, () => {
      const a = server.address()
      resolve(typeof a === 'object' && a ? `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}` : String(a))
    })
  })
  if (listened instanceof Error)
    return problems([
      `--listen ${o.host}:${o.port}: ${(listened as NodeJS.ErrnoException).code ?? listened.message}${(listened as NodeJS.ErrnoException).code === 'EADDRINUSE' ? ' (another process listens there; pick another port)' : ''}`,
    ])
  log(
    `armproof serve: ${VERSION_TEXT}, listening on ${listened} · ${first.targets.argv.size} target(s) from ${o.targets} · ${token ? 'token required' : 'no token (loopback only)'} · at most ${o.maxRuns} run(s) at once, ${o.queue} waiting · run timeout ${formatDuration(o.runTimeoutMs)}`,
  )
  io.onListening?.(listened)

  const signal = await new Promise<keyof typeof SIGNAL_EXIT>((resolve) => {
    const on = (s: keyof typeof SIGNAL_EXIT) => () => resolve(s)
    if (io.stop) io.stop.addEventListener('abort', on('SIGTERM'), { once: true })
    else {
      process.once('SIGTERM', on('SIGTERM'))
      process.once('SIGINT', on('SIGINT'))
    }
  })
  log(`armproof serve: ${signal}: not accepting requests; stopping ${gate.runningCount} run(s) under way`)
  server.close()
  await stopAll()
  server.closeAllConnections()
  log('armproof serve: stopped')
  return SIGNAL_EXIT[signal]
}
