// After a replay: the verdict it reached set against the one the recording reached. A replay
// re-judges a recorded run; when it concludes otherwise (the run verdict, or any step's), the
// recording or armproof's judges changed, and the replay is not a proof of anything: both verdicts
// are named and the run is kept from green. Verdicts are compared, never free text.
import { resolve } from 'node:path'
import { checkRecording } from '../seams/recording.ts'
import type { RunMeta } from '../seams/recording-files.ts'
import type { RecordingRef } from '../report/json.ts'
import { LATER_STEPS, type StepResult } from '../steps/verdict.ts'

/** The recording a replay re-judges, as the report names it; null when it cannot be read (refused before). */
export function recordingRef(folder: string): { ref: RecordingRef; meta: RunMeta } | null {
  const checked = checkRecording(folder)
  if ('problem' in checked) return null
  const meta = checked.set.meta
  return {
    ref: { fixtures: resolve(folder), digest: checked.digest, recordedAt: meta.recordedAt, recordedVerdict: meta.verdict ?? null },
    meta,
  }
}

/** A note naming both verdicts when the replay's differ from the recording's, else null. */
export function verdictMismatch(
  meta: Pick<RunMeta, 'verdict' | 'steps'>,
  verdict: string,
  steps: readonly Pick<StepResult, 'id' | 'verdict'>[],
): string | null {
  if (meta.verdict === undefined || meta.steps === undefined)
    return 'replay: the recording holds no recorded verdict to compare with (the recorded run did not finish); re-record it'
  const recorded = meta.steps
  // A step added after the recording was made is skipped in its replay (it read nothing then): no difference.
  const later = (s: Pick<StepResult, 'id' | 'verdict'>) =>
    recorded[s.id] === undefined && LATER_STEPS.includes(s.id) && s.verdict === 'skipped'
  const differ = steps
    .filter((s) => recorded[s.id] !== s.verdict && !later(s))
    .map((s) => `${s.id} ${recorded[s.id] ?? 'absent'} → ${s.verdict}`)
  for (const id of Object.keys(recorded)) if (!steps.some((s) => s.id === id)) differ.push(`${id} ${recorded[id]} → absent`)
  if (verdict === meta.verdict && differ.length === 0) return null
  return `replay: verdict ${verdict} differs from the recorded verdict ${meta.verdict}${differ.length ? ` (steps: ${differ.join(', ')})` : ''}; the recording or armproof's judges changed since it was made`
}
