// The host seam: every command on the engine's host (pidof, /proc, ledger, --help, systemctl)
// runs through a HostClient, locally for `--host local` (and for a pod: kubectl runs here, and the
// reads in the pod go through `kubectl exec`, helpers/engine/runtime.ts), else over ssh in BatchMode. Every
// command has a timeout (the whole process group is killed when it runs out); nothing can wait
// for a password (sudo is always `sudo -n`, ssh always `-o BatchMode=yes`).
import { spawn, type ChildProcessByStdio } from 'node:child_process'
import { userInfo } from 'node:os'
import type { Readable } from 'node:stream'
import type { HostSpec, SudoMode } from '../config/load.ts'
import { quote, quoteAll } from '../config/shell.ts'

export interface HostRun {
  /** A POSIX sh script; every value substituted into it must already be quoted. */
  script: string
  /** Run as the deploy user (rootless podman storage is per user). */
  asDeployUser?: boolean
  /**
   * A read that may need root (e.g. /proc/<pid>/cmdline under hidepid). With `--sudo never` it
   * runs plainly; `always` runs it under `sudo -n`; `auto` runs it plainly and retries once under
   * `sudo -n` only when the plain run was refused (permission denied / operation not permitted).
   */
  privileged?: boolean
  timeoutMs: number
}

/**
 * `output-cut`: the command printed more than the host-output cap (`MAX_HOST_OUTPUT`); the output
 * was cut there and the command stopped, so what came back is partial and is never judged.
 */
export type HostFailure = 'timeout' | 'unreachable' | 'host-key' | 'auth' | 'sudo-password' | 'spawn' | 'output-cut'

export type { SudoMode }

export interface HostResult {
  /** The command as it ran on the host (without ssh's options), for messages and fixtures. */
  command: string
  stdout: string
  stderr: string
  exitCode: number | null
  /** Set when the command could not run to completion for a reason outside the command itself. */
  failure?: HostFailure
  durationMs: number
  /** Where it ran: "local", or the ssh destination with its port, e.g. "root@127.0.0.1:2222". */
  target?: string
}

export interface HostClient {
  /** "local" or "ssh deploy@gpu-7:22": where commands run, for messages. */
  readonly where: string
  /** "local" or the ssh destination with its effective port, e.g. "root@127.0.0.1:2222". */
  readonly target?: string
  run(req: HostRun): Promise<HostResult>
}

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
/** After SIGTERM to the command's process group, how long before SIGKILL. */
const KILL_GRACE_MS = 300
/** After the process exited (or was killed), how long to wait for its output to drain. */
const DRAIN_MS = 200

/** Wraps a script so it runs as `user` without ever asking for a password. */
export function asUser(script: string, user: string): string {
  return `sudo -n -u ${quote(user)} -- sh -c ${quote(script)}`
}

/** Wraps a script so it runs as root without ever asking for a password. */
export function asRoot(script: string): string {
  return `sudo -n -- sh -c ${quote(script)}`
}

const SUDO_PASSWORD_RE =
  /sudo: (?:a password is required|a terminal is required|no tty present|.*incorrect password)|is not in the sudoers file|is not allowed to (?:execute|run sudo)|may not run sudo/i
