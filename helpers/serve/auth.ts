// The bearer token of `armproof serve`: read once at start (ARMPROOF_SERVE_TOKEN or
// --token-file), checked on every run request in constant time, never logged, never passed to a
// run. Argo Rollouts' web provider sends it as `Authorization: Bearer <token>`; a Flagger webhook
// sends no headers of its own, so there it is the `token` of the webhook's metadata, which Flagger
// puts in the JSON body it POSTs (its own documented convention).
import { createHash, timingSafeEqual } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import { keyFromFileText } from '../config/load.ts'
import { TOKEN_ENV } from './options.ts'

/** Shorter than this is guessable: refused at start. */
export const MIN_TOKEN_CHARS = 16
const MAX_TOKEN_FILE_BYTES = 64 * 1024

/** The token from its one source, or the problem that keeps serve from starting. */
export function loadToken(
  tokenFile: string | null,
  env: Readonly<Record<string, string | undefined>>,
): { token: string } | { problem: string } {
  let token: string
  if (tokenFile) {
    try {
      const st = statSync(tokenFile)
      if (!st.isFile()) return { problem: `--token-file: ${tokenFile} is not a file` }
      if (st.size > MAX_TOKEN_FILE_BYTES)
        return { problem: `--token-file: ${tokenFile} is larger than 64 KiB; it should hold the token alone` }
      token = keyFromFileText(readFileSync(tokenFile, 'utf8'))
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      return {
        problem: `--token-file: ${tokenFile} cannot be read (${code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (code ?? 'error')})`,
      }
    }
  } else {
    token = env[TOKEN_ENV] ?? ''
  }
  const from = tokenFile ? `--token-file ${tokenFile}` : TOKEN_ENV
  // The token itself is never shown, only what is wrong with it.
  if (!/^[\x21-\x7e]+$/.test(token))
    return {
      problem: `${from}: the token must be one word of printable ASCII (no spaces, no newline inside), as an HTTP header carries it`,
    }
  if (token.length < MIN_TOKEN_CHARS)
    return { problem: `${from}: the token has ${token.length} characters; give at least ${MIN_TOKEN_CHARS} (e.g. openssl rand -hex 32)` }
  return { token }
}

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest()

/** Compares in constant time: both sides are hashed first, so neither length nor content leaks through timing. */
export function tokenMatches(expected: string, given: string | undefined): boolean {
  if (given === undefined) return false
  return timingSafeEqual(digest(expected), digest(given))
}

/** The token a request carries: the Authorization header's bearer token, else a Flagger payload's metadata.token. */
export function presentedToken(authorization: string | undefined, body: unknown): string | undefined {
  const bearer = authorization === undefined ? undefined : /^Bearer +(\S+) *$/i.exec(authorization)?.[1]
  if (bearer !== undefined) return bearer
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    const metadata = (body as { metadata?: unknown }).metadata
    if (metadata !== null && typeof metadata === 'object') {
      const token = (metadata as { token?: unknown }).token
      if (typeof token === 'string') return token
    }
  }
  return undefined
}
