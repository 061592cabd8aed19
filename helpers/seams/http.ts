// The HTTP seam. Suites reach the endpoint only through an HttpClient, so record and replay
// see every exchange. Every request is bounded in time and in body size, and the API key stays
// with its origin: no hop (a redirect, or a request to any other URL) carries `Authorization` to
// an origin other than the base URL's.
import { pipeline } from 'node:stream'
import type { Agent } from 'undici'
import { loadRequestParts, type RequestParts } from './undici-parts.ts'

// undici is loaded by the first live request, not with this module: a replay, --help and a
// refused configuration never load it; and then only the parts of it armproof uses
// (./undici-parts.ts), not its index. node:tls and node:zlib too are taken where they are used
// (process.getBuiltinModule): `pnpm writeback` imports this module (the replay seam's HttpError)
// and makes no request, and loading those two cost ~10 ms of its ~80 ms start.
let undici: Promise<RequestParts> | undefined
const loadUndici = (): Promise<RequestParts> => (undici ??= loadRequestParts())

/** The live client's connection pool, made on its first request. */
interface LazyAgent {
  get(): Promise<Agent>
  close(): Promise<void>
}

function lazyAgent(options: ConstructorParameters<typeof Agent>[0]): LazyAgent {
  let agent: Promise<Agent> | undefined
  return {
    get: () => (agent ??= loadUndici().then((u) => new u.Agent(options))),
    close: async () => {
      if (agent) await (await agent).close()
    },
  }
}

export interface HttpRequest {
  /** HEAD: first contact asks only for a status (of /metrics), never a scrape. */
  method: 'GET' | 'POST' | 'HEAD'
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
  /**
   * When the answer was complete, on this machine's clock (ms since the epoch); in a replay, as
   * recorded. With `durationMs` it dates the request, e.g. against a reply's own `created`.
   */
  receivedAtMs?: number
}

/**
 * `tls`: the certificate is not trusted; `not-tls`: an https:// URL whose port answered the TLS
 * handshake with something else (plain HTTP); `redirect`: a redirect armproof cannot follow (its
 * Location is no URL, or not http(s)).
 */
export type HttpFailure = 'refused' | 'timeout' | 'reset' | 'truncated' | 'dns' | 'too-large' | 'tls' | 'not-tls' | 'redirect' | 'other'

const FAILURE_WORDS: Partial<Record<HttpFailure, string>> = {
  refused: 'connection refused',
  tls: 'TLS verification failed',
  'not-tls': 'no TLS on the other end of the handshake',
  redirect: 'a redirect that cannot be followed',
}

export class HttpError extends Error {
  readonly code: string
  readonly failure: HttpFailure
  readonly url: string
  /** The system's own code under the failure (ENOTFOUND, EAI_AGAIN, DEPTH_ZERO_SELF_SIGNED_CERT, …), when known. */
  readonly sysCode: string | undefined
  constructor(failure: HttpFailure, url: string, detail: string, sysCode?: string) {
    super(`${FAILURE_WORDS[failure] ?? failure} at ${url}: ${detail}`)
    this.code = `ARMPROOF_HTTP_${failure.toUpperCase().replace('-', '_')}`
    this.failure = failure
    this.url = url
    this.sysCode = sysCode
  }
}

/** Certificate checks that failed: the endpoint's certificate is not trusted by this process. */
export const TLS_VERIFY_CODES: ReadonlySet<string> = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_REVOKED',
  'INVALID_CA',
])

/**
 * A TLS client handshake answered by something that is not TLS: OpenSSL reads the first bytes of
 * a plain-HTTP answer ("HTTP/1.1 400") as a record header of a wrong version or an absurd length.
 */
