// Secrets (the API key) never reach a log, a report or a fixture. Two layers: the seams redact
// every byte the endpoint and the host send back BEFORE any step reads (and cuts) it, so a key
// the endpoint echoes can never survive in part behind a truncation; and every value that leaves
// a step passes through `scrub` again.
import type { HostClient, HostResult, HostRun } from './host.ts'
import type { Gather } from './host-result.ts'
import { HttpError, type HttpClient } from './http.ts'
import { REDACTED } from './redacted.ts'

export { REDACTED }

/** The ways a key can appear in text: as is, JSON-escaped, URL-encoded. */
export function secretForms(secret: string): string[] {
  const forms = new Set([secret, JSON.stringify(secret).slice(1, -1), encodeURIComponent(secret)])
  return [...forms].filter((f) => f.length > 0)
}

/** `text` with every form of `secret` replaced by "[redacted]". */
export function redactText(text: string, secret: string | null): string {
  if (!secret) return text
  let out = text
  for (const form of secretForms(secret)) out = out.replaceAll(form, REDACTED)
  return out
}

/** Replaces `secret` in every string (and object key) of a JSON-like value; drops what JSON cannot hold. */
export function scrub(value: unknown, secret: string | null): unknown {
  const clean = (s: string) => redactText(s, secret)
  if (typeof value === 'string') return clean(value)
  if (typeof value === 'number') return secret && String(value).includes(secret) ? REDACTED : value
  if (typeof value === 'bigint') return clean(String(value))
  if (value instanceof Date) return clean(value.toISOString())
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : scrub(v, secret)))
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) {
      if (v !== undefined && typeof v !== 'function') out[clean(k)] = scrub(v, secret)
    }
    return out
  }
  return value === undefined ? null : value
}

/** `text` with every one of `secrets` redacted (a fleet's text may quote any of its targets' keys). */
export function redactAll(text: string, secrets: readonly (string | null)[]): string {
  return secrets.reduce<string>((t, k) => redactText(t, k), text)
}

/** `scrub` for every one of `secrets`. */
export function scrubAll(value: unknown, secrets: readonly (string | null)[]): unknown {
  return secrets.reduce<unknown>((v, k) => scrub(v, k), value)
}

/** The HTTP seam with the key redacted from everything that comes back: body, headers, URLs, error text. */
export function redactingHttp(http: HttpClient, secret: string | null): HttpClient {
  if (!secret) return http
  const clean = (s: string) => redactText(s, secret)
  return {
    async request(req) {
      try {
        const res = await http.request(req)
        return {
          ...res,
          body: clean(res.body),
          headers: Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, clean(v)])),
          url: clean(res.url),
          redirects: res.redirects.map(clean),
        }
      } catch (error) {
        if (error instanceof HttpError) {
          const detail = clean(error.message).replace(/^.*? at \S+: /, '')
          throw new HttpError(error.failure, clean(error.url), detail, error.sysCode)
        }
        if (error instanceof Error) error.message = clean(error.message)
        throw error
      }
    },
  }
}

/** The host seam with the key redacted from what the host prints (e.g. an engine's argv holding --api-key). */
export function redactingHost(host: HostClient, secret: string | null): HostClient {
  if (!secret) return host
  const clean = (s: string) => redactText(s, secret)
  const cleaned = (r: HostResult): HostResult => ({ ...r, command: clean(r.command), stdout: clean(r.stdout), stderr: clean(r.stderr) })
  return {
    where: host.where,
    ...(host.target !== undefined ? { target: host.target } : {}),
    async run(req, signal) {
      return cleaned(await host.run(req, signal))
    },
    ...(host.runAll
      ? { runAll: async (reqs: readonly HostRun[], signal?: AbortSignal) => (await host.runAll!(reqs, signal)).map(cleaned) }
      : {}),
    ...(host.gather
      ? {
          gather: async <K>(g: Gather<K>, key: K, timeoutMs: number, signal?: AbortSignal) =>
            cleaned(await host.gather!(g, key, timeoutMs, signal)),
        }
      : {}),
  }
}

/**
 * Names of variables that hold a secret by their look (an API key, a token, a password, a
 * credential, a session or a private key): their values are never shown, only whether they differ.
 */
export const SECRET_NAME = /key|token|secret|pass|auth|bearer|cred|cookie|session|private|signature|salt|cert|dsn/i

/** A value that carries a secret whatever its name: a URL with a password in it (`scheme://user:pass@host`). */
const SECRET_VALUE = /:\/\/[^/\s@:]*:[^/\s@]+@/
/** A value shaped as the well-known API tokens are (OpenAI's `sk-`, Hugging Face's `hf_`, GitHub's, Slack's, AWS access keys). */
const TOKEN_VALUE = /(?:^|[^A-Za-z0-9])(?:sk-|hf_|gh[pousr]_|github_pat_|xox[abprs]-|AKIA)[A-Za-z0-9_-]{10,}/
/** Whether a value looks like key material: one run of 32 or more token characters holding letters and digits (no path, no sentence). */
function keyLike(value: string): boolean {
  return /^[A-Za-z0-9+=_-]{32,}$/.test(value) && /[A-Za-z]/.test(value) && /\d/.test(value)
}

/** Whether a variable's value must never be shown: its name looks secret, its value carries credentials or looks like a token, or it is the run's key. */
export function secretVariable(name: string, value: string | undefined, secret: string | null = null): boolean {
  if (SECRET_NAME.test(name)) return true
  if (value === undefined) return false
  return (
    SECRET_VALUE.test(value) || TOKEN_VALUE.test(value) || keyLike(value) || (secret !== null && secret !== '' && value.includes(secret))
  )
}
