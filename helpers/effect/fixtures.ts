// Record and replay of an effect run, on the seams verify records with: the live HTTP client
// wrapped by the recorder (helpers/seams/record.ts: redaction, local paths scrubbed), every
// exchange in http.json in verify's format, and effect.json beside it with what was judged
// (the arm, the windows, the selector, the options that decide the queries), the clock readings,
// the verdict, and the digests that make an edited recording refused.
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { writeAtomicSync } from '../seams/atomic.ts'
import type { Clock } from '../seams/clock.ts'
import type { HostClient } from '../seams/host.ts'
import { HttpError, type HttpClient } from '../seams/http.ts'
import { recordingSeams, type Recording } from '../seams/record.ts'
import { sha256, stableJson } from '../seams/digest.ts'
import type { HttpExchange } from '../seams/recording-files.ts'
import { ReplayMiss } from '../seams/replay.ts'

export const EFFECT_FIXTURE_FORMAT = 1

/** What decides the queries and the judgement: a replay judges exactly this again. */
export interface JudgedAsk {
  svc: string
  knob: string
  value: string | null
  previous: string | null
  atMs: number
  from: 'armed-at' | 'report' | 'restart'
  report: string | null
  endpoint: string | null
  prometheusUrl: string
  selector: string
  beforeMs: number
  afterMs: number
  baseline: string
  metrics: string[]
  /** The ids --metrics named (null: none; absent in a recording made before it was kept). */
  named?: string[] | null
  /** The engine profile as written (a report's run.target.engine, or --engine's); absent: radiance's. */
  engine?: unknown
  thresholds: Record<string, number>
  minCount: number
}

export interface EffectRecording {
  format: number
  kind: 'effect'
  ask: JudgedAsk
  recordedAt: string
  tool: { name: string; version: string }
  startedAtMs: number
  clock: number[]
  verdict: string | null
  digests: { 'effect.json': string; 'http.json': string }
}

/** effect runs no host command; the recorder's host seam answers so, should anything ever ask. */
const NO_HOST: HostClient = {
  where: 'none',
  run: async () => {
    throw new Error('the effect command runs no host command')
  },
}

export function recordingHttp(live: HttpClient, clock: Clock): { http: HttpClient; clock: Clock; recording: Recording } {
  const rec = recordingSeams({ http: live, host: NO_HOST, clock }, null)
  return { http: rec.http, clock: rec.clock, recording: rec.recording }
}

const digestOf = (meta: Omit<EffectRecording, 'digests'>) => sha256(stableJson(meta))

export function writeEffectFixtures(
  folder: string,
  meta: Omit<EffectRecording, 'digests' | 'format' | 'kind'>,
  http: readonly HttpExchange[],
): void {
  const httpText = stableJson(http)
  const body = { format: EFFECT_FIXTURE_FORMAT, kind: 'effect' as const, ...meta }
  mkdirSync(folder, { recursive: true })
  writeAtomicSync(join(folder, 'http.json'), httpText)
  writeAtomicSync(
    join(folder, 'effect.json'),
    stableJson({ ...body, digests: { 'effect.json': digestOf(body), 'http.json': sha256(httpText) } }),
  )
}

/** A whole, unedited recording of an effect run, or the problem (one line, exit 2). */
export function readEffectFixtures(folder: string): { meta: EffectRecording; http: HttpExchange[] } | { problem: string } {
  let metaText: string
  let httpText: string
  try {
    metaText = readFileSync(join(folder, 'effect.json'), 'utf8')
    httpText = readFileSync(join(folder, 'http.json'), 'utf8')
  } catch {
    return { problem: `--fixtures: no effect recording at ${folder} (effect.json and http.json); record one with --mode record` }
  }
  let meta: EffectRecording
  let http: HttpExchange[]
  try {
    meta = JSON.parse(metaText) as EffectRecording
    http = JSON.parse(httpText) as HttpExchange[]
  } catch {
    return { problem: `--fixtures: ${folder} holds a file that is not JSON; re-record instead of editing` }
  }
  if (meta?.format !== EFFECT_FIXTURE_FORMAT || meta.kind !== 'effect' || !meta.digests || !Array.isArray(http))
    return {
      problem: `--fixtures: ${join(folder, 'effect.json')} is not an effect recording of format ${EFFECT_FIXTURE_FORMAT}; re-record it`,
    }
  const { digests, ...body } = meta
  if (digests['effect.json'] !== digestOf(body) || digests['http.json'] !== sha256(httpText)) {
    return {
      problem: `--fixtures: fixtures edited since recording: ${folder} no longer matches the digests in effect.json; re-record instead of editing`,
    }
  }
  return { meta, http }
}

/** The seams of a replay: each recorded exchange served once for its request, the clock as recorded; nothing opens a socket. */
export function replayHttp(
  recorded: { meta: EffectRecording; http: readonly HttpExchange[] },
  folder: string,
): { http: HttpClient; clock: Clock; leftovers(): string[] } {
  const queues = new Map<string, HttpExchange[]>()
  for (const e of recorded.http) queues.set(`${e.method} ${e.path}`, [...(queues.get(`${e.method} ${e.path}`) ?? []), e])
  const again = 'the replay asked what the recording did not: it is not the recorded run; re-record it with --mode record'
  const http: HttpClient = {
    async request(req) {
      const u = new URL(req.url)
      const path = `${u.pathname}${u.search}`
      const e = queues.get(`${req.method} ${path}`)?.shift()
      if (!e) throw new ReplayMiss(`No recorded response for ${req.method} ${path.slice(0, 200)} in ${folder}/http.json: ${again}`)
      if (e.error) throw new HttpError(e.error.failure, req.url, e.error.message.replace(/^.*?: /, ''))
      return {
        status: e.response!.status,
        headers: e.response!.headers,
        body: e.response!.body,
        url: req.url,
        redirects: [],
        durationMs: e.durationMs,
      }
    },
  }
  let reading = 0
  const clock: Clock = {
    now() {
      const t = recorded.meta.clock[reading++]
      if (t === undefined)
        throw new ReplayMiss(`the replay read the clock more often than the recording in ${folder}/effect.json: ${again}`)
      return recorded.meta.startedAtMs + t
    },
    sleep: async () => {},
  }
  return { http, clock, leftovers: () => [...queues.values()].flat().map((e) => `http.json #${e.seq} ${e.method} ${e.path.slice(0, 120)}`) }
}

/** The judged options of this invocation that contradict the recording's, one line each. */
export function askDifferences(recorded: JudgedAsk, given: Partial<JudgedAsk>): string[] {
  const out: string[] = []
  for (const [k, v] of Object.entries(given)) {
    const was = recorded[k as keyof JudgedAsk]
    if (v !== undefined && v !== null && stableJson(v) !== stableJson(was))
      out.push(
        `--fixtures: the recording judged ${k} ${JSON.stringify(was)}, not ${JSON.stringify(v)}; replay it as recorded, or record again`,
      )
  }
  return out
}
