// The targets `armproof serve` can run: its targets file, checked exactly as
// `pnpm verify --targets FILE` checks it (helpers/fleet/plan.ts: every target validated by the same
// loader, every problem at once), and for each target the argv of a one-target `verify` of it
// (the file's `defaults:` under its entry, helpers/fleet/targets-file.ts). Read at start, where a
// problem keeps serve from starting, and again at every request, so a changed file (a Kubernetes
// ConfigMap updated with the rollout) is what the next run proves.
import { planFleet } from '../fleet/plan.ts'
import { RUN_LEVEL, targetArgv } from '../fleet/targets-file.ts'
import { OPTIONS } from '../config/options.ts'
import { showValue } from '../config/shell.ts'

export interface ServedTargets {
  /** svc → the argv of `verify` for that target (never a secret: the file refuses keys). */
  argv: ReadonlyMap<string, readonly string[]>
  warnings: string[]
}

/**
 * The env twins of the options a targets file refuses per target (the whole run's: its outputs,
 * its fleet knobs, its mode), emptied in every run's env: serve names the report itself, and env or
 * .env can turn no run into a fleet run, add outputs, or make it a replay (a recording's green is
 * no verdict on the engine now).
 */
export const RUN_LEVEL_ENV: readonly string[] = OPTIONS.filter((o) => RUN_LEVEL.has(o.flag)).map((o) => o.env)

/** The file's targets by svc, or every problem with it (as `pnpm verify --targets` says them). */
export function loadServedTargets(
  file: string,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
  dotenv: string | undefined,
): { targets: ServedTargets } | { problems: string[] } {
  // Validated as verify validates a fleet run, with the env a run gets (no run-level twins): the
  // file's shape and every target's values in one answer, each problem at its file:line.
  const planned = planFleet({
    argv: ['--targets', file],
    env: { ...env, ...Object.fromEntries(RUN_LEVEL_ENV.map((k) => [k, ''])) },
    cwd,
    ...(dotenv ? { dotenv } : {}),
  })
  if (!planned.ok) return { problems: planned.problems.map((p) => p.message) }
  const { defaults, targets: entries, lines } = planned.targetsFile
  const argv = new Map<string, readonly string[]>()
  const problems: string[] = []
  for (const t of planned.plan.targets) {
    const svc = t.target.svc
    if (argv.has(svc)) {
      problems.push(
        `${file}:${lines.targets[t.index]!.at}: targets[${t.index}]: svc ${showValue(svc)} is listed twice; POST /verify/<svc> names one target, so serve needs each svc once (serve each knob or endpoint from its own file)`,
      )
      continue
    }
    argv.set(svc, targetArgv(defaults, [], entries[t.index]!))
  }
  return problems.length > 0 ? { problems } : { targets: { argv, warnings: planned.warnings } }
}
