// A real engine's captured output (fixtures/real/<engine>/<commit>/): its files read as they are,
// a captured HTTP answer (`curl -i`: status line, headers, a blank line, the body) read back into
// armproof's HttpResponse, and an HTTP seam that answers each path from one of those captures, so
// the steps' own readers run against what the real engine served.
import { readFileSync } from 'node:fs'
import type { HttpClient, HttpResponse } from '../../helpers/seams/http.ts'

/** The folder of one corpus, e.g. `corpusDir('vllm', '9aaf83ef5')`. */
export const corpusDir = (engine: string, commit: string): URL => new URL(`../../fixtures/real/${engine}/${commit}/`, import.meta.url)

/** One file of a corpus, as text. */
export const corpusText = (dir: URL, file: string): string => readFileSync(new URL(file, dir), 'utf8')

/** A captured answer: `HTTP/1.1 200 OK`, its headers (names lower-cased), then the body after the first blank line. */
export function capturedAnswer(text: string): { status: number; headers: Record<string, string>; body: string } {
  const normal = text.replaceAll('\r\n', '\n')
  const split = normal.indexOf('\n\n')
  const head = split < 0 ? normal : normal.slice(0, split)
  const [statusLine, ...lines] = head.split('\n')
  const status = /^HTTP\/[\d.]+ (\d{3})/.exec(statusLine ?? '')
  if (!status) throw new Error(`not a captured HTTP answer: ${JSON.stringify(statusLine)}`)
  const headers = Object.fromEntries(
    lines.map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()] as const),
  )
  // curl -i ends the body with the newline it printed after it; a body of its declared length is the one served.
  const rest = split < 0 ? '' : normal.slice(split + 2)
  const length = headers['content-length'] === undefined ? undefined : Number(headers['content-length'])
  const body = length === undefined ? rest : Buffer.from(rest).subarray(0, length).toString('utf8')
  return { status: Number(status[1]), headers, body }
}

/** An answer for one path: a captured file (status, headers and body), or parts given apart (a body-only capture). */
export type CorpusRoute = { status: number; headers?: Record<string, string>; body: string }

/** An HTTP seam answering `routes[path]` (query string included, else the path alone); any other path throws. `asked` keeps each request. */
export function corpusHttp(routes: Readonly<Record<string, CorpusRoute>>): HttpClient & { asked: string[] } {
  const asked: string[] = []
  return {
    asked,
    async request(req): Promise<HttpResponse> {
      const url = new URL(req.url)
      asked.push(`${req.method} ${url.pathname}${url.search}`)
      const route = routes[`${url.pathname}${url.search}`] ?? routes[url.pathname]
      if (!route) throw new Error(`the corpus holds no answer for ${req.method} ${req.url}`)
      return { status: route.status, headers: route.headers ?? {}, body: route.body, url: req.url, redirects: [], durationMs: 1 }
    },
  }
}
