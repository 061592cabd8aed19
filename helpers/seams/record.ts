// Record mode: the live seams, each wrapped so that every exchange is also kept, in order, for
// the fixture set written when the run closes. Redaction happens here, before anything is kept.
import type { Clock } from './clock.ts'
import type { HostClient } from './host.ts'
import { HttpError, type HttpClient } from './http.ts'
import { homedir, tmpdir } from 'node:os'
import { realpathSync } from 'node:fs'
import { scrub } from './redact.ts'
import { keepResponseHeaders, redactRequestHeaders, storedBody } from './stored-exchange.ts'
import { sha256 } from './digest.ts'
import type { HostExchange, HttpExchange } from './recording-files.ts'

export interface Recording {
  http: HttpExchange[]
  host: HostExchange[]
  clock: number[]
  startedAtMs: number
}

function pathOf(url: string): string {
  const u = new URL(url)
  return `${u.pathname}${u.search}`
}

const realOr = (p: string) => {
  try {
    return realpathSync(p)
  } catch {
    return p
  }
}

/**
 * Paths of the recording machine (working folder, temp folder, home, and the node binary that
 * recorded, which is also the reference engine's executable) replaced by `<cwd>`, `<tmp>`, `<home>`,
 * `<node>` in everything kept: a fixture is committed, and no machine's paths belong in it.
 */
export function scrubLocalPaths(text: string, places: ReadonlyArray<readonly [string, string]> = localPlaces()): string {
  let out = text
  for (const [path, name] of places)
    out = out.replace(new RegExp(`${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![A-Za-z0-9_.-])`, 'g'), name)
  return out
}

function localPlaces(): Array<readonly [string, string]> {
  const raw: Array<[string, string]> = [
    [process.cwd(), '<cwd>'],
    [tmpdir(), '<tmp>'],
    [homedir(), '<home>'],
    [process.execPath, '<node>'],
  ]
  const all = raw.flatMap(([p, n]) => [[p, n] as const, [realOr(p), n] as const])
  return all.filter(([p]) => p.length > 1 && p.startsWith('/')).sort((a, b) => b[0].length - a[0].length)
}

/** Records the live seams; `secret` (the API key) is replaced by "[redacted]" in everything kept. */
export function recordingSeams(
  live: { http: HttpClient; host: HostClient; clock: Clock },
  secret: string | null,
): { http: HttpClient; host: HostClient; clock: Clock; recording: Recording } {
  const recording: Recording = { http: [], host: [], clock: [], startedAtMs: live.clock.now() }
  const places = localPlaces()
  const clean = (text: string) => scrubLocalPaths(scrub(text, secret) as string, places)
  let seq = 0
  const at = () => Math.max(0, Date.now() - recording.startedAtMs)
  const http: HttpClient = {
    async request(req) {
      const request = {
        headers: redactRequestHeaders(req.headers),
        ...(req.body !== undefined
          ? {
              sha256: sha256(req.body),
              bytes: Buffer.byteLength(req.body),
              body: JSON.parse(clean(JSON.stringify(storedBody(req.body)))) as unknown,
            }
          : {}),
      }
      const base = { method: req.method, path: pathOf(req.url), request }
      try {
        const res = await live.http.request(req)
        recording.http.push({
          seq: ++seq,
          at: at(),
          ...base,
          response: {
            status: res.status,
            headers: keepResponseHeaders(res.headers),
            body: clean(res.body),
            ...(res.redirects.length ? { redirects: res.redirects.map(pathOf), url: pathOf(res.url) } : {}),
          },
          durationMs: res.durationMs,
        })
        return res
      } catch (error) {
        if (error instanceof HttpError) {
          recording.http.push({
            seq: ++seq,
            at: at(),
            ...base,
            error: { failure: error.failure, message: clean(error.message) },
            durationMs: 0,
          })
        }
        throw error
      }
    },
  }
  const host: HostClient = {
    where: live.host.where,
    async run(req) {
      const r = await live.host.run(req)
      recording.host.push({
        seq: ++seq,
        at: at(),
        command: req.script,
        asDeployUser: req.asDeployUser === true,
        stdout: clean(r.stdout),
        stderr: clean(r.stderr),
        exitCode: r.exitCode,
        ...(r.failure ? { failure: r.failure } : {}),
        durationMs: r.durationMs,
      })
      return r
    },
  }
  const clock: Clock = {
    now() {
      const t = live.clock.now()
      recording.clock.push(t - recording.startedAtMs)
      return t
    },
    sleep: (ms) => live.clock.sleep(ms),
  }
  return { http, host, clock, recording }
}
