// A recording's identity: the sha256 of each file as written (stable JSON), run.json's own over its
// content without its `digests`, and one digest of the whole, which a replay report carries and
// writeback checks again.
import { createHash } from 'node:crypto'
import type { Digests, RunMeta } from './recording-files.ts'

export function sha256(text: string | Uint8Array): string {
  return createHash('sha256').update(text).digest('hex')
}

/** JSON with object keys sorted, two-space indented, newline at the end: stable diffs. */
export function stableJson(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort)
    if (v && typeof v === 'object')
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, sort((v as Record<string, unknown>)[k])]),
      )
    return v
  }
  return `${JSON.stringify(sort(value), null, 2)}\n`
}

/** run.json's digest covers its content without the `digests` field itself. */
export function runDigest(meta: object): string {
  const { digests: _d, ...rest } = meta as RunMeta
  return sha256(stableJson(rest))
}

/** The digests of a fixture set's files as they are written. */
export function fileDigests(meta: RunMeta, texts: { 'http.json': string; 'host.json': string }): Digests {
  return { 'run.json': runDigest(meta), 'http.json': sha256(texts['http.json']), 'host.json': sha256(texts['host.json']) }
}

/** One digest for the whole recording: what a replay report carries and writeback checks again. */
export function recordingDigest(digests: Digests): string {
  return sha256(stableJson(digests))
}