const HOST_KEY_RE = /Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED|No \S+ host key is known|host key for .* has changed|Host key .* not found/i
const AUTH_RE = /Permission denied \((?:publickey|password|keyboard-interactive|hostbased|gssapi)|Too many authentication failures|no mutual signature|Authentication failed/i
const PERMISSION_RE = /permission denied|operation not permitted/i

/** What went wrong outside the command itself, from its stderr and exit code. */
export function classifyFailure(stderr: string, exitCode: number | null, viaSsh: boolean): HostFailure | undefined {
  if (viaSsh && exitCode === 255) {
    if (HOST_KEY_RE.test(stderr)) return 'host-key'
    if (AUTH_RE.test(stderr)) return 'auth'
    if (!SUDO_PASSWORD_RE.test(stderr)) return 'unreachable'
  }
  if (SUDO_PASSWORD_RE.test(stderr)) return 'sudo-password'
  return undefined
}

/** The options that decide where ssh goes, read the way ssh does (the first value given wins). */
export function sshDestination(host: Extract<HostSpec, { kind: 'ssh' }>, sshOpts: readonly string[]): { user?: string; port: number } {
  let user = host.user
  let port = host.port
  const take = (key: string, value: string): void => {
    const k = key.toLowerCase()
    if (k === 'port' && port === undefined && /^\d{1,5}$/.test(value)) port = Number(value)
    if (k === 'user' && user === undefined && value !== '') user = value
  }
  for (let i = 0; i < sshOpts.length; i++) {
    const a = sshOpts[i]!
    const next = sshOpts[i + 1]
    if (a === '--') break
    // -p 2222 / -p2222, -l user / -luser, -o Port=2222 / -oUser=deploy / -o "Port 2222"
    const m = /^-([plo])(.*)$/.exec(a)
    if (m) {
      const [, letter, rest] = m as unknown as [string, 'p' | 'l' | 'o', string]
      let value = rest
      if (value === '') {
        if (next === undefined) break
        value = next
        i++
      }
      if (letter === 'p') take('port', value)
      else if (letter === 'l') take('user', value)
      else {
        const kv = /^\s*([A-Za-z]+)\s*(?:=|\s)\s*(.*?)\s*$/.exec(value)
        if (kv) take(kv[1]!, kv[2]!)
      }
    } else if (/^-[BbcDEeFIiJLmOPQRSWw]$/.test(a)) {
      i++ // an option that takes the next word as its value
    }
  }
  return { ...(user !== undefined ? { user } : {}), port: port ?? 22 }
}

/** `user@host:port` (IPv6 in brackets), for messages. */
export function sshTarget(host: Extract<HostSpec, { kind: 'ssh' }>, sshOpts: readonly string[]): string {
  const { user, port } = sshDestination(host, sshOpts)
  const name = host.host.includes(':') ? `[${host.host}]` : host.host
  return `${user ? `${user}@` : ''}${name}:${port}`
}

/**
 * ssh's argv for one remote command. Our own `-o` options come first, so the user's `--ssh-opts`
 * cannot undo them (ssh keeps the first value given): BatchMode (never prompt), a connect timeout
 * and keepalives derived from the command's timeout (a dead peer cannot hang). The remote login
 * shell gets `sh -c '<script>'`, so the script is read by sh whatever that shell is.
 */
export function sshArgs(host: Extract<HostSpec, { kind: 'ssh' }>, sshOpts: readonly string[], script: string, timeoutMs: number): string[] {
  const seconds = Math.max(1, Math.floor(timeoutMs / 1000))
  const connect = Math.max(1, Math.min(30, Math.ceil(seconds / 2)))
  const alive = Math.max(1, Math.min(15, Math.ceil(seconds / 3)))
  return [
    '-o', 'BatchMode=yes',
    '-o', `ConnectTimeout=${connect}`,
    '-o', `ServerAliveInterval=${alive}`,
    '-o', 'ServerAliveCountMax=2',
    '-o', 'ConnectionAttempts=1',
    '-T',
    ...(host.port ? ['-p', String(host.port)] : []),
    ...(host.user ? ['-l', host.user] : []),
    ...sshOpts,
    '--', host.host,
    `sh -c ${quote(script)}`,
  ]
}

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
export function hostScript(req: Pick<HostRun, 'script' | 'asDeployUser' | 'privileged'>, ctx: { deployUser: string | null; user: string | undefined; sudo: SudoMode }): string {
  if (req.asDeployUser && ctx.deployUser && ctx.deployUser !== ctx.user) return asUser(req.script, ctx.deployUser)
  if (req.privileged && ctx.sudo === 'always' && ctx.user !== 'root') return asRoot(req.script)
  return req.script
}

interface Exec {
  stdout: string
  stderr: string
  exitCode: number | null
  timedOut: boolean
  /** The output passed the cap: what is kept is its first `maxOutput` bytes. */
  cut: boolean
  spawnError?: string
}

/**
 * Runs a program in its own process group with stdin closed; when `timeoutMs` runs out the whole
 * group gets SIGTERM, then SIGKILL, so a grandchild holding the pipes cannot keep us waiting.
 *
 * Not execa (the project's choice elsewhere, e.g. the tests), although execa 10 has each piece
 * but one: `killDescendants`, `timeout` with `forceKillAfterDelay` and `maxBuffer` (in bytes with
 * `encoding: 'buffer'`, per stream) do what the timers below do. The piece it lacks: its
 * subprocess is a promise with no 'exit' event, and the promise waits for the pipes to close, so a
 * command that exits while a background grandchild keeps its stdout open (`… & echo done`) would
 * come back as a timeout after the whole host timeout instead of its output 200 ms after it exited
 * (test/host.test.ts, "a background grandchild holding the pipe"). Loading execa also costs
 * about 100 ms of CPU per `pnpm verify` start (a sixth of a replayed run), for the one spawn here.
 */
function exec(file: string, args: readonly string[], timeoutMs: number, env: NodeJS.ProcessEnv, maxOutput: number): Promise<Exec> {
  return new Promise((resolve) => {
    let child: ChildProcessByStdio<null, Readable, Readable>
    try {
      child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env })
    } catch (error) {
      resolve({ stdout: '', stderr: '', exitCode: null, timedOut: false, cut: false, spawnError: (error as Error).message })
      return
    }
    const out: Buffer[] = []
    const err: Buffer[] = []
    let size = 0
    let cut = false
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      if (cut) return
      if (size + chunk.length > maxOutput) {
        // Past the cap: keep what fits, say so, and stop the command (its output is not judged).
        into.push(chunk.subarray(0, maxOutput - size))
        size = maxOutput
        cut = true
        killGroup('SIGTERM')
        timers.push(setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS))
        timers.push(setTimeout(() => finish(), KILL_GRACE_MS + DRAIN_MS))
        return
      }
      size += chunk.length
      into.push(chunk)
    }
    child.stdout.on('data', collect(out))
    child.stderr.on('data', collect(err))
    let timedOut = false
    let settled = false
    let exited = false
    let exitCode: number | null = null
    let open = 2
    const timers: NodeJS.Timeout[] = []
    const killGroup = (signal: NodeJS.Signals): void => {
      try {
        if (child.pid) process.kill(-child.pid, signal)
      } catch {
        // already gone
      }
    }
    const finish = (spawnError?: string): void => {
      if (settled) return
      settled = true
      for (const t of timers) clearTimeout(t)
      child.stdout.destroy()
      child.stderr.destroy()
      resolve({
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        exitCode,
        timedOut,
        cut,
        ...(spawnError !== undefined ? { spawnError } : {}),
      })
    }
    const closed = (): void => {
      if (--open === 0 && exited) finish()
    }
    child.stdout.on('close', closed)
    child.stderr.on('close', closed)
    child.on('error', (error) => finish(error.message))
    child.on('exit', (code) => {
      exited = true
      exitCode = code
      if (open === 0) finish()
      else {
        // A background grandchild still holds the pipes: give the output a moment, then end the
        // rest of the group (host commands are reads; nothing they leave behind is wanted).
        timers.push(
          setTimeout(() => {
            killGroup('SIGKILL')
            finish()
          }, DRAIN_MS),
        )
      }
    })
    timers.push(
      setTimeout(() => {
        timedOut = true
        exitCode = null
        killGroup('SIGTERM')
        timers.push(setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS))
        timers.push(setTimeout(() => finish(), KILL_GRACE_MS + DRAIN_MS))
      }, timeoutMs),
    )
  })
}

