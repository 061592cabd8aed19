// The host seam without a network: quoting proven through a real sh (hostile values never run),
// the sudo modes against a fake sudo, timeouts that kill the whole process group, ssh's argv, and
// how ssh's and sudo's stderr is classified.
import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { loadConfig, type HostSpec } from '../../helpers/config/load.ts'
import { asRoot, asUser, classifyFailure, createHost, fillTemplate, hostScript, quote, type HostOptions } from '../../helpers/seams/host.ts'
import { sshArgs, sshDestination, sshTarget } from '../../helpers/seams/ssh-args.ts'
import { check, ROOT_USER, SUDO, testRequiring } from '../support/prerequisites.ts'

const dir = mkdtempSync(join(tmpdir(), 'armproof-host-'))
const sentinel = join(dir, 'pwned')
const bin = join(dir, 'bin')
const sudoLog = join(dir, 'sudo.log')
const PATH = `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`
/** The tests through a real sudo (as root, to another user): not run without it, outside CI. */
const sudoTest = testRequiring(check(SUDO, ROOT_USER))

/** Values that would run `touch <sentinel>` if any layer of quoting were missing. */
const HOSTILE = [
  `x;touch ${sentinel}`,
  `$(touch ${sentinel})`,
  `\`touch ${sentinel}\``,
  `'; touch ${sentinel}; '`,
  `"; touch ${sentinel}; "`,
  `x' && touch ${sentinel} && echo '`,
  `a\nb; touch ${sentinel}`,
  `-n; touch ${sentinel}`,
  `\\'$(touch ${sentinel})\\'`,
  `*`,
]

function script(path: string, text: string): void {
  writeFileSync(path, text)
  chmodSync(path, 0o755)
}

beforeAll(() => {
  execFileSync('mkdir', ['-p', bin])
  // A fake sudo: logs its argv, wants a password when FAKE_SUDO=password, else runs the command
  // after `--` with FAKE_ROOT=1 (which the fake permission-checked read below looks for).
  script(
    join(bin, 'sudo'),
    `#!/bin/sh
printf '%s\\n' "$*" >> ${quote(sudoLog)}
if [ "\${FAKE_SUDO:-}" = password ]; then echo 'sudo: a password is required' >&2; exit 1; fi
while [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done
shift
FAKE_ROOT=1 exec "$@"
`,
  )
  // A read that is refused unless run under (fake) sudo; NOTFOUND=1 fails another way.
  script(
    join(bin, 'rootread'),
    `#!/bin/sh
if [ "\${NOTFOUND:-}" = 1 ]; then echo 'cat: /proc/99999/cmdline: No such file or directory' >&2; exit 1; fi
if [ "\${FAKE_ROOT:-}" = 1 ]; then echo 'radiance --flag 1'; exit 0; fi
echo 'cat: /proc/4242/cmdline: Permission denied' >&2
exit 1
`,
  )
})

afterAll(() => rmSync(dir, { recursive: true, force: true }))

const local: HostSpec = { kind: 'local' }
const hostile = (extra: Partial<HostOptions> = {}) => createHost({ host: local, sshOpts: [], deployUser: null, ...extra })

