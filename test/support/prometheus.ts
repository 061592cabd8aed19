// A real Prometheus for tests (Debian's `prometheus`, 2.42 here): started on 127.0.0.1 on a free
// port, its TSDB and a generated config in a temp dir, scraping the given loopback targets every
// second through static_configs only (no service discovery, no remote write, no alerting: it
// reaches nothing but the targets). stop() kills it, waits for its exit and removes the temp dir;
// a process-exit hook does the same if a test run dies first.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../../engine/launch.ts'

export interface PrometheusOptions {
  /** host:port pairs on loopback, all in one job (none: a Prometheus that only serves its TSDB). */
  targets: readonly string[]
  /**
   * An existing TSDB folder to serve (e.g. blocks backfilled by promtool), used in place and not
   * removed by stop(); its blocks are neither compacted nor expired while it runs.
   */
  tsdb?: string
  /** Default 'radiance'. */
  job?: string
  /** Default '1s'. */
  scrapeInterval?: string
  /** More jobs; `instance` relabels every target's instance label to that one value (replicas behind one host name). */
  jobs?: ReadonlyArray<{ job: string; targets: readonly string[]; instance?: string }>
  /** A remote_read endpoint asked for recent data too (a closed loopback port: every answer then carries a warning, as a partial response does). */
  remoteRead?: string
  /** `--query.lookback-delta`, e.g. '500ms'. */
  lookbackDelta?: string
}

export interface PrometheusHandle {
  /** http://127.0.0.1:<port> */
  url: string
  job: string
  scrapeIntervalMs: number
  /** GET a path of the HTTP API (e.g. '/api/v1/query?query=up'): status and body text. */
  get(pathAndQuery: string): Promise<{ status: number; body: string }>
  /** An instant query; throws unless status is success. */
  query(promql: string): Promise<{ resultType: string; result: unknown[] }>
  /** Resolves once every target has been scraped successfully (`up` == 1); Prometheus 2.42 applies targets on a 5 s tick. */
  waitScraped(timeoutMs: number): Promise<void>
  /** Prometheus' own log so far (for failure messages). */
  log(): string
  /** SIGTERM (through the watchdog), then SIGKILL to the group after 5 s; waits for the exit; removes the temp dir. Idempotent. */
  stop(): Promise<void>
}

const live = new Set<ChildProcess>()
const dirs = new Set<string>()
let hooked = false
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** Kills the watchdog's whole process group (it and prometheus); quiet when already gone. */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal)
  } catch {
    // the group is gone already
  }
}

function hook(): void {
  if (hooked) return
  hooked = true
  process.on('exit', () => {
    for (const c of live) killGroup(c, 'SIGKILL')
    for (const d of dirs) rmSync(d, { recursive: true, force: true })
  })
}

/**
 * A watchdog around prometheus, in its own process group: it passes prometheus' exit code on,
 * and stops prometheus when its stdin (a pipe from this test process) closes: stop() closes it,
 * and so does this process dying in any way, even SIGKILL, so no Prometheus outlives its tests.
 */
const WATCHDOG = [
  'exec 3<&0',
  'prometheus "$@" </dev/null &',
  'p=$!',
  '{ while read -r _ <&3; do :; done; kill -TERM "$p" 2>/dev/null; } &',
  'w=$!',
  'wait "$p"; code=$?',
  'kill "$w" 2>/dev/null',
  'exit "$code"',
].join('\n')

/** The config: static targets only; nothing that reaches beyond them (a remote_read URL only on loopback). */
export function prometheusConfig(
  job: string,
  targets: readonly string[],
  scrapeInterval: string,
  more: Pick<PrometheusOptions, 'jobs' | 'remoteRead'> = {},
): string {
  const jobs = [{ job, targets, instance: undefined as string | undefined }, ...(more.jobs ?? [])]
  for (const j of jobs) {
    for (const t of j.targets)
      if (!/^127\.0\.0\.1:\d{1,5}$/.test(t))
        throw new Error(`startPrometheus: targets must be 127.0.0.1:<port> (tests talk to loopback only), got ${JSON.stringify(t)}`)
    if (!/^[a-z][a-z0-9_-]*$/.test(j.job)) throw new Error(`startPrometheus: job must match [a-z][a-z0-9_-]*, got ${JSON.stringify(j.job)}`)
    if (j.instance !== undefined && !/^[a-z0-9.:-]+$/.test(j.instance))
      throw new Error(`startPrometheus: instance must match [a-z0-9.:-]+, got ${JSON.stringify(j.instance)}`)
  }
  if (!/^\d+(ms|s)$/.test(scrapeInterval))
    throw new Error(`startPrometheus: scrapeInterval like 1s or 500ms, got ${JSON.stringify(scrapeInterval)}`)
  if (more.remoteRead !== undefined && !/^http:\/\/127\.0\.0\.1:\d{1,5}\/[a-z]*$/.test(more.remoteRead))
    throw new Error(`startPrometheus: remoteRead must be http://127.0.0.1:<port>/<path>, got ${JSON.stringify(more.remoteRead)}`)
  return [
    'global:',
    `  scrape_interval: ${scrapeInterval}`,
    `  scrape_timeout: ${scrapeInterval}`,
    `  evaluation_interval: ${scrapeInterval}`,
    ...(more.remoteRead ? ['remote_read:', `  - url: ${more.remoteRead}`, '    read_recent: true'] : []),
    'scrape_configs:',
    ...jobs
      .filter((j) => j.targets.length > 0)
      .flatMap((j) => [
        `  - job_name: ${j.job}`,
        '    static_configs:',
        `      - targets: [${j.targets.map((t) => `'${t}'`).join(', ')}]`,
        ...(j.instance !== undefined
          ? ['    relabel_configs:', '      - target_label: instance', `        replacement: '${j.instance}'`]
          : []),
      ]),
    '',
  ].join('\n')
}

