// The host seam: every command on the engine's host (pidof, /proc, ledger, --help, systemctl)
// runs through a HostClient, locally for `--host local` (and for a pod: kubectl runs here, and the
// reads in the pod go through `kubectl exec`, helpers/engine/runtime.ts), else over ssh in BatchMode. Every
// command has a timeout (the whole process group is killed when it runs out); nothing can wait
// for a password (sudo is always `sudo -n`, ssh always `-o BatchMode=yes`). A call whose signal
// aborts ends there: its program with its process group, or, still waiting for one of the host's
// sessions, before it starts (answered `cancelled`).
import { userInfo } from 'node:os'
import type { HostSpec, SudoMode } from '../config/load.ts'
import { quote, quoteAll } from '../config/shell.ts'
import { classifyFailure, type HostClient, type HostFailure, type HostResult, type HostRun } from './host-result.ts'
import { cancelledExec, type Exec } from './exec.ts'
import { runExec } from './executor.ts'
import { runParts } from './host-batch.ts'
import { hostSessions, overMaster, sshControl } from './host-sessions.ts'
import { gatherRead } from './host-gather.ts'
import { sshArgs, sshDestination, sshTarget } from './ssh-args.ts'

export { classifyFailure, type HostClient, type HostFailure, type HostResult, type HostRun }
export type { SudoMode }

export interface HostOptions {
  host: HostSpec
  sshOpts: readonly string[]
  deployUser: string | null
  /** `--sudo`; default `auto`. */
  sudo?: SudoMode
  /** Extra environment for local commands (tests put the reference engine's shims on PATH). */
  env?: Record<string, string>
  /** The user local commands run as; default: this process's user. */
  localUser?: string
  /** The ssh client; default `ssh` from PATH. */
  sshCommand?: string
  /** The host-output cap (stdout and stderr together); default `MAX_HOST_OUTPUT`. Tests lower it. */
  maxOutputBytes?: number
}

/** The most output one host command may print; past it the output is cut and marked `output-cut`. */
export const MAX_HOST_OUTPUT = 64 * 1024 * 1024

/** Wraps a script so it runs as `user` without ever asking for a password. */
export function asUser(script: string, user: string): string {
  return `sudo -n -u ${quote(user)} -- sh -c ${quote(script)}`
}

/** Wraps a script so it runs as root without ever asking for a password. */
export function asRoot(script: string): string {
  return `sudo -n -- sh -c ${quote(script)}`
}

const PERMISSION_RE = /permission denied|operation not permitted/i

/** The user the commands run as on the host, when it can be known. */
function hostUser(options: HostOptions): string | undefined {
  if (options.host.kind === 'ssh') return sshDestination(options.host, options.sshOpts).user
  if (options.localUser) return options.localUser
  try {
    return userInfo().username
  } catch {
    return process.env.USER ?? process.env.LOGNAME
  }
}

/** What the host runs for a request on its first attempt: the script, as the deploy user or under sudo where asked. */
export function hostScript(
  req: Pick<HostRun, 'script' | 'asDeployUser' | 'privileged'>,
  ctx: { deployUser: string | null; user: string | undefined; sudo: SudoMode },
): string {
  if (req.asDeployUser && ctx.deployUser && ctx.deployUser !== ctx.user) return asUser(req.script, ctx.deployUser)
  if (req.privileged && ctx.sudo === 'always' && ctx.user !== 'root') return asRoot(req.script)
  return req.script
}