describe('quoting: hostile values reach the host as data, never as code', () => {
  test.each(HOSTILE)('fillTemplate with {svc} = %j runs nothing', async (value) => {
    const host = hostile()
    const r = await host.run({ script: fillTemplate('printf "%s|%s" {svc} {unit}', { svc: value, unit: value }), timeoutMs: 5000 })
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toBe(`${value}|${value}`)
    expect(existsSync(sentinel)).toBe(false)
  })

  test.each(HOSTILE)('a process name %j in pidof is one word', async (value) => {
    const r = await hostile().run({ script: `printf '%s' ${quote(value)}`, timeoutMs: 5000 })
    expect(r.stdout).toBe(value)
    expect(existsSync(sentinel)).toBe(false)
  })

  sudoTest.each(HOSTILE)('asUser keeps %j literal through sudo -u … sh -c (real sudo)', async (value) => {
    const r = await hostile().run({ script: asUser(`printf '%s' ${quote(value)}`, 'root'), timeoutMs: 5000 })
    expect(r.exitCode, `${r.stderr} (is sudo installed? .ci/run installs it)`).toBe(0)
    expect(r.stdout).toBe(value)
    expect(existsSync(sentinel)).toBe(false)
  })

  sudoTest.each(HOSTILE)('a hostile user name %j in asUser is one argument to sudo', async (value) => {
    const r = await hostile().run({ script: asUser('true', value), timeoutMs: 5000 })
    expect(r.exitCode).not.toBe(0)
    expect(existsSync(sentinel)).toBe(false)
  })

  sudoTest.each(HOSTILE)('the ssh remote command keeps %j literal through the login shell and sh -c', async (value) => {
    // What sshd does with the last word: `$SHELL -c "<it>"`; the script inside is the deploy-user wrap.
    const inner = asUser(fillTemplate('printf "%s" {svc}', { svc: value, unit: 'u' }), 'root')
    const remote = sshArgs({ kind: 'ssh', host: 'h' }, [], inner, 5000).at(-1)!
    const out = execFileSync('sh', ['-c', remote], { encoding: 'utf8', timeout: 5000 })
    expect(out).toBe(value)
    expect(existsSync(sentinel)).toBe(false)
  })

  sudoTest('a deploy user different from the current one runs the script through sudo -n -u, quoted', async () => {
    const host = createHost({ host: local, sshOpts: [], deployUser: 'nobody' })
    const r = await host.run({ script: `id -un; printf '%s' ${quote(HOSTILE[0]!)}`, asDeployUser: true, timeoutMs: 5000 })
    expect(r.command).toMatch(/^sudo -n -u nobody -- sh -c '/)
    expect(r.stdout).toBe(`nobody\n${HOSTILE[0]}`)
    expect(existsSync(sentinel)).toBe(false)
  })
})

describe('sudo modes for root-only reads', () => {
  const env = { PATH }
  const run = async (
    sudo: 'auto' | 'always' | 'never',
    req: { privileged?: boolean; extraEnv?: Record<string, string>; user?: string } = {},
  ) => {
    rmSync(sudoLog, { force: true })
    const host = createHost({
      host: local,
      sshOpts: [],
      deployUser: null,
      sudo,
      localUser: req.user ?? 'operator',
      env: { ...env, ...req.extraEnv },
    })
    const r = await host.run({ script: 'rootread', privileged: req.privileged ?? true, timeoutMs: 5000 })
    const calls = existsSync(sudoLog) ? readFileSync(sudoLog, 'utf8').trim().split('\n') : []
    return { r, calls }
  }

  test('never: the plain read only; its refusal is the command result, not a host failure', async () => {
    const { r, calls } = await run('never')
    expect(calls).toEqual([])
    expect(r.exitCode).toBe(1)
    expect(r.stderr).toMatch(/Permission denied/)
    expect(r.failure).toBeUndefined()
  })

  test('always: sudo -n -- sh -c <script> from the start', async () => {
    const { r, calls } = await run('always')
    expect(r.command).toBe(asRoot('rootread'))
    expect(calls).toEqual(['-n -- sh -c rootread'])
    expect(r.stdout.trim()).toBe('radiance --flag 1')
  })

  test('always as root: no sudo at all', async () => {
    const { r, calls } = await run('always', { user: 'root', extraEnv: { FAKE_ROOT: '1' } })
    expect(calls).toEqual([])
    expect(r.command).toBe('rootread')
  })

  test('auto: plain first, then once with sudo -n after "Permission denied"', async () => {
    const { r, calls } = await run('auto')
    expect(calls).toEqual(['-n -- sh -c rootread'])
    expect(r.exitCode).toBe(0)
    expect(r.command).toBe(asRoot('rootread'))
    expect(r.stdout.trim()).toBe('radiance --flag 1')
  })

  test('auto: no retry for another failure, nor for a read that is not privileged', async () => {
    expect((await run('auto', { extraEnv: { NOTFOUND: '1' } })).calls).toEqual([])
    const notPrivileged = await run('auto', { privileged: false })
    expect(notPrivileged.calls).toEqual([])
    expect(notPrivileged.r.exitCode).toBe(1)
  })

  test('auto: a sudo that wants a password is failure sudo-password, at once', async () => {
    const { r, calls } = await run('auto', { extraEnv: { FAKE_SUDO: 'password' } })
    expect(calls).toHaveLength(1)
    expect(r.failure).toBe('sudo-password')
  })

  test('always: a sudo that wants a password is failure sudo-password', async () => {
    const { r } = await run('always', { extraEnv: { FAKE_SUDO: 'password' } })
    expect(r.failure).toBe('sudo-password')
  })

  test('hostScript: the deploy-user switch wins over privileged, and the same user needs no switch', () => {
    const ctx = { deployUser: 'deploy', user: 'ops', sudo: 'always' as const }
    expect(hostScript({ script: 'x', asDeployUser: true, privileged: true }, ctx)).toBe(asUser('x', 'deploy'))
    expect(hostScript({ script: 'x', asDeployUser: true }, { ...ctx, user: 'deploy' })).toBe('x')
    expect(hostScript({ script: 'x', privileged: true }, { ...ctx, sudo: 'never' })).toBe('x')
    expect(hostScript({ script: 'x', privileged: true }, ctx)).toBe(asRoot('x'))
  })

  sudoTest('a real sudo -n that wants a password (an unprivileged user, no sudoers rule) is sudo-password', async () => {
    const host = hostile()
    const r = await host.run({ script: 'sudo -n -u nobody -- sh -c ' + quote('sudo -n true'), timeoutMs: 5000 })
    expect(r.failure).toBe('sudo-password')
  })
})

describe('timeouts end the whole process group', () => {
  test('sleep 30 with a 300 ms timeout ends with failure timeout', async () => {
    const r = await hostile().run({ script: 'sleep 30', timeoutMs: 300 })
    expect(r.failure).toBe('timeout')
    expect(r.exitCode).toBeNull()
  })

  test('a child that ignores SIGTERM is killed too', async () => {
    const r = await hostile().run({ script: "trap '' TERM; sh -c \"trap '' TERM; sleep 30\"; echo never", timeoutMs: 300 })
    expect(r.failure).toBe('timeout')
    expect(r.stdout).not.toContain('never')
  })

  test('a background grandchild holding the pipe does not hold the result', async () => {
    const marker = `armproof-bg-${process.pid}`
    const r = await hostile().run({ script: `sh -c 'sleep 30; : ${marker}' & echo done`, timeoutMs: 10_000 })
    expect(r.failure).toBeUndefined()
    expect(r.exitCode).toBe(0)
    expect(r.stdout.trim()).toBe('done')
    expect(r.durationMs).toBeLessThan(5000)
    // …and is ended with the group rather than left behind.
    await new Promise((resolve) => setTimeout(resolve, 100))
    const left = execFileSync('sh', ['-c', `ps -eo args | grep -c '[s]leep 30; : ${marker}' || true`], { encoding: 'utf8' }).trim()
    expect(left).toBe('0')
  })

  test('a command that cannot start is failure spawn', async () => {
    const host = createHost({ host: { kind: 'ssh', host: 'h' }, sshOpts: [], deployUser: null, sshCommand: join(dir, 'no-such-ssh') })
    const r = await host.run({ script: 'true', timeoutMs: 2000 })
    expect(r.failure).toBe('spawn')
  })
})

describe('ssh argv', () => {
  const spec: HostSpec = { kind: 'ssh', user: 'deploy', host: 'gpu-7', port: 2222 }
  const ssh = (h: HostSpec) => h as Extract<HostSpec, { kind: 'ssh' }>

  test('BatchMode, a connect timeout and keepalives come first, then --host, then --ssh-opts in order, then -- host command', () => {
    const args = sshArgs(ssh(spec), ['-i', '/k', '-o', 'BatchMode=no', '-J', 'bastion'], 'pidof radiance', 10_000)
    expect(args).toEqual([
      '-o',
      'BatchMode=yes',
      '-o',
      'ConnectTimeout=5',
      '-o',
      'ServerAliveInterval=4',
      '-o',
      'ServerAliveCountMax=2',
      '-o',
      'ConnectionAttempts=1',
      '-T',
      '-p',
      '2222',
      '-l',
      'deploy',
      '-i',
      '/k',
      '-o',
      'BatchMode=no',
      '-J',
      'bastion',
      '--',
      'gpu-7',
      "sh -c 'pidof radiance'",
    ])
  })

  test('the connect timeout follows the command timeout, within 1..30 s', () => {
    const connect = (ms: number) => sshArgs(ssh({ kind: 'ssh', host: 'h' }), [], 'true', ms).find((a) => a.startsWith('ConnectTimeout='))
    expect(connect(300)).toBe('ConnectTimeout=1')
    expect(connect(30_000)).toBe('ConnectTimeout=15')
    expect(connect(600_000)).toBe('ConnectTimeout=30')
    expect(sshArgs(ssh({ kind: 'ssh', host: 'h' }), [], 'true', 1000)).not.toContain('-p')
  })

  test('the destination is read as ssh reads it: the first port and user given win', () => {
    const h = ssh({ kind: 'ssh', host: '127.0.0.1' })
    expect(sshDestination(h, [])).toEqual({ port: 22 })
    expect(sshDestination(h, ['-i', '/k', '-p', '2222'])).toEqual({ port: 2222 })
    expect(sshDestination(h, ['-p2200', '-p', '2222'])).toEqual({ port: 2200 })
    expect(sshDestination(h, ['-o', 'Port=2201', '-l', 'ops'])).toEqual({ port: 2201, user: 'ops' })
    expect(sshDestination(h, ['-oUser=ops', '-o', 'Port 2202'])).toEqual({ port: 2202, user: 'ops' })
    expect(sshDestination(h, ['-i', '-p', '-p', '7'])).toEqual({ port: 7 })
    expect(sshDestination(ssh(spec), ['-p', '7', '-l', 'x'])).toEqual({ port: 2222, user: 'deploy' })
    expect(sshTarget(ssh(spec), [])).toBe('deploy@gpu-7:2222')
    expect(sshTarget(ssh({ kind: 'ssh', host: '::1' }), ['-p', '2'])).toBe('[::1]:2')
  })

  test('where and target name the user, host and effective port', async () => {
    const fake = join(dir, 'fake-ssh')
    script(fake, '#!/bin/sh\nprintf \'%s\\n\' "$@"\n')
    const host = createHost({
      host: { kind: 'ssh', user: 'root', host: '127.0.0.1' },
      sshOpts: ['-p', '2222'],
      deployUser: null,
      sshCommand: fake,
    })
    expect(host.where).toBe('ssh root@127.0.0.1:2222')
    expect(host.target).toBe('root@127.0.0.1:2222')
    const r = await host.run({ script: 'pidof radiance', timeoutMs: 4000 })
    expect(r.target).toBe('root@127.0.0.1:2222')
    expect(r.command).toBe('pidof radiance')
    const argv = r.stdout.trim().split('\n')
    expect(argv.slice(0, 2)).toEqual(['-o', 'BatchMode=yes'])
    expect(argv.slice(-5)).toEqual(['-p', '2222', '--', '127.0.0.1', "sh -c 'pidof radiance'"])
  })
})

describe('a pod (--runtime kubernetes)', () => {
  test('its host commands run here under sh (kubectl is run here), never through ssh or its master connection, alone or batched', async () => {
    const fake = join(dir, 'pod-never-ssh')
    script(fake, '#!/bin/sh\necho ssh was run >&2\nexit 255\n')
    const host = createHost({ host: { kind: 'pod', pod: 'llm-7-0', namespace: 'llm' }, sshOpts: [], deployUser: null, sshCommand: fake })
    expect([host.where, host.target]).toEqual(['local', 'local'])
    const alone = await host.run({ script: 'echo "$0 here"', timeoutMs: 4000 })
    expect([alone.stdout.trim(), alone.exitCode, alone.failure, alone.stderr]).toEqual(['sh here', 0, undefined, ''])
    const batched = await host.runAll!([
      { script: 'echo one', timeoutMs: 4000 },
      { script: 'echo two >&2; exit 3', timeoutMs: 4000 },
    ])
    expect(batched.map((r) => [r.stdout.trim(), r.stderr.trim(), r.exitCode, r.failure])).toEqual([
      ['one', '', 0, undefined],
      ['', 'two', 3, undefined],
    ])
  })
})

describe('classification of ssh and sudo stderr', () => {
  test.each([
    ['ssh: connect to host 127.0.0.1 port 2222: Connection refused', 255, 'unreachable'],
    ['ssh: connect to host 10.9.9.9 port 22: Connection timed out', 255, 'unreachable'],
    ['ssh: Could not resolve hostname gpu-7: Name or service not known', 255, 'unreachable'],
    ['kex_exchange_identification: read: Connection reset by peer\nConnection reset by 127.0.0.1 port 2222', 255, 'unreachable'],
    ['Timeout, server 127.0.0.1 not responding.', 255, 'unreachable'],
    [
      'No ED25519 host key is known for [127.0.0.1]:2222 and you have requested strict checking.\nHost key verification failed.',
      255,
      'host-key',
    ],
    [
      '@@@@@@@@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\n@@@@@@@@@@@\nHost key verification failed.',
      255,
      'host-key',
    ],
    ['root@127.0.0.1: Permission denied (publickey).', 255, 'auth'],
    ['Received disconnect from 127.0.0.1 port 22:2: Too many authentication failures', 255, 'auth'],
    ['sudo: a password is required', 1, 'sudo-password'],
    [
      'sudo: a terminal is required to read the password; either use the -S option to read from standard input or configure an askpass helper',
      1,
      'sudo-password',
    ],
    ['ops is not in the sudoers file.', 1, 'sudo-password'],
    ['cat: /proc/4242/cmdline: Permission denied', 1, undefined],
    ['Error: no container with name or ID "x" found: no such container', 125, undefined],
  ] as const)('%j (exit %i) over ssh → %s', (stderr, exitCode, kind) => {
    expect(classifyFailure(stderr, exitCode, true)).toBe(kind)
  })

  test('locally, exit 255 and "Permission denied" are the command result; sudo still is sudo-password', () => {
    expect(classifyFailure('root@h: Permission denied (publickey).', 255, false)).toBeUndefined()
    expect(classifyFailure('sudo: a password is required', 1, false)).toBe('sudo-password')
  })
})

describe('--sudo / VERIFY_SUDO', () => {
  const base = ['--svc', 'demo', '--knob', 'PREFILL_INTERLEAVE', '--base-url', 'http://127.0.0.1:8000']
  test('defaults to auto; a flag beats env; each mode is accepted', () => {
    const sudoOf = (argv: string[], env: Record<string, string> = {}) => {
      const r = loadConfig({ argv: [...base, ...argv], env })
      return r.ok ? r.target.sudo : r.problems.map((p) => p.message).join('; ')
    }
    expect(sudoOf([])).toBe('auto')
    expect(sudoOf(['--sudo', 'always'])).toBe('always')
    expect(sudoOf([], { VERIFY_SUDO: 'never' })).toBe('never')
    expect(sudoOf(['--sudo', 'auto'], { VERIFY_SUDO: 'never' })).toBe('auto')
  })

  test('anything else is refused in one line before anything runs', () => {
    const r = loadConfig({ argv: [...base, '--sudo', 'yes; touch /tmp/x'], env: {} })
    expect(r.ok).toBe(false)
    if (!r.ok)
      expect(r.problems.map((p) => p.message)).toEqual([
        '--sudo: invalid sudo mode "yes; touch /tmp/x"; must be one of: auto, always, never',
      ])
  })
})
