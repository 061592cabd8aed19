// Helpers for fleet runs against reference engines: a targets-file entry that points one target's
// host commands at its own engine's shims (each engine answers only for its own service name), so
// many engines on one machine are many targets of one run.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { EngineHandle } from '../../engine/launch.ts'
import type { FleetReport } from '../../helpers/fleet/report.ts'
import { tempDir } from './temp-dir.ts'

/** A YAML entry for one engine (keys are option names); `extra` adds or overrides keys. */
export function engineEntry(engine: EngineHandle, extra: Record<string, string> = {}): Record<string, string> {
  return {
    svc: engine.svc,
    'base-url': engine.baseUrl,
    process: engine.processName,
    'ledger-cmd': `${engine.binDir}/podman logs --tail 100000 {svc}`,
    'help-cmd': `${engine.binDir}/podman exec {svc} radiance --help`,
    ...extra,
  }
}

/** Writes a targets file (as JSON, which is YAML) into a fresh temp folder (removed after the test file); returns its path. */
export function writeTargets(defaults: Record<string, string>, targets: ReadonlyArray<Record<string, string>>): string {
  const dir = tempDir('armproof-fleet-')
  const path = join(dir, 'targets.yaml')
  writeFileSync(path, JSON.stringify({ defaults, targets }, null, 2))
  return path
}

/** name → verdict of a fleet report, for compact assertions. */
export function targetVerdicts(report: FleetReport): Record<string, string> {
  return Object.fromEntries(report.targets.map((t) => [t.name, t.report.verdict]))
}
