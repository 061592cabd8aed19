// A real sshd for the tests, on 127.0.0.1 and a free port, with throwaway host and user keys in
// a temp folder. Needs /usr/sbin/sshd (Debian's openssh-server; .ci/run installs it) and root
// (sshd must switch to the logged-in user). Everything it starts is stopped by stop(), and by an
// exit hook should a test runner die first.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { freePort } from '../../engine/launch.ts'

export const SSHD = '/usr/sbin/sshd'

export interface SshdOptions {
  /** PATH of every session (sshd_config `SetEnv`), e.g. the reference engine's binDir first. */
  path?: string
  /** Extra sshd_config lines. */
  config?: readonly string[]
}

export interface Sshd {
  port: number
  /** The user's private key (its public half is in authorized_keys, for every user). */
  keyPath: string
  /** known_hosts holding this sshd's host key. */
  knownHostsPath: string
  /** An empty known_hosts, for the unknown-host-key case. */
  emptyKnownHostsPath: string
  /** Hermetic client options: no ~/.ssh/config, only this key, only this known_hosts, strict checking, this port. */
  sshOpts: string[]
  /** The same, as one `--ssh-opts` string. */
  sshOptsText: string
  /** The `--ssh-opts` string with another port or known_hosts (the failure cases). */
  optsText(change: { port?: number; knownHostsPath?: string }): string
  /** Everything sshd logged so far (LogLevel VERBOSE, on stderr). */
  log(): string
  /** How many TCP connections sshd accepted so far. */
  connections(): number
  stop(): Promise<void>
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))
const live = new Set<ChildProcess>()
const dirs = new Set<string>()
const users = new Set<string>()
let hooked = false

function hookExit(): void {
  if (hooked) return
  hooked = true
  process.on('exit', () => {
    for (const c of live) c.kill('SIGKILL')
    for (const d of dirs) rmSync(d, { recursive: true, force: true })
    for (const u of users) {
      try {
        execFileSync('userdel', [u], { stdio: 'ignore', timeout: 5000 })
      } catch {
        // best effort
      }
    }
  })
}

function keygen(path: string): void {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'armproof-test', '-f', path], { stdio: 'ignore', timeout: 10_000 })
}

/** Resolves once 127.0.0.1:port accepts a connection; false after timeoutMs. */
async function accepts(port: number, timeoutMs: number, child: ChildProcess): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) return false
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect({ host: '127.0.0.1', port })
      const done = (v: boolean) => {
        s.destroy()
        resolve(v)
      }
      s.once('connect', () => done(true))
      s.once('error', () => done(false))
      s.setTimeout(500, () => done(false))
    })
    if (ok) return true
    await sleep(30)
  }
  return false
}

/** Every live descendant of pid (sshd forks one child per connection, which forks the session). */
function descendants(pid: number): number[] {
  const parent = new Map<number, number>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      // pid (comm) state ppid …: comm may hold spaces and parens, so read after the last ")".
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      parent.set(Number(entry), ppid)
    } catch {
      // gone meanwhile
    }
  }
  const found: number[] = []
  const walk = (p: number): void => {
    for (const [child, pp] of parent) {
      if (pp === p) {
        found.push(child)
        walk(child)
      }
    }
  }
  walk(pid)
  return found
}

function killAll(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
}

