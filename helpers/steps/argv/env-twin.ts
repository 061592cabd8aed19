// A flag's env twin (llama.cpp's `LLAMA_ARG_N_PARALLEL`) as the engine read it: from its own
// environment, /proc/<pid>/environ, where the engine's /proc is (on the host, or in its pod: the
// pid is the pod's own), through the host seam. Only that one variable leaves the host
// (the environment holds the engine's secrets: its API key, an HF token): the script prints the
// twin's own line and nothing else, so no other variable reaches the recording or a report.
import type { HostResult } from '../../seams/host.ts'
import { quote } from '../../config/shell.ts'
import { engineQuery } from '../../engine/query.ts'
import { inContainer, procRead, type PodContainerChoice } from '../../engine/runtime.ts'
import type { Occurrence } from '../../argparse/resolve.ts'
import type { RunContext } from '../context.ts'

/** An environment variable's name, as a profile's knob gives it (checked by its schema): safe in the script below. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/** The shell that prints `name=value` from process `pid`'s environment, or nothing; exit 3 when it cannot be read. */
function envTwinScript(pid: string, name: string): string {
  if (!ENV_NAME.test(name)) throw new Error(`not an environment variable name: ${JSON.stringify(name)}`)
  return `e=$(tr '\\0' '\\n' < /proc/${quote(pid)}/environ) || exit 3\nprintf '%s\\n' "$e" | grep -a -E '^${name}=' | tail -n 1\nexit 0`
}

export type EnvTwinRead = { value: string | undefined; result: HostResult } | { problem: string; result: HostResult }

/** The twin's value in the engine's environment (undefined: not set). */
export async function readEnvTwin(ctx: RunContext, pid: string, name: string, container?: PodContainerChoice): Promise<EnvTwinRead> {
  const result = await procRead(ctx.host, inContainer(engineQuery(ctx.target), container), envTwinScript(pid, name))
  if (result.failure) return { problem: 'host', result }
  if (result.exitCode !== 0)
    return {
      problem: `could not read /proc/${pid}/environ (exit ${result.exitCode}): ${result.stderr.trim().split('\n').at(-1) ?? ''}`,
      result,
    }
  const line = result.stdout.split('\n').find((l) => l.startsWith(`${name}=`))
  return { value: line === undefined ? undefined : line.slice(name.length + 1), result }
}

/** llama.cpp reads a switch's twin as on for 1, true, on, enabled or yes (common/arg.cpp). */
const TRUTHY = /^(1|true|on|enabled|yes)$/i

/**
 * The twin as one more occurrence of the flag: read before the command line, which wins when it
 * gives the flag too (the engine's `warn: … will be overwritten by command line argument` line).
 */
export function twinOccurrence(name: string, value: string, isSwitch: boolean, commandLineGivesIt: boolean): Occurrence {
  return {
    written: `${name}=${value}`,
    value: isSwitch ? (TRUTHY.test(value) ? 'true' : 'false') : value,
    source: 'env',
    spelling: 'exact',
    won: !commandLineGivesIt,
  }
}
