// The engine as it runs now, for the one-flag law (./judge.ts): its whole command line as its
// parser reads it (the argv step's read, helpers/argparse/resolve.ts `resolveCommandLine`, with
// the build's flags from --help), the env twins its profile names (only those variables leave the
// host: the environment holds the engine's secrets), /proc/<pid>/exe's path, size and mtime, the
// image the runtime reports for its container, and the served model. Every read goes through the
// host seam (a recording keeps it). Secret-looking flags' and variables' values are never kept.
import { REDACTED, type ArmRecord } from '../../config/arm-record.ts'
import { flagNames, type KnownFlag } from '../../argparse/rules.ts'
import { resolveCommandLine } from '../../argparse/resolve.ts'
import { quote } from '../../config/shell.ts'
import { engineQuery } from '../../engine/query.ts'
import { containerTool, inContainer, procPlace, procRead, readPod } from '../../engine/runtime.ts'
import { profileEnvTwins } from '../../profiles/target.ts'
import type { HostResult } from '../../seams/host.ts'
import { isSecretName, redactArgv } from '../argv/parse.ts'
import type { InputsOf, RunContext } from '../context.ts'
import { hostTrouble, tail, whereHost, type HostTrouble } from '../_host.ts'

/** What could not be read, and so what the step cannot say (inconclusive). */
export interface Unread {
  observed: string
  where: string
  next: string
  trouble?: HostTrouble
}

export type RecordRead = { record: ArmRecord; unlisted: string[]; where: string } | { unread: Unread }

const fromTrouble = (t: HostTrouble): Unread => ({
  observed: t.observed,
  where: t.where,
  next: t.next ?? 'run the command by hand on the host',
  trouble: t,
})

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/** The shell that prints `size mtime` and the link of /proc/<pid>/exe, then the named variables of its environment (only those). */
export function recordScript(pid: string, twins: readonly string[]): string {
  if (!/^\d+$/.test(pid)) throw new Error(`recordScript: not a pid: ${JSON.stringify(pid)}`)
  for (const t of twins) if (!ENV_NAME.test(t)) throw new Error(`recordScript: not a variable name: ${JSON.stringify(t)}`)
  return [
    `P=${pid}`,
    `stat -L -c '%s %Y' /proc/$P/exe || exit 3`,
    `readlink /proc/$P/exe || exit 3`,
    ...(twins.length ? [`tr '\\0' '\\n' < /proc/$P/environ | grep -a -E '^(${twins.join('|')})=' || true`] : []),
    'exit 0',
  ].join('\n')
}

/** The exe's identity and the twins' values, from what `recordScript` printed. */
export function parseRecordOutput(
  stdout: string,
  twins: readonly string[],
): { binary: NonNullable<ArmRecord['binary']>; env: Map<string, string> } | string {
  const lines = stdout.split('\n')
  const m = /^(\d+) (\d+)$/.exec(lines[0]?.trim() ?? '')
  const path = lines[1]?.trim() ?? ''
  // absolute, as readlink prints it; in a replay, as the recorder kept it (its machine's folders as
  // <cwd>, <tmp>, <home>, its node binary as <node>: helpers/seams/record.ts)
  if (!m || !/^(\/|<(cwd|tmp|home)>\/|<node>$)/.test(path))
    return `stat and readlink of the exe printed ${JSON.stringify(lines.slice(0, 2).join(' | ').slice(0, 200))}`
  const env = new Map<string, string>()
  for (const line of lines.slice(2)) {
    const eq = line.indexOf('=')
    if (eq > 0 && twins.includes(line.slice(0, eq))) env.set(line.slice(0, eq), line.slice(eq + 1))
  }
  return { binary: { path, size: Number(m[1]), mtime: Number(m[2]) }, env }
}

