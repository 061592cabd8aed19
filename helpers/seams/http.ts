// The HTTP seam. Suites reach the endpoint only through an HttpClient, so record and replay
// see every exchange. Every request is bounded in time and in body size.
import { Agent, request } from 'undici'

export interface HttpRequest {
  method: 'GET' | 'POST'
  url: string
  headers?: Record<string, string>
  body?: string
  timeoutMs: number
  /** Follow 301/302/303/307/308 up to 5 hops (each hop is its own exchange). */
  followRedirects?: boolean
  maxBodyBytes?: number
}

export interface HttpResponse {
  status: number
  headers: Record<string, string>
  body: string
  /** The URL that answered, after redirects. */
  url: string
  redirects: string[]
  durationMs: number
}

export type HttpFailure = 'refused' | 'timeout' | 'reset' | 'truncated' | 'dns' | 'too-large' | 'other'

export class HttpError extends Error {
  readonly code: string
  readonly failure: HttpFailure
  readonly url: string
  constructor(failure: HttpFailure, url: string, detail: string) {
    super(`${failure === 'refused' ? 'connection refused' : failure} at ${url}: ${detail}`)
    this.code = `ARMPROOF_HTTP_${failure.toUpperCase().replace('-', '_')}`
    this.failure = failure
    this.url = url
  }
}

export interface HttpClient {
  request(req: HttpRequest): Promise<HttpResponse>
}

const DEFAULT_MAX_BODY = 256 * 1024 * 1024

function causeCode(error: unknown): string {
  let e: unknown = error
  for (let depth = 0; depth < 5 && e && typeof e === 'object'; depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string' && code !== 'UND_ERR') return code
    const name = (e as { name?: unknown }).name
    if (name === 'TimeoutError' || name === 'AbortError') return name
    e = (e as { cause?: unknown }).cause
  }
  return 'UNKNOWN'
}

export function classify(error: unknown, url: string): HttpError {
  if (error instanceof HttpError) return error
  const code = causeCode(error)
  const detail = `${code}${error instanceof Error && error.message ? ` (${error.message})` : ''}`
  if (code === 'ECONNREFUSED') return new HttpError('refused', url, detail)
  if (['TimeoutError', 'AbortError', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT'].includes(code)) {
    return new HttpError('timeout', url, detail)
  }
  if (code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') return new HttpError('truncated', url, detail)
  if (['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE', 'UND_ERR_CLOSED'].includes(code)) return new HttpError('reset', url, detail)
  if (['ENOTFOUND', 'EAI_AGAIN'].includes(code)) return new HttpError('dns', url, detail)
  return new HttpError('other', url, detail)
}

async function once(agent: Agent, req: HttpRequest, url: string): Promise<Omit<HttpResponse, 'redirects' | 'url' | 'durationMs'>> {
  const signal = AbortSignal.timeout(req.timeoutMs)
  try {
    const res = await request(url, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      dispatcher: agent,
      signal,
      headersTimeout: req.timeoutMs,
      bodyTimeout: req.timeoutMs,
    })
    const max = req.maxBodyBytes ?? DEFAULT_MAX_BODY
    const chunks: Buffer[] = []
    let size = 0
    for await (const chunk of res.body) {
      size += chunk.length
      if (size > max) {
        res.body.destroy()
        throw new HttpError('too-large', url, `body larger than ${max} bytes`)
      }
      chunks.push(chunk as Buffer)
    }
    const headers: Record<string, string> = {}
    for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v
    return { status: res.statusCode, headers, body: Buffer.concat(chunks).toString('utf8') }
  } catch (error) {
    throw classify(error, url)
  }
}

/** The live client: undici, no keep-alive reuse surprises across polls, redirects by hand. */
export function liveHttp(): HttpClient & { close(): Promise<void> } {
  const agent = new Agent({ connect: { timeout: 10_000 }, keepAliveTimeout: 1000 })
  return {
    async request(req) {
      const started = performance.now()
      const redirects: string[] = []
      let url = req.url
      for (let hop = 0; ; hop++) {
        const res = await once(agent, req, url)
        const location = res.headers.location
        if (req.followRedirects && [301, 302, 303, 307, 308].includes(res.status) && location && hop < 5) {
          redirects.push(url)
          url = new URL(location, url).href
          continue
        }
        return { ...res, url, redirects, durationMs: Math.round(performance.now() - started) }
      }
    },
    close: () => agent.close(),
  }
}
