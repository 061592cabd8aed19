// One run prepared, the one way for every entry: `pnpm verify` (one target or `--targets FILE`),
// and the suites run straight from env (suites/_setup.ts). The configuration is read from its
// layers (helpers/config/sources.ts; a fleet's targets from the file's through helpers/fleet/plan.ts),
// a replay's recording is checked against it, and the outputs are checked writable: every problem
// the operator can fix comes back at once, before anything is contacted (exit 2).
import { resolve } from 'node:path'
import { loadConfig, type ConfigProblem, type Target } from '../config/load.ts'
import { outputProblems } from '../config/outputs.ts'
import { VERSION_FLAGS } from '../config/invocation.ts'
import { isFleetRun, planFleet, strayFleetFlags, type FleetPlan } from '../fleet/plan.ts'
import { targetForRun } from '../seams/recording.ts'
import { commandLineLayer, type CommandLine } from '../config/sources.ts'

export type Prepared =
  | { kind: 'help' }
  | { kind: 'version' }
  /** `warnings`: what the configuration read said before a later check refused it. */
  | { kind: 'refused'; problems: ConfigProblem[]; warnings: string[] }
  | { kind: 'target'; target: Target; warnings: string[] }
  | { kind: 'fleet'; plan: FleetPlan; warnings: string[] }

export interface PrepareInput {
  argv: readonly string[]
  /** `argv` already read (verify reads it once, for its streams too); read here when not given. */
  commandLine?: CommandLine
  env: Readonly<Record<string, string | undefined>>
  /** The contents of `.env` (read by the caller, which says in its own way when it cannot be). */
  dotenv: string | undefined
  /** The process's folder: the default fixtures and `.env` are the package's, found here. */
  cwd: string
  /**
   * The folder the operator ran the command from: the paths they typed (--report, --junit,
   * --summary, --api-key-file, --ca-file, --targets) are theirs, relative to it.
   */
  userCwd: string
}

/** The run's target or fleet plan, or what to answer instead (help, the version, the problems). */
export function prepareRun(input: PrepareInput): Prepared {
  const { argv, env, userCwd } = input
  // The command line is read once, here or by the caller: every later reader takes this reading.
  const commandLine = input.commandLine ?? commandLineLayer(argv)
  const dotenv = input.dotenv ? { dotenv: input.dotenv } : {}
  // A fleet run (--targets FILE, or VERIFY_TARGETS); --help and --version still answer as for one target.
  if (isFleetRun(commandLine.layer, env) && !argv.some((a) => a === '--help' || a === '-h' || VERSION_FLAGS.includes(a))) {
    const planned = planFleet({ argv, commandLine, env, cwd: userCwd, ...dotenv })
    return planned.ok
      ? { kind: 'fleet', plan: planned.plan, warnings: planned.warnings }
      : { kind: 'refused', problems: planned.problems, warnings: [] }
  }
  const config = loadConfig({ commandLine, env, cwd: userCwd, ...dotenv })
  const stray = config.ok ? strayFleetFlags(commandLine.layer) : []
  if (stray.length > 0) return { kind: 'refused', problems: stray, warnings: [] }
  if (!config.ok)
    return config.help
      ? { kind: 'help' }
      : config.version
        ? { kind: 'version' }
        : { kind: 'refused', problems: config.problems, warnings: [] }
  const mine = (p: string | null) => (p === null ? null : resolve(userCwd, p))
  const run = targetForRun({
    ...config.target,
    report: mine(config.target.report),
    junit: mine(config.target.junit),
    summary: mine(config.target.summary),
  })
  if ('problems' in run) return { kind: 'refused', problems: run.problems, warnings: config.warnings }
  const unwritable = outputProblems(run.target, env, input.cwd)
  if (unwritable.length > 0) return { kind: 'refused', problems: unwritable, warnings: config.warnings }
  return { kind: 'target', target: run.target, warnings: config.warnings }
}