/** Quotes a path for the client options string (the paths are our own temp paths). */
function word(text: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`
}

export async function startSshd(options: SshdOptions = {}): Promise<Sshd> {
  if (!existsSync(SSHD)) throw new Error(`${SSHD} is missing: install openssh-server (.ci/run does)`)
  hookExit()
  const dir = mkdtempSync(join(tmpdir(), 'armproof-sshd-'))
  dirs.add(dir)
  // sshd reads authorized_keys as the logging-in user: let unprivileged test users read it.
  chmodSync(dir, 0o755)
  const hostKey = join(dir, 'host_key')
  const keyPath = join(dir, 'user_key')
  keygen(hostKey)
  keygen(keyPath)
  const authorized = join(dir, 'authorized_keys')
  writeFileSync(authorized, readFileSync(`${keyPath}.pub`))
  chmodSync(authorized, 0o644)
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 }) // privilege separation directory

  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    const cfg = join(dir, 'sshd_config')
    writeFileSync(
      cfg,
      [
        'ListenAddress 127.0.0.1',
        `Port ${port}`,
        `HostKey ${hostKey}`,
        `PidFile ${join(dir, 'sshd.pid')}`,
        'UsePAM no',
        'PermitRootLogin prohibit-password',
        'StrictModes no',
        `AuthorizedKeysFile ${authorized}`,
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'PubkeyAuthentication yes',
        'UseDNS no',
        'LogLevel VERBOSE',
        'MaxStartups 50',
        ...(options.path ? [`SetEnv PATH=${options.path}`] : []),
        ...(options.config ?? []),
        '',
      ].join('\n'),
    )
    const child = spawn(SSHD, ['-D', '-e', '-f', cfg], { stdio: ['ignore', 'ignore', 'pipe'] })
    live.add(child)
    child.once('exit', () => live.delete(child))
    child.on('error', () => {})
    let log = ''
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (chunk: string) => {
      log += chunk
    })
    if (!(await accepts(port, 5000, child))) {
      child.kill('SIGKILL')
      if (attempt < 3 && /Address already in use|Bind to port/.test(log)) continue
      rmSync(dir, { recursive: true, force: true })
      dirs.delete(dir)
      throw new Error(`sshd did not accept on 127.0.0.1:${port} within 5 s:\n${log}`)
    }
    const hostPub = readFileSync(`${hostKey}.pub`, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ')
    const knownHostsPath = join(dir, 'known_hosts')
    writeFileSync(knownHostsPath, `[127.0.0.1]:${port} ${hostPub}\n`)
    const emptyKnownHostsPath = join(dir, 'known_hosts.empty')
    writeFileSync(emptyKnownHostsPath, '')
    const opts = (change: { port?: number; knownHostsPath?: string } = {}): string[] => [
      '-F',
      'none',
      '-i',
      keyPath,
      '-o',
      'IdentitiesOnly=yes',
      '-o',
      `UserKnownHostsFile=${change.knownHostsPath ?? knownHostsPath}`,
      '-o',
      'GlobalKnownHostsFile=/dev/null',
      '-o',
      'StrictHostKeyChecking=yes',
      '-p',
      String(change.port ?? port),
    ]
    const sshOpts = opts()
    let stopping: Promise<void> | undefined
    return {
      port,
      keyPath,
      knownHostsPath,
      emptyKnownHostsPath,
      sshOpts,
      sshOptsText: sshOpts.map(word).join(' '),
      optsText: (change) => opts(change).map(word).join(' '),
      log: () => log,
      connections: () => (log.match(/^Connection from /gm) ?? []).length,
      stop() {
        stopping ??= (async () => {
          if (child.exitCode === null && child.signalCode === null) {
            // Sessions still open (a remote command that outlived its client) end with the server.
            if (child.pid) killAll(descendants(child.pid))
            const exited = once(child, 'exit')
            child.kill('SIGTERM')
            await Promise.race([exited, sleep(2000)])
            if (child.exitCode === null && child.signalCode === null) {
              child.kill('SIGKILL')
              await Promise.race([exited, sleep(2000)])
            }
          }
          rmSync(dir, { recursive: true, force: true })
          dirs.delete(dir)
        })()
        return stopping
      },
    }
  }
}

export interface TestUser {
  name: string
  remove(): void
}

/**
 * A throwaway unprivileged user (no home, /bin/sh, no password but not locked, so sshd lets it
 * in with the test key; not in sudoers, so `sudo -n` answers "a password is required").
 */
export function createUser(prefix = 'apf'): TestUser {
  hookExit()
  const name = `${prefix}${randomBytes(3).toString('hex')}`
  execFileSync('useradd', ['-M', '-d', '/', '-s', '/bin/sh', name], { stdio: 'pipe', timeout: 10_000 })
  users.add(name)
  execFileSync('usermod', ['-p', '*', name], { stdio: 'pipe', timeout: 10_000 })
  return {
    name,
    remove() {
      if (!users.has(name)) return
      users.delete(name)
      execFileSync('userdel', [name], { stdio: 'pipe', timeout: 10_000 })
    },
  }
}
