// The ssh command line of one host command: where ssh goes, read from --host and --ssh-opts the way
// ssh reads them, and the argv that runs a script there without ever prompting (./host.ts runs it).
import type { HostSpec } from '../config/load.ts'
import { quote } from '../config/shell.ts'

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

/** How long an ssh master connection outlives its last session (it is closed when armproof exits). */
const CONTROL_PERSIST_S = 60

/**
 * ssh's argv for one remote command. Our own `-o` options come first, so the user's `--ssh-opts`
 * cannot undo them (ssh keeps the first value given): BatchMode (never prompt), a connect timeout
 * and keepalives derived from the command's timeout (a dead peer cannot hang). The remote login
 * shell gets `sh -c '<script>'`, so the script is read by sh whatever that shell is. With
 * `control` (a ControlPath, ./host-sessions.ts) the calls to one destination share one master
 * connection: a target's first contact, its reads and its re-check after the meter are one login.
 */
export function sshArgs(
  host: Extract<HostSpec, { kind: 'ssh' }>,
  sshOpts: readonly string[],
  script: string,
  timeoutMs: number,
  control?: string,
): string[] {
  const seconds = Math.max(1, Math.floor(timeoutMs / 1000))
  const connect = Math.max(1, Math.min(30, Math.ceil(seconds / 2)))
  const alive = Math.max(1, Math.min(15, Math.ceil(seconds / 3)))
  return [
    '-o',
    'BatchMode=yes',
    '-o',
    `ConnectTimeout=${connect}`,
    '-o',
    `ServerAliveInterval=${alive}`,
    '-o',
    'ServerAliveCountMax=2',
    '-o',
    'ConnectionAttempts=1',
    ...(control ? ['-o', 'ControlMaster=auto', '-o', `ControlPath=${control}`, '-o', `ControlPersist=${CONTROL_PERSIST_S}`] : []),
    '-T',
    ...(host.port ? ['-p', String(host.port)] : []),
    ...(host.user ? ['-l', host.user] : []),
    ...sshOpts,
    '--',
    host.host,
    `sh -c ${quote(script)}`,
  ]
}