export function createHost(options: HostOptions): HostClient {
  const { host, sshOpts, deployUser } = options
  const sudo = options.sudo ?? 'auto'
  const user = hostUser(options)
  const target = host.kind === 'ssh' ? sshTarget(host, sshOpts) : 'local'
  const where = host.kind === 'ssh' ? `ssh ${target}` : 'local'
  const env: NodeJS.ProcessEnv = { ...process.env, ...options.env }

  const attempt = async (script: string, timeoutMs: number): Promise<HostResult> => {
    const started = performance.now()
    const [file, args] = host.kind === 'ssh' ? [options.sshCommand ?? 'ssh', sshArgs(host, sshOpts, script, timeoutMs)] : ['sh', ['-c', script]]
    const r = await exec(file, args, Math.max(1, timeoutMs), env, options.maxOutputBytes ?? MAX_HOST_OUTPUT)
    const durationMs = Math.round(performance.now() - started)
    let failure: HostFailure | undefined
    if (r.spawnError !== undefined) failure = 'spawn'
    else if (r.cut) failure = 'output-cut'
    else if (r.timedOut) failure = 'timeout'
    else failure = classifyFailure(r.stderr, r.exitCode, host.kind === 'ssh')
    const stderr = r.spawnError !== undefined ? `${r.stderr}${r.stderr ? '\n' : ''}${file}: ${r.spawnError}` : r.stderr
    return { command: script, stdout: r.stdout, stderr, exitCode: r.exitCode, durationMs, target, ...(failure ? { failure } : {}) }
  }

  return {
    where,
    target,
    async run(req) {
      const started = performance.now()
      const script = hostScript(req, { deployUser, user, sudo })
      const first = await attempt(script, req.timeoutMs)
      const refused = first.failure === undefined && first.exitCode !== 0 && PERMISSION_RE.test(first.stderr)
      const retry = req.privileged && sudo === 'auto' && script === req.script && user !== 'root' && refused
      if (!retry) return first
      const left = req.timeoutMs - (performance.now() - started)
      if (left < 50) return first
      const second = await attempt(asRoot(req.script), left)
      return { ...second, durationMs: Math.round(performance.now() - started) }
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
  return template.replace(/\{([a-z]+)\}/g, (whole, name: string) => {
    if (!Object.hasOwn(values, name)) return whole
    const v = values[name]
    return v === null || v === undefined ? '' : typeof v === 'string' ? quote(v) : quoteAll(v)
  })
}

export { quote, quoteAll }
