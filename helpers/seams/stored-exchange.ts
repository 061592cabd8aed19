// An exchange as a recording stores it: request headers with their secrets replaced, only the
// response headers replay needs, a request body parsed, with its images cut to digest and size.
import { REDACTED } from './redacted.ts'
import { sha256 } from './digest.ts'

const SECRET_HEADERS = new Set(['authorization', 'cookie', 'set-cookie', 'x-api-key', 'proxy-authorization'])
const KEPT_RESPONSE_HEADERS = new Set(['content-type', 'location'])

/** Request headers as stored: secrets replaced by "[redacted]". */
export function redactRequestHeaders(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(headers ?? {})) out[k.toLowerCase()] = SECRET_HEADERS.has(k.toLowerCase()) ? REDACTED : v
  return out
}

/** Response headers as stored: only those replay needs; secrets never. */
export function keepResponseHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(headers)) if (KEPT_RESPONSE_HEADERS.has(k)) out[k] = v
  return out
}

/** A request body as stored: parsed JSON when it is JSON, with data-URL images cut to digest and size. */
export function storedBody(body: string): unknown {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return body.length > 4096 ? { sha256: sha256(body), bytes: body.length } : body
  }
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string' && v.startsWith('data:') && v.length > 256) {
      const comma = v.indexOf(',')
      return { dataUrl: v.slice(0, comma + 1), sha256: sha256(v), bytes: v.length }
    }
    if (Array.isArray(v)) return v.map(walk)
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]))
    return v
  }
  return walk(parsed)
}
