// URLs an operator gives (the endpoint's, Prometheus'), as every message shows them: never with
// their credentials. A URL's user:password@ is refused (it would reach argv, logs and reports), and
// the message that says so, or says anything else wrong with the URL, shows it masked.
import { showValue } from './shell.ts'

/** The text with what stands before its authority's last `@` (user:password) masked; the text as it is when it has none. */
export function maskCredentials(text: string): string {
  return text.replace(/^((?:[A-Za-z][A-Za-z0-9+.-]*:)?\/\/)?[^\s]*@/, (_, scheme: string | undefined) => `${scheme ?? ''}***@`)
}

/** The URL as a message quotes it: masked, then shown as any value is (./shell.ts `showValue`). */
export function showUrl(text: string, max?: number): string {
  return showValue(maskCredentials(text), max)
}

/**
 * An endpoint root (`--base-url`) as armproof uses it (no trailing slash), or why not: http(s),
 * no credentials (`credentials` says where the key goes instead), not ending in /v1 (armproof adds
 * it, and reads /health and /metrics at the root), no query or fragment.
 */
export function endpointUrl(text: string, credentials: string): { url: string } | { problem: string } {
  const shown = showUrl(text)
  // `gpu-7:8000` parses as a URL of scheme "gpu-7:": a base URL without http:// is said as such.
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(text))
    return { problem: `${shown} has no scheme; write http://${maskCredentials(text.replace(/^\/+/, ''))} (or https://…)` }
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return { problem: `${shown} is not a URL like http://gpu-7:8000` }
  }
  const path = url.pathname.replace(/\/+$/, '')
  if (url.username || url.password)
    return { problem: `must not carry credentials (user:password@): they would reach argv, logs and reports; ${credentials}` }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: `must be http:// or https://, got ${url.protocol}` }
  // Refused, not stripped: a base URL ending in /v1 (as OpenAI clients take it) would probe /v1/v1/… and /v1/health.
  if (/\/v1$/i.test(path))
    return {
      problem: `${shown} ends in /v1; armproof adds /v1 itself and reads /health and /metrics at the root: pass ${url.origin}${path.slice(0, -3)}`,
    }
  if (url.search || url.hash) return { problem: 'must be the endpoint root, without ?query or #fragment' }
  return { url: url.href.replace(/\/+$/, '') }
}

/** A Prometheus base URL, or why not: http(s), no credentials, no query or fragment. */
export function prometheusUrlProblem(text: string): string | undefined {
  let u: URL
  try {
    u = new URL(text)
  } catch {
    return `${showUrl(text)} is not a URL like http://prometheus:9090`
  }
  if (u.username || u.password)
    return 'must not carry credentials (user:password@): they would reach argv, logs and reports; put an authenticating proxy in front of Prometheus'
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `must be http:// or https://, got ${u.protocol}`
  if (u.search || u.hash) return "must be the Prometheus server's root, without ?query or #fragment"
  return undefined
}
