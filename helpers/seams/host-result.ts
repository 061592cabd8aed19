// What the host seam (./host.ts) takes and gives: a request, its result, the client, and how a
// failure outside the command itself is told from its stderr. Apart from host.ts so that the
// batch runner (./host-batch.ts) reads them without a cycle.

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
  /** A read many wait on (one shared by the targets of a host): it starts before the host's other waiting reads. */
  urgent?: boolean
}

/**
 * `output-cut`: the command printed more than the host-output cap (`MAX_HOST_OUTPUT`); the output
 * was cut there and the command stopped, so what came back is partial and is never judged.
 * `cancelled`: its caller's signal aborted (a read started ahead for a run that ended before a
 * step took it, ./read-ahead.ts; first contact's host side once the endpoint refused): ended with
 * its process group, or never started. No step is ever answered one, so none is recorded.
 */
export type HostFailure = 'timeout' | 'unreachable' | 'host-key' | 'auth' | 'sudo-password' | 'spawn' | 'output-cut' | 'cancelled'

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
  /** `signal` (as runAll's): aborting it ends the command with its process group, or keeps it from starting; the answer is `cancelled`. */
  run(req: HostRun, signal?: AbortSignal): Promise<HostResult>
  /**
   * Runs the requests in one host call where it can (one process, one ssh session), each with
   * its own output, status and timeout, as if each had run alone: results in the same order.
   * Absent: the client runs one request at a time. `signal` aborting ends the call with its
   * process group (a part waiting for a host session never starts): each part not yet ended is
   * answered `cancelled`.
   */
  runAll?(reqs: readonly HostRun[], signal?: AbortSignal): Promise<HostResult[]>
  /**
   * Makes this read together with the reads of the same kind that other clients of the same host
   * ask at about the same time (./host-gather.ts), and answers this client's part (`Gather.view`).
   * Absent where reads are not shared (a recording, a replay): the caller runs its own read.
   * `signal` (as runAll's): this client's part is cancelled; the shared read itself only when no
   * other client still waits on it.
   */
  gather?<K>(g: Gather<K>, key: K, timeoutMs: number, signal?: AbortSignal): Promise<HostResult>
}

/** The answer to a read its caller cancelled (`signal` aborted): nothing of it is judged. */
export function cancelledResult(command: string, target?: string): HostResult {
  return {
    command,
    stdout: '',
    stderr: '',
    exitCode: null,
    failure: 'cancelled',
    durationMs: 0,
    ...(target !== undefined ? { target } : {}),
  }
}

/** A read that several targets of one host may share: one script for all their keys, and each key's part of its result. */
export interface Gather<K> {
  /** What is read (one gathering per kind and host). */
  kind: string
  privileged?: boolean
  asDeployUser?: boolean
  /** Keys that ask the same read are asked once. */
  keyOf(key: K): string
  script(keys: readonly K[]): string
  /** One key's result, as if its own read had run when the shared one did. */
  view(result: HostResult, keys: readonly K[], key: K): HostResult
}

const SUDO_PASSWORD_RE =
  /sudo: (?:a password is required|a terminal is required|no tty present|.*incorrect password)|is not in the sudoers file|is not allowed to (?:execute|run sudo)|may not run sudo/i
const HOST_KEY_RE =
  /Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED|No \S+ host key is known|host key for .* has changed|Host key .* not found/i
const AUTH_RE =
  /Permission denied \((?:publickey|password|keyboard-interactive|hostbased|gssapi)|Too many authentication failures|no mutual signature|Authentication failed/i

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
