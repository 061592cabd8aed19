// Replay mode: the seams fed only from a fixture set. No socket is opened; each recorded
// exchange is served once, in recorded order per request; clock readings come back as recorded,
// so a 4-minute meter watch replays in a moment and reaches the same decisions.
import type { Clock } from './clock.ts'
import type { Target } from '../config/load.ts'
import type { HostClient, HostResult } from './host.ts'
import { HttpError, type HttpClient } from './http.ts'
import { sha256 } from './digest.ts'
import type { FixtureSet, HostExchange, HttpExchange } from './recording-files.ts'
import type { Choices } from './choices.ts'
import { quoteAll } from '../config/shell.ts'
import { command } from '../config/invocation.ts'

/**
 * The recording lacks what this run asked for (an exchange, a clock reading, a choice). What is
 * missing and the command that records the run again travel as fields (vitest hands a test's error
 * over with its own fields, helpers/report/collect.ts reads them): the message is for people.
 */
export class ReplayMiss extends Error {
  readonly code = 'ARMPROOF_REPLAY_MISS'
  override readonly name = 'ReplayMiss'
  /** What the recording lacks, where (file). */
  readonly missing: string
  /** The command that records this run again, where the run's target is known. */
  readonly reRecord: string | null
  constructor(missing: string, reRecord: string | null = null) {
    super(reRecord ? `${missing}. Re-record: ${reRecord}` : missing)
    this.missing = missing
    this.reRecord = reRecord
  }
}

/** What a replay miss carries, read from a ReplayMiss or from the plain object vitest made of one; null for any other error. */
export function replayMissOf(error: { readonly name?: string | undefined }): { missing: string; reRecord: string | null } | null {
  if (error.name !== 'ReplayMiss') return null
  const { missing, reRecord } = error as { missing?: unknown; reRecord?: unknown }
  if (typeof missing !== 'string') return null
  return { missing, reRecord: typeof reRecord === 'string' ? reRecord : null }
}

/** The replay ended with recorded exchanges nobody asked for: the run took another path than the recording. */
export class ReplayLeftovers extends Error {
  readonly code = 'ARMPROOF_REPLAY_LEFTOVERS'
  override readonly name = 'ReplayLeftovers'
}

function queueBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const map = new Map<string, T[]>()
  for (const item of items) {
    const k = key(item)
    map.set(k, [...(map.get(k) ?? []), item])
  }
  return map
}

/** The command that records this run again, for a replay miss. */
export function reRecordCommand(target: Target): string {
  const args = [
    '--svc',
    target.svc,
    '--knob',
    target.knob,
    ...(target.value !== null ? ['--value', target.value] : []),
    '--base-url',
    target.baseUrl ?? '<url>',
    '--mode',
    'record',
    '--fixtures',
    target.fixtures,
  ]
  return `${command('verify')} ${quoteAll(args)}`
}

export function replaySeams(
  set: FixtureSet,
  target: Target,
  folder: string,
): { http: HttpClient; host: HostClient; clock: Clock; choices: Choices; leftovers(): string[] } {
  const httpKey = (method: string, path: string, bodySha?: string) => `${method} ${path}${bodySha ? ` ${bodySha}` : ''}`
  const httpQueues = queueBy(set.http, (e: HttpExchange) => httpKey(e.method, e.path, e.request.sha256))
  const hostQueues = queueBy(set.host, (e: HostExchange) => `${e.asDeployUser ? 'deploy:' : ''}${e.command}`)
  const miss = (what: string, file: string) => new ReplayMiss(`No recorded ${what} in ${folder}/${file}`, reRecordCommand(target))
  const base = target.baseUrl ?? set.meta.baseUrl

  const http: HttpClient = {
    async request(req) {
      const u = new URL(req.url)
      const path = `${u.pathname}${u.search}`
      const exchange = httpQueues.get(httpKey(req.method, path, req.body !== undefined ? sha256(req.body) : undefined))?.shift()
      if (!exchange) throw miss(`response for ${req.method} ${path}`, 'http.json')
      if (exchange.error) throw new HttpError(exchange.error.failure, req.url, exchange.error.message.replace(/^.*?: /, ''))
      const res = exchange.response!
      return {
        status: res.status,
        headers: res.headers,
        body: res.body,
        url: res.url ? `${base}${res.url}` : req.url,
        redirects: (res.redirects ?? []).map((p) => `${base}${p}`),
        durationMs: exchange.durationMs,
        // When the recording received it (its `at`, from the recording's start).
        receivedAtMs: set.meta.startedAtMs + exchange.at,
      }
    },
  }
  const host: HostClient = {
    where: `${set.meta.host} (replayed)`,
    async run(req): Promise<HostResult> {
      const exchange = hostQueues.get(`${req.asDeployUser ? 'deploy:' : ''}${req.script}`)?.shift()
      if (!exchange) throw miss(`host command \`${req.script}\``, 'host.json')
      return {
        command: exchange.command,
        stdout: exchange.stdout,
        stderr: exchange.stderr,
        exitCode: exchange.exitCode,
        ...(exchange.failure ? { failure: exchange.failure } : {}),
        durationMs: exchange.durationMs,
      }
    },
  }
  let reading = 0
  const clock: Clock = {
    now() {
      const t = set.meta.clock[reading++]
      if (t === undefined)
        throw new ReplayMiss(
          `the replay read the clock more often than the recording (${set.meta.clock.length} readings in ${folder}/run.json): the run took another path`,
          reRecordCommand(target),
        )
      return set.meta.startedAtMs + t
    },
    sleep: async () => {},
  }
  const choices: Choices = {
    pick(name, options) {
      const value = set.meta.choices[name]
      if (!options.includes(value as (typeof options)[number]))
        throw new ReplayMiss(`the recording has no usable choice "${name}" in ${folder}/run.json`, reRecordCommand(target))
      return value as (typeof options)[number]
    },
  }
  /** Recorded exchanges never served, named by file, sequence number and request. */
  const leftovers = () => [
    ...[...httpQueues.values()].flat().map((e) => `http.json #${e.seq} ${e.method} ${e.path}`),
    ...[...hostQueues.values()]
      .flat()
      .map((e) => `host.json #${e.seq} ${e.command.length > 60 ? `${e.command.slice(0, 60)}…` : e.command}`),
  ]
  return { http, host, clock, choices, leftovers }
}
