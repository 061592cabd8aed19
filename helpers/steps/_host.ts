// Shared by the host-side steps: what to say when a host command could not run at all.
import { DEFAULT_LEDGER_CMD } from '../config/options.ts'
import { templateValues } from '../config/runtime.ts'
import { MAX_HOST_OUTPUT, fillTemplate, type HostResult, type HostRun } from '../seams/host.ts'
import type { Target } from '../config/load.ts'
import type { RunContext } from './context.ts'
import { engineQuery } from '../engine/query.ts'
import { engineContainer, parsePod, readPod } from '../engine/runtime.ts'
import type { HostTroubleEvidence } from './_host-evidence.ts'
import type { JudgementFields } from './verdict.ts'

/** A host command that could not be run: inconclusive, whichever step ran it. */
export type HostTrouble = JudgementFields & { evidence: HostTroubleEvidence }

export function whereHost(ctx: RunContext, command: string): string {
  return `${ctx.host.where}: ${command}`
}

const NEXT: Record<NonNullable<HostResult['failure']>, (ctx: RunContext, r: HostResult) => string> = {
  timeout: (ctx) =>
    `the command did not finish within ${Math.round(ctx.target.hostTimeoutMs / 1000)}s; run it by hand on the host, or raise --host-timeout`,
  unreachable: (ctx, r) =>
    `ssh could not reach ${r.target ?? ctx.host.target ?? 'the host'}; check --host and --ssh-opts (port, key), then retry`,
  'host-key': () =>
    'the host key is unknown or changed and BatchMode refuses to ask; add it with ssh-keyscan to known_hosts after checking it',
  auth: () => 'ssh refused the key; check --ssh-opts "-i <key>" and the user in --host user@host',
  'sudo-password': (ctx) =>
    `sudo wants a password and armproof never types one; allow it in sudoers without a password (NOPASSWD) for ${ctx.target.deployUser ? `"sudo -u ${ctx.target.deployUser}"` : 'this command'}, or ssh in as that user`,
  spawn: () => 'the command could not be started on this machine (is ssh or sh installed?)',
  // Only reads no step took are cancelled (helpers/seams/read-ahead.ts): said for completeness, never shown.
  cancelled: () => 'armproof cancelled the command when its run ended; run armproof again',
  'output-cut': () =>
    `the command printed more than armproof's ${MAX_HOST_OUTPUT / 1024 / 1024} MiB host-output cap, so its output was cut and is not judged (a partial log could hold an older boot); make the command print less, e.g. the default --ledger-cmd "${DEFAULT_LEDGER_CMD}" reads only the log's tail`,
}

/** Inconclusive: the host command could not be run, so nothing was observed. */
export function hostTrouble(ctx: RunContext, r: HostResult, expected: string): HostTrouble | undefined {
  if (!r.failure) return undefined
  const said = (r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ')
  return {
    verdict: 'inconclusive',
    expected,
    observed:
      r.failure === 'output-cut'
        ? `the output passed the ${MAX_HOST_OUTPUT / 1024 / 1024} MiB host-output cap and was cut; a partial output is not judged`
        : `could not run the command (${r.failure}${r.exitCode !== null ? `, exit ${r.exitCode}` : ''})${said ? `: ${said}` : ''}`,
    where: whereHost(ctx, r.command),
    next: NEXT[r.failure](ctx, r),
    evidence: { exitCode: r.exitCode, stderr: r.stderr.slice(-2000) },
  }
}

/** The last few lines of output, one line, for a message. */
export function tail(text: string, lines = 3, max = 300): string {
  const t = text.trim().split('\n').slice(-lines).join(' | ')
  return t.length > max ? `…${t.slice(-max)}` : t
}

/**
 * The read of an operator's command template (`--ledger-cmd`, `--help-cmd`): as the deploy user,
 * with `{svc}`/`{unit}` (and a pod's `{pod}`/`{kube}`; `more`, a help command's `{engine}`)
 * quoted in and stderr folded into stdout (containers log to both).
 */
export function templateRead(
  target: Pick<Target, 'svc' | 'unit' | 'hostTimeoutMs' | 'kubeOpts' | 'host'>,
  template: string,
  more: Readonly<Record<string, readonly string[]>> = {},
): HostRun {
  return {
    script: `{ ${fillTemplate(template, { ...templateValues(target), ...more })} ; } 2>&1`,
    asDeployUser: true,
    timeoutMs: target.hostTimeoutMs,
  }
}

/**
 * Runs an operator's command template (`templateRead`). Under kubernetes a `{container}` in it
 * (the default ledger and help commands have one) is `-c <name>` of the container that declares
 * the base URL's port, read from `kubectl get pod -o json` as the engine lookup reads it; nothing
 * in a pod of one container, or where the pod cannot say (kubectl's default then, as before).
 */
export async function runTemplate(
  ctx: RunContext,
  template: string,
  more: Readonly<Record<string, readonly string[]>> = {},
): Promise<HostResult> {
  const filled = template.includes('{container}') && !('container' in more) ? { ...more, container: await podContainerWords(ctx) } : more
  return ctx.host.run(templateRead(ctx.target, template, filled))
}

/** `-c <name>` for kubectl where the pod has several containers and one declares the base URL's port; else none. */
async function podContainerWords(ctx: RunContext): Promise<readonly string[]> {
  const q = engineQuery(ctx.target)
  if (!q.pod) return []
  const r = await readPod(ctx.host, { ...q, pod: q.pod })
  if (r.failure) return []
  const chosen = engineContainer(parsePod(r), q.port)
  return chosen ? ['-c', chosen.name] : []
}
