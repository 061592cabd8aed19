// The host seam: every command on the engine's host (pidof, /proc, ledger, --help, systemctl)
// runs through a HostClient, locally for `--host local`, else over ssh in BatchMode. Every
// command has a timeout; nothing can wait for a password (sudo is always `sudo -n`).
import { execa } from 'execa'
import type { HostSpec } from './config.ts'
import { quote, quoteAll } from './shell.ts'

export interface HostRun {
  /** A POSIX sh script; every value substituted into it must already be quoted. */
  script: string
  /** Run as the deploy user (rootless podman storage is per user). */
  asDeployUser?: boolean
  timeoutMs: number
}

export type HostFailure = 'timeout' | 'unreachable' | 'host-key' | 'auth' | 'sudo-password' | 'spawn'

export interface HostResult {
  /** The command as it ran on the host (without ssh's options), for messages and fixtures. */
  command: string
  stdout: string
  stderr: string
  exitCode: number | null
  /** Set when the command could not run to completion for a reason outside the command itself. */
  failure?: HostFailure
  durationMs: number
}

export interface HostClient {
  /** "local" or "ssh deploy@gpu-7:22": where commands run, for messages. */
  readonly where: string
  run(req: HostRun): Promise<HostResult>
}

export interface HostOptions {
  host: HostSpec
  sshOpts: readonly string[]
  deployUser: string | null
  /** Extra environment for local commands (tests put the reference engine's shims on PATH). */
  env?: Record<string, string>
}

const MAX_OUTPUT = 64 * 1024 * 1024

function sshUser(host: HostSpec): string | undefined {
  return host.kind === 'ssh' ? host.user : undefined
}

/** Wraps a script so it runs as `user` without ever asking for a password. */
export function asUser(script: string, user: string): string {
  return `sudo -n -u ${quote(user)} -- sh -c ${quote(script)}`
}

function classify(stderr: string, exitCode: number | null, viaSsh: boolean): HostFailure | undefined {
  if (/sudo: (a password is required|a terminal is required)|sudo: .*password/i.test(stderr)) return 'sudo-password'
  if (!viaSsh || exitCode !== 255) return undefined
  if (/Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED|No .*host key is known/i.test(stderr)) return 'host-key'
  if (/Permission denied|Too many authentication failures/i.test(stderr)) return 'auth'
  return 'unreachable'
}

export function createHost(options: HostOptions): HostClient {
  const { host, sshOpts, deployUser } = options
  const currentUser = process.env.USER ?? process.env.LOGNAME
  const where = host.kind === 'local' ? 'local' : `ssh ${host.user ? `${host.user}@` : ''}${host.host}${host.port ? `:${host.port}` : ''}`
  return {
    where,
    async run(req) {
      const needsUser = req.asDeployUser && deployUser && deployUser !== (sshUser(host) ?? currentUser)
      const script = needsUser ? asUser(req.script, deployUser) : req.script
      const started = performance.now()
      const [file, args] =
        host.kind === 'local'
          ? ['sh', ['-c', script]]
          : [
              'ssh',
              [
                '-o', 'BatchMode=yes',
                '-o', `ConnectTimeout=${Math.max(1, Math.min(30, Math.floor(req.timeoutMs / 2000)))}`,
                ...sshOpts,
                ...(host.port ? ['-p', String(host.port)] : []),
                ...(host.user ? ['-l', host.user] : []),
                '--', host.host, script,
              ],
            ]
      const result = await execa(file, args, {
        reject: false,
        timeout: req.timeoutMs,
        forceKillAfterDelay: 1000,
        stdin: 'ignore',
        maxBuffer: MAX_OUTPUT,
        env: options.env,
        extendEnv: true,
      })
      const durationMs = Math.round(performance.now() - started)
      const stdout = typeof result.stdout === 'string' ? result.stdout : ''
      const stderr = typeof result.stderr === 'string' ? result.stderr : ''
      const exitCode = result.exitCode ?? null
      let failure: HostFailure | undefined
      if (result.timedOut) failure = 'timeout'
      else if (result.failed && exitCode === undefined && !result.isTerminated) failure = 'spawn'
      else failure = classify(stderr, exitCode, host.kind === 'ssh')
      return { command: script, stdout, stderr, exitCode, durationMs, ...(failure ? { failure } : {}) }
    },
  }
}

/** Substitutes `{svc}` and `{unit}` into an operator's command template, each value quoted. */
export function fillTemplate(template: string, values: { svc: string; unit: string }): string {
  return template.replaceAll('{svc}', quote(values.svc)).replaceAll('{unit}', quote(values.unit))
}

export { quote, quoteAll }
