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

/**
 * The token now: from ARMPROOF_SERVE_TOKEN, fixed for the life of serve; from --token-file, read
 * again when the file changes (a rotated Kubernetes secret, its inode, size and times looked at no
 * more than once a second), so a rotation needs no restart. A new text that is no token (empty,
 * too short, unreadable) is said once in the log and the token before it stays: the file is being
 * written, or the rotation went wrong, and either way no request is let in without a token.
 */
export class TokenSource {
  private token: string
  private stamp: string
  private lookedAt = 0
  private readonly file: string | null
  private readonly env: Readonly<Record<string, string | undefined>>
  private readonly said: (line: string) => void
  private readonly lookEveryMs: number
  private readonly failed: () => void

  constructor(
    token: string,
    tokenFile: string | null,
    env: Readonly<Record<string, string | undefined>>,
    said: (line: string) => void = () => {},
    lookEveryMs = 1000,
    failed: () => void = () => {},
  ) {
    this.failed = failed
    this.token = token
    this.file = tokenFile
    this.env = env
    this.said = said
    this.lookEveryMs = lookEveryMs
    this.stamp = this.stat()
  }

  private stat(): string {
    if (!this.file) return ''
    try {
      const s = statSync(this.file, { bigint: true })
      return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`
    } catch (error) {
      return `error:${(error as NodeJS.ErrnoException).code}`
    }
  }

  current(): string {
    if (!this.file) return this.token
    const now = Date.now()
    if (now - this.lookedAt < this.lookEveryMs) return this.token
    this.lookedAt = now
    const stamp = this.stat()
    if (stamp === this.stamp) return this.token
    this.stamp = stamp
    const next = loadToken(this.file, this.env)
    if ('token' in next) {
      if (next.token !== this.token) this.said('armproof serve: --token-file changed: the new token holds from now on')
      this.token = next.token
    } else {
      this.failed()
      this.said(`armproof serve: --token-file changed, but ${next.problem}; the token before it still holds`)
    }
    return this.token
  }
}

/** How many Authorization headers the request carries (Node keeps the first only; two are refused, never one chosen). */
export function authorizationCount(rawHeaders: readonly string[]): number {
  let n = 0
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === 'authorization') n++
  return n
}