export async function startPrometheus(options: PrometheusOptions): Promise<PrometheusHandle> {
  const job = options.job ?? 'radiance'
  const interval = options.scrapeInterval ?? '1s'
  const config = prometheusConfig(job, options.targets, interval, options)
  hook()
  const dir = mkdtempSync(join(tmpdir(), 'armproof-prom-'))
  dirs.add(dir)
  const configPath = join(dir, 'prometheus.yml')
  writeFileSync(configPath, config)
  const logPath = join(dir, 'prometheus.log')
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const out = openSync(logPath, 'a')
  const child = spawn(
    'sh',
    [
      '-c',
      WATCHDOG,
      'prometheus-watchdog',
      `--config.file=${configPath}`,
      `--storage.tsdb.path=${options.tsdb ?? join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
      ...(options.lookbackDelta ? [`--query.lookback-delta=${options.lookbackDelta}`] : []),
      ...(options.tsdb
        ? ['--storage.tsdb.retention.time=100y', '--storage.tsdb.min-block-duration=2h', '--storage.tsdb.max-block-duration=2h']
        : []),
    ],
    { stdio: ['pipe', out, out], cwd: dir, detached: true },
  )
  child.stdin!.on('error', () => {})
  closeSync(out)
  live.add(child)
  child.on('error', () => {})
  child.once('exit', () => live.delete(child))
  const alive = (): boolean => child.exitCode === null && child.signalCode === null
  const log = (): string => {
    try {
      return readFileSync(logPath, 'utf8')
    } catch {
      return ''
    }
  }
  let stopping: Promise<void> | null = null
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (alive()) {
        const exited = once(child, 'exit')
        child.stdin!.end() // the watchdog sends prometheus SIGTERM and waits for it
        await Promise.race([exited, sleep(5000)])
      }
      if (alive()) {
        const exited = once(child, 'exit')
        killGroup(child, 'SIGKILL')
        await Promise.race([exited, sleep(3000)])
      }
      rmSync(dir, { recursive: true, force: true })
      dirs.delete(dir)
    })()
    return stopping
  }
  const get = async (pathAndQuery: string): Promise<{ status: number; body: string }> => {
    const res = await fetch(`${url}${pathAndQuery}`, { signal: AbortSignal.timeout(5000) })
    return { status: res.status, body: await res.text() }
  }
  const deadline = Date.now() + 15_000
  while (true) {
    if (!alive()) {
      await stop()
      throw new Error(`prometheus exited with ${child.exitCode ?? child.signalCode} before /-/ready:\n${log().slice(-2000)}`)
    }
    try {
      if ((await get('/-/ready')).status === 200) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      const tail = log().slice(-2000)
      await stop()
      throw new Error(`prometheus at ${url}: /-/ready not 200 within 15 s:\n${tail}`)
    }
    await sleep(50)
  }
  const query = async (promql: string): Promise<{ resultType: string; result: unknown[] }> => {
    const res = await get(`/api/v1/query?query=${encodeURIComponent(promql)}`)
    const json = JSON.parse(res.body) as { status: string; error?: string; data: { resultType: string; result: unknown[] } }
    if (json.status !== 'success') throw new Error(`prometheus query ${promql}: ${json.error ?? res.body}`)
    return json.data
  }
  return {
    url,
    job,
    scrapeIntervalMs: Number(interval.replace(/m?s$/, '')) * (interval.endsWith('ms') ? 1 : 1000),
    get,
    query,
    async waitScraped(timeoutMs) {
      // Every job's targets: replicas relabelled to one label set count once in `up`.
      const want =
        options.targets.length +
        (options.jobs ?? []).reduce((n, j) => n + (j.instance !== undefined ? Math.min(1, j.targets.length) : j.targets.length), 0)
      const until = Date.now() + timeoutMs
      while (true) {
        const { result } = await query('up == 1')
        if (result.length >= want) return
        if (Date.now() > until)
          throw new Error(
            `prometheus at ${url}: ${result.length} of ${want} targets scraped up within ${timeoutMs} ms:\n${log().slice(-1500)}`,
          )
        await sleep(100)
      }
    },
    log,
    stop,
  }
}

/** `promtool check metrics` on a page (stdin): its exit code (0 clean, 3 lint problems only, 1 the page does not parse) and output. */
export function promtool(page: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = execFile('promtool', ['check', 'metrics'], { timeout: 10_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out: `${stdout}${stderr}` })
    })
    child.stdin!.end(page)
  })
}