export const NOT_TLS_CODES: ReadonlySet<string> = new Set([
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'ERR_SSL_PACKET_LENGTH_TOO_LONG',
  'ERR_SSL_HTTP_REQUEST',
  'EPROTO',
])

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
  if (code === 'ECONNREFUSED') return new HttpError('refused', url, detail, code)
  if (TLS_VERIFY_CODES.has(code)) return new HttpError('tls', url, detail, code)
  if (NOT_TLS_CODES.has(code) && url.startsWith('https:')) return new HttpError('not-tls', url, detail, code)
  if (
    ['TimeoutError', 'AbortError', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT'].includes(code)
  ) {
    return new HttpError('timeout', url, detail)
  }
  if (code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') return new HttpError('truncated', url, detail)
  if (['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE', 'UND_ERR_CLOSED'].includes(code)) return new HttpError('reset', url, detail)
  if (['ENOTFOUND', 'EAI_AGAIN'].includes(code)) return new HttpError('dns', url, detail, code)
  return new HttpError('other', url, detail, code)
}

async function once(agent: LazyAgent, req: HttpRequest, url: string): Promise<Omit<HttpResponse, 'redirects' | 'url' | 'durationMs'>> {
  const signal = AbortSignal.timeout(req.timeoutMs)
  try {
    const [{ request }, dispatcher] = await Promise.all([loadUndici(), agent.get()])
    const res = await request(dispatcher, url, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      signal,
      headersTimeout: req.timeoutMs,
      bodyTimeout: req.timeoutMs,
    })
    const max = req.maxBodyBytes ?? DEFAULT_MAX_BODY
    const headers: Record<string, string> = {}
    for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v
    // A gzip body (asked for with Accept-Encoding: gzip, as Prometheus does on /metrics) is decoded
    // here, and the cap counts the decoded bytes: a small bomb is as refused as a large page.
    const gzip = /^\s*(x-)?gzip\s*$/i.test(headers['content-encoding'] ?? '')
    // pipeline, not pipe: a body that breaks off (reset, timeout) ends the decoder with its error.
    const source: AsyncIterable<Buffer> = gzip
      ? pipeline(res.body, process.getBuiltinModule('node:zlib').createGunzip(), () => {})
      : (res.body as AsyncIterable<Buffer>)
    const chunks: Buffer[] = []
    let size = 0
    for await (const chunk of source) {
      size += chunk.length
      if (size > max) {
        res.body.destroy()
        throw new HttpError(
          'too-large',
          url,
          `the body is larger than armproof's own cap of ${max} bytes${gzip ? ' (decoded)' : ''}; the cap is armproof's, not the engine's`,
        )
      }
      chunks.push(chunk)
    }
    if (gzip) {
      delete headers['content-encoding']
      delete headers['content-length']
    }
    return { status: res.statusCode, headers, body: Buffer.concat(chunks).toString('utf8') }
  } catch (error) {
    if ((error as { code?: unknown })?.code === 'Z_DATA_ERROR' || (error as { code?: unknown })?.code === 'Z_BUF_ERROR') {
      throw new HttpError('other', url, `the body says gzip but does not decode (${(error as Error).message})`, 'Z_DATA_ERROR')
    }
    throw classify(error, url)
  }
}

/** The headers of one hop: `Authorization` only where the key belongs (the base URL's origin). */
export function headersFor(
  url: string,
  headers: Record<string, string> | undefined,
  keyOrigin: string,
): Record<string, string> | undefined {
  if (!headers || new URL(url).origin === new URL(keyOrigin).origin) return headers
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !/^(proxy-)?authorization$/i.test(k)))
}

/** Where a redirect's Location leads; an HttpError ('redirect') when it is no http(s) URL (e.g. `http://host:8000:8000/health/`). */
export function redirectTarget(location: string, from: string, status: number): string {
  let next: URL
  try {
    next = new URL(location, from)
  } catch (error) {
    throw new HttpError(
      'redirect',
      from,
      `HTTP ${status} redirects to ${JSON.stringify(location.slice(0, 200))}, which is not a URL (${(error as Error).message})`,
    )
  }
  if (next.protocol !== 'http:' && next.protocol !== 'https:')
    throw new HttpError('redirect', from, `HTTP ${status} redirects to ${JSON.stringify(location.slice(0, 200))}, which is not http(s)`)
  return next.href
}

export interface LiveHttpOptions {
  /** Extra CAs (--ca-file), added to the trusted ones. */
  caPem?: string
  /**
   * The origin the API key belongs to (the base URL's). Without it, each request's own URL's
   * origin: a redirect elsewhere then drops the key, as the Fetch standard and curl do.
   */
  keyOrigin?: string
}

/** The live client: undici, no keep-alive reuse surprises across polls, redirects by hand. */
export function liveHttp(options: LiveHttpOptions = {}): HttpClient & { close(): Promise<void> } {
  // --ca-file adds to the trusted CAs (Node's default store, NODE_EXTRA_CA_CERTS included); it never replaces them.
  const ca = options.caPem ? [...process.getBuiltinModule('node:tls').getCACertificates('default'), options.caPem] : undefined
  const agent = lazyAgent({ connect: { timeout: 10_000, ...(ca ? { ca } : {}) }, keepAliveTimeout: 1000 })
  return {
    async request(req) {
      const started = performance.now()
      const redirects: string[] = []
      const keyOrigin = options.keyOrigin ?? new URL(req.url).origin
      let url = req.url
      for (let hop = 0; ; hop++) {
        const res = await once(agent, { ...req, headers: headersFor(url, req.headers, keyOrigin) }, url)
        const location = res.headers.location
        if (req.followRedirects && [301, 302, 303, 307, 308].includes(res.status) && location && hop < 5) {
          redirects.push(url)
          url = redirectTarget(location, url, res.status)
          continue
        }
        return { ...res, url, redirects, durationMs: Math.round(performance.now() - started), receivedAtMs: Date.now() }
      }
    },
    close: () => agent.close(),
  }
}