export function createHost(options: HostOptions): HostClient {
  const { host, sshOpts, deployUser } = options
  const sudo = options.sudo ?? 'auto'
  const user = hostUser(options)
  const target = host.kind === 'ssh' ? sshTarget(host, sshOpts) : 'local'
  const where = host.kind === 'ssh' ? `ssh ${target}` : 'local'
  const env: NodeJS.ProcessEnv = { ...process.env, ...options.env }
  const file = host.kind === 'ssh' ? (options.sshCommand ?? 'ssh') : 'sh'
  const maxOutput = options.maxOutputBytes ?? MAX_HOST_OUTPUT
  const sessions = hostSessions(target)
  // Clients with the same key reach the same host as the same user in the same way: their gathered reads are one.
  const shareKey = JSON.stringify([
    host,
    sshOpts,
    deployUser,
    sudo,
    options.env ?? null,
    options.localUser ?? null,
    options.sshCommand ?? null,
    maxOutput,
  ])
  const control = host.kind === 'ssh' ? sshControl(target, sshOpts) : undefined

  /** One program on the host: `sh -c`, or one ssh session; at most the host's sessions at once. */
  const launch = async (
    script: string,
    timeoutMs: number,
    batch?: { nonce: string; timeoutsMs: readonly number[] },
    urgent = false,
    signal?: AbortSignal,
  ): Promise<Exec> => {
    const args = host.kind === 'ssh' ? sshArgs(host, sshOpts, script, timeoutMs, control) : ['-c', script]
    // Aborted while it waits for a session: it leaves the queue and never takes one.
    const release = await sessions.acquire(urgent, signal).catch(() => null)
    if (!release) return cancelledExec()
    try {
      const plan = { file, args, env, timeoutMs: Math.max(1, timeoutMs), maxOutput, ...(batch ? { batch } : {}) }
      const run = () => runExec(plan, signal)
      return await (control ? overMaster(`${control}\n${target}`, run) : run())
    } finally {
      release()
    }
  }

  const attempt = async (script: string, timeoutMs: number, urgent = false, signal?: AbortSignal): Promise<HostResult> => {
    const started = performance.now()
    const r = await launch(script, timeoutMs, undefined, urgent, signal)
    const durationMs = Math.round(performance.now() - started)
    let failure: HostFailure | undefined
    if (r.spawnError !== undefined) failure = 'spawn'
    else if (r.cancelled) failure = 'cancelled'
    else if (r.cut) failure = 'output-cut'
    else if (r.timedOut) failure = 'timeout'
    else failure = classifyFailure(r.stderr, r.exitCode, host.kind === 'ssh')
    const stderr = r.spawnError !== undefined ? `${r.stderr}${r.stderr ? '\n' : ''}${file}: ${r.spawnError}` : r.stderr
    return { command: script, stdout: r.stdout, stderr, exitCode: r.exitCode, durationMs, target, ...(failure ? { failure } : {}) }
  }

  /** `--sudo auto`: a privileged read refused as the plain user runs once more under `sudo -n`, in what is left of its time. */
  const retryRefused = async (
    req: HostRun,
    script: string,
    first: HostResult,
    started: number,
    signal?: AbortSignal,
  ): Promise<HostResult> => {
    const refused = first.failure === undefined && first.exitCode !== 0 && PERMISSION_RE.test(first.stderr)
    const retry = req.privileged && sudo === 'auto' && script === req.script && user !== 'root' && refused
    if (!retry) return first
    const left = req.timeoutMs - (performance.now() - started)
    if (left < 50) return first
    const second = await attempt(asRoot(req.script), left, req.urgent, signal)
    return { ...second, durationMs: Math.round(performance.now() - started) }
  }

  const runOne = async (req: HostRun, signal?: AbortSignal): Promise<HostResult> => {
    const started = performance.now()
    const script = hostScript(req, { deployUser, user, sudo })
    return retryRefused(req, script, await attempt(script, req.timeoutMs, req.urgent, signal), started, signal)
  }

  return {
    where,
    target,
    run: runOne,
    async runAll(reqs, signal) {
      if (reqs.length === 1) return [await runOne(reqs[0]!, signal)]
      const started = performance.now()
      const scripts = reqs.map((req) => hostScript(req, { deployUser, user, sudo }))
      const launcher = {
        file,
        viaSsh: host.kind === 'ssh',
        target,
        launch: (script: string, nonce: string, timeoutsMs: readonly number[], signal?: AbortSignal) =>
          launch(script, timeoutsMs[0]!, { nonce, timeoutsMs }, false, signal),
      }
      const results = await runParts(
        scripts,
        reqs.map((r) => r.timeoutMs),
        launcher,
        signal,
      )
      return Promise.all(results.map((r, i) => retryRefused(reqs[i]!, scripts[i]!, r, started, signal)))
    },
    gather(g, key, timeoutMs, signal) {
      return gatherRead(shareKey, runOne, g, key, timeoutMs, signal)
    },
  }
}

/**
 * Substitutes the placeholders into an operator's command template (`{svc}`, `{unit}`, and under
 * kubernetes `{pod}` and `{kube}`, kubectl's options), each value quoted, a list word by word; in
 * one pass, so a value that holds a placeholder's text is never substituted again. A placeholder
 * with no value (null) is left empty: the configuration refuses a template that names one.
 */
export function fillTemplate(template: string, values: Readonly<Record<string, string | readonly string[] | null | undefined>>): string {
  return template.replace(/( ?)\{([a-z]+)\}/g, (whole, space: string, name: string) => {
    if (!Object.hasOwn(values, name)) return whole
    const v = values[name]
    // A list of no words (kubernetes' `{container}` in a pod of one) leaves no word, nor its space.
    if (Array.isArray(v) && v.length === 0) return ''
    return space + (v === null || v === undefined ? '' : typeof v === 'string' ? quote(v) : quoteAll(v as readonly string[]))
  })
}

export { quote, quoteAll }
