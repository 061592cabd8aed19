// What step `health` records. One type for its outcomes: each sets the fields it saw.
import type { CrashEvidence } from '../_host-evidence.ts'
import type { HttpFailure } from '../../seams/http.ts'

export type HealthEvidence = CrashEvidence & {
  /** The last status seen (200 when it came up). */
  status?: number
  /** The 200 body's head. */
  body?: string
  attempts?: number
  waitedMs?: number
  /** Never came up: how often each answer was seen (a status, or a failure kind). */
  seen?: Record<string, number>
  /** A failure no wait changes (https:// on a plain port, a broken redirect): its kind. */
  failure?: HttpFailure
  /** A 200 that is no engine's /health answer (an HTML page; a body where the profile says none): the base URL reaches something else, the operator's to fix. */
  failureKind?: 'not-the-engine'
}
