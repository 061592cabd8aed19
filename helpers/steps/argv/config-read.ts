// The `--config FILE` an engine was started with, read on its host through the host seam (so a
// recording keeps it and a replay reads it back): a relative path against the engine's own
// working folder (/proc/<pid>/cwd), an absolute one inside its own root (/proc/<pid>/root, the
// container's filesystem for a containerised engine). The script names the argv word by its
// position, never the path itself: no path of the recording machine lands in a fixture's command.
import { configArgs } from '../../argparse/config-file.ts'
import type { ConfigArgs, ConfigRef } from '../../argparse/resolve.ts'
import type { HostResult } from '../../seams/host.ts'
import { quote } from '../../config/shell.ts'
import { engineQuery } from '../../engine/query.ts'
import { inContainer, procRead, type PodContainerChoice } from '../../engine/runtime.ts'
import type { RunContext } from '../context.ts'

export type ConfigRead = { ok: ConfigArgs; result: HostResult } | { problem: string; result?: HostResult; next: string }

/** The shell that prints the file named by argv word `ref` of process `pid` (argv as read from its cmdline). */
export function configScript(pid: string, argv: readonly string[], ref: ConfigRef): string | undefined {
  const word = ref.inline ? ref.index : ref.index + 1
  if (argv[word]!.includes('\n')) return undefined
  // `tr '\0' '\n'` puts each argv word on its own line; earlier words holding a newline push it down.
  const line = word + 1 + argv.slice(0, word).reduce((n, w) => n + w.split('\n').length - 1, 0)
  const p = quote(pid)
  return [
    `f=$(tr '\\0' '\\n' < /proc/${p}/cmdline | sed -n ${line}p)`,
    ...(ref.inline ? [`f=\${f#*=}`] : []),
    `case "$f" in /*) cat -- "/proc/${p}/root$f" ;; *) cd /proc/${p}/cwd && cat -- "$f" ;; esac`,
  ].join('\n')
}

/** `container`: the pod's container the lookup read the engine in (kubernetes). */
export async function readConfig(
  ctx: RunContext,
  pid: string,
  argv: readonly string[],
  ref: ConfigRef,
  container?: PodContainerChoice,
): Promise<ConfigRead> {
  const script = configScript(pid, argv, ref)
  if (script === undefined)
    return {
      problem: `the config file's name holds a newline: ${JSON.stringify(ref.path)}`,
      next: 'start the engine with a config file whose name is one line',
    }
  // Where the engine's /proc is: on the host, or in its pod.
  const result = await procRead(ctx.host, inContainer(engineQuery(ctx.target), container), script)
  if (result.failure) return { problem: 'host', result, next: '' }
  if (result.exitCode !== 0) {
    return {
      problem: `could not read ${ref.path} (exit ${result.exitCode}): ${result.stderr.trim().split('\n').at(-1) ?? ''}`,
      result,
      next: `the engine read its flags from ${ref.path} at start, relative to its working folder (/proc/${pid}/cwd): check the file is still there, or give armproof the rights to read it (--sudo always)`,
    }
  }
  const parsed = configArgs(ref.path, result.stdout)
  if ('problem' in parsed)
    return {
      problem: parsed.problem,
      result,
      next: `the engine could not have started with it as vLLM's parser reads it (YAML, keys are flag names without dashes): check ${ref.path}`,
    }
  return { ok: parsed, result }
}