/** The image id the runtime reports for the engine's container; null where it runs none (a bare process); Unread when it cannot say. */
async function readImage(ctx: RunContext, container?: string): Promise<{ image: string | null; said: string } | { unread: Unread }> {
  const q = engineQuery(ctx.target)
  if (q.pod) {
    const r = await readPod(ctx.host, { ...q, pod: q.pod })
    const trouble = hostTrouble(ctx, r, "the image of the engine's container")
    if (trouble) return { unread: fromTrouble(trouble) }
    let doc: { status?: { containerStatuses?: Array<{ name?: unknown; imageID?: unknown }> } } | undefined
    try {
      doc = JSON.parse(r.stdout) as typeof doc
    } catch {
      doc = undefined
    }
    const statuses = doc?.status?.containerStatuses ?? []
    const chosen = container ? statuses.find((c) => c.name === container) : statuses.length === 1 ? statuses[0] : undefined
    if (!chosen || typeof chosen.imageID !== 'string' || chosen.imageID === '')
      return {
        unread: {
          observed: `kubectl get pod names no imageID for the engine's container${container ? ` ${container}` : ` (${statuses.length} containers)`}`,
          where: whereHost(ctx, r.command),
          next: "run kubectl get pod -o json by hand: armproof reads the engine's image from status.containerStatuses[].imageID",
        },
      }
    return { image: chosen.imageID, said: 'kubectl get pod (status.containerStatuses[].imageID)' }
  }
  const tool = containerTool(ctx.target.runtime)
  if (tool === null) return { image: null, said: 'a bare process (--runtime process): no image' }
  const script = `${tool === 'docker' ? 'docker inspect --type=container' : 'podman inspect'} --format '{{.Image}}' ${quote(ctx.target.svc)}`
  const r = await ctx.host.run({ script, asDeployUser: true, timeoutMs: ctx.target.hostTimeoutMs })
  const trouble = hostTrouble(ctx, r, "the image of the engine's container")
  if (trouble) return { unread: fromTrouble(trouble) }
  const out = r.stdout.trim()
  if (r.exitCode === 0 && /^(sha256:)?[0-9a-f]{12,64}$/.test(out))
    return { image: out.startsWith('sha256:') ? out : `sha256:${out}`, said: script }
  // No container of that name: the engine runs beside the runtime, a bare process (its binary is compared).
  if (/no such (object|container)/i.test(`${r.stderr}\n${r.stdout}`)) return { image: null, said: `${script}: no such container` }
  return {
    unread: {
      observed: `${script} exited ${r.exitCode}: ${tail(r.stderr || r.stdout) || 'no output'}`,
      where: whereHost(ctx, r.command),
      next: `run ${script} on the host as the deploy user: it must print the container's image id`,
    },
  }
}

/** The engine's record now, or what could not be read. */
export async function readRecord(ctx: RunContext, inputs: InputsOf<'one-flag'>): Promise<RecordRead> {
  const command = inputs.engineCommand
  const q = engineQuery(ctx.target)
  if (!command)
    return {
      unread: {
        observed: 'step argv read no engine command line',
        where: ctx.host.where,
        next: 'make step argv find the engine process serving the base URL (its next step says how), then run again',
      },
    }
  const place = inContainer(q, command.container)
  const where = `${procPlace(ctx.host.where, place)}${q.pod ? ' ' : ': '}/proc/${command.pid}/cmdline, /proc/${command.pid}/exe`
  const listed = inputs.buildFlags
  if (!listed)
    return {
      unread: {
        observed:
          "the build's flag list is unknown (step help did not read it): the command line cannot be read as the engine's parser reads it",
        where,
        next: "make step help read the build's --help (check --help-cmd), then run again",
      },
    }
  const names = flagNames(ctx.spec, ctx.engine.parser)
  const own: KnownFlag[] = [...names.names, ...(names.switch?.negated ? [names.switch.negated] : [])]
    .filter((n) => !listed.some((k) => k.name === n))
    .map((name) => ({ name, takesValue: names.switch === undefined }))
  // Read with secret-looking flags' values already replaced: an unlisted one's value never becomes a positional word.
  const line = resolveCommandLine(redactArgv(command.argv), ctx.engine.parser, [...listed, ...own], command.config)
  if (line.problems.length)
    return {
      unread: {
        observed: `the engine's parser would refuse this command line: ${line.problems.join('; ')}`,
        where,
        next: 'the running engine cannot have been started with this command line as its parser reads it: check that --help-cmd runs the same build as the engine',
      },
    }
  const twins = ctx.engine.parser.envTwins ? profileEnvTwins(ctx.target) : []
  const r: HostResult = await procRead(ctx.host, place, recordScript(command.pid, twins))
  const trouble = hostTrouble(ctx, r, "the engine's binary")
  if (trouble) return { unread: fromTrouble(trouble) }
  const parsed = r.exitCode === 0 ? parseRecordOutput(r.stdout, twins) : `exit ${r.exitCode}: ${tail(r.stderr) || 'no output'}`
  if (typeof parsed === 'string')
    return {
      unread: {
        observed: `could not read /proc/${command.pid}/exe: ${parsed}`,
        where,
        next: `give armproof the rights to read /proc/${command.pid}/exe (run as the engine's user, or --sudo always), then run again`,
      },
    }
  const image = await readImage(ctx, command.container?.name)
  if ('unread' in image) return image
  const flags: Record<string, string> = {}
  for (const [name, value] of line.flags) flags[name] = isSecretName(name) ? REDACTED : value
  for (const [name, value] of parsed.env) flags[`$${name}`] = isSecretName(name) ? REDACTED : value
  const model = (await inputs.model?.settled()) ?? ctx.target.model ?? null
  return {
    record: { flags, args: line.positionals, binary: parsed.binary, image: image.image, model },
    unlisted: line.unlisted,
    where: `${where}; ${image.said}; ${model === null ? '/v1/models (not read)' : '/v1/models'}`,
  }
}
