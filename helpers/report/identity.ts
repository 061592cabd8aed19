// What makes two runs the same run, carried in every report (`run`, and a fleet's `fleet.run`):
// the mode, the skips declared on purpose, and the options the run was judged with, the very ones
// a recording keeps for its replay (`recordedTarget`: no key, no output path, no ssh options). Its
// `id` is the sha256 of those fields as stable JSON, so a report whose fields were edited no longer
// matches its id, and two shards of one fleet run carry the same `fleet.run` (the targets file's
// digest and every target's run id, in the file's order). merge-reports joins only shards of one
// run; writeback reads the declared skips and the endpoint.
import type { Mode, Target } from '../config/load.ts'
import { recordedTarget, type RecordedTarget } from '../seams/recording-files.ts'
import { sha256, stableJson } from '../seams/digest.ts'
import { declaredSkips, type StepId } from '../steps/verdict.ts'

export interface RunIdentity {
  /** sha256 (hex) of `{ mode, skips, target }` as stable JSON (see `runId`). */
  id: string
  mode: Mode
  /** The steps this run skips on purpose (`--no-dropin-check` or no unit: dropins; `--skip`: those probes); the green rule allows these and the skips the knob's proof implies. */
  skips: StepId[]
  /** The options the run was judged with: svc, knob, value, previous, base URL, host, commands, budgets… */
  target: RecordedTarget
}

/** A fleet run's identity: the targets file (its sha256) and each of its targets' run ids, in the file's order, all shards together. */
export interface FleetRunIdentity {
  /** sha256 (hex) of `{ fileSha256, targets, instance }` as stable JSON (see `fleetRunId`). */
  id: string
  /** sha256 (hex) of the targets file's text. */
  fileSha256: string
  targets: string[]
  /** The run's own name (`--run-id`, a CI's run id): two runs of one file with the same options differ by it. */
  instance?: string
}

/** The id of an identity's fields; recomputed by whoever reads a report back. */
export function runId(fields: { mode: string; skips: readonly string[]; target: unknown }): string {
  return sha256(stableJson({ mode: fields.mode, skips: fields.skips, target: fields.target }))
}

export function fleetRunId(fields: { fileSha256: string; targets: readonly string[]; instance?: string | undefined }): string {
  return sha256(
    stableJson({
      fileSha256: fields.fileSha256,
      targets: fields.targets,
      ...(fields.instance !== undefined ? { instance: fields.instance } : {}),
    }),
  )
}

/** The run identity of one target, as its report carries it. */
export function runIdentity(target: Target): RunIdentity {
  const fields = { mode: target.mode, skips: declaredSkips(target), target: recordedTarget(target) }
  return { id: runId(fields), ...fields }
}

/** A fleet run's identity from the targets file's text and its targets (all of them, every shard's). */
export function fleetRunIdentity(
  fileText: string | Uint8Array,
  targets: readonly Target[],
  instance: string | null = null,
): FleetRunIdentity {
  const fields = {
    fileSha256: sha256(fileText),
    targets: targets.map((t) => runIdentity(t).id),
    ...(instance !== null ? { instance } : {}),
  }
  return { id: fleetRunId(fields), ...fields }
}
