// Secrets (the API key) never reach a log, a report or a fixture: every value that leaves a
// step passes through `scrub` first.

export const REDACTED = '[redacted]'

/** Replaces `secret` in every string (and object key) of a JSON-like value; drops what JSON cannot hold. */
export function scrub(value: unknown, secret: string | null): unknown {
  const clean = (s: string) => (secret ? s.replaceAll(secret, REDACTED) : s)
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
