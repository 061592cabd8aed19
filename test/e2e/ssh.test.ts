// The host steps over a real sshd (started here on 127.0.0.1 with throwaway keys) against the
// reference engine: green through ssh; connection refused, an unknown host key and a sudo that
// wants a password each end inconclusive at once with a message that says what to fix; a
// hostile --svc never reaches ssh. Needs /usr/sbin/sshd, ssh, sudo and root (.ci/run installs the
// Debian packages openssh-server and sudo); without them the tests are not run and say why, or
// fail under CI=true (test/support/prerequisites.ts).
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type AddressInfo, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { freePort, startEngine, type EngineHandle } from '../../engine/launch.ts'
import { createHost, fillTemplate } from '../../helpers/seams/host.ts'
import { FAST, cleanup, runVerify, verdicts, type VerifyRun } from '../support/run-verify.ts'
import { verifyInProcess } from '../support/verify-in-process.ts'
import { check, requires, ROOT_USER, SSH_CLIENT, SSHD, SUDO } from '../support/prerequisites.ts'
import { createUser, startSshd, type Sshd, type TestUser } from '../support/sshd.ts'

const HOST_STEPS = ['dropins', 'help', 'argv', 'ledger'] as const
/** FAST's --host-timeout: every host step must end within it, whatever went wrong. */
const HOST_TIMEOUT_MS = 10_000

let engine: EngineHandle
let sshd: Sshd
let user: TestUser | undefined
const scratch = mkdtempSync(join(tmpdir(), 'armproof-ssh-'))
const sentinel = join(scratch, 'pwned')
const ready = requires(check(SSHD, SSH_CLIENT, SUDO, ROOT_USER))

beforeAll(async () => {
  if (!ready) return
  engine = await startEngine({ svc: 'ssh-ref', processName: `rssh-${randomBytes(2).toString('hex')}`, args: ['--prefill-interleave', '1'] })
  // The remote shell's PATH has the engine's podman/systemctl shims first (sshd_config SetEnv), so
  // the default --ledger-cmd/--help-cmd and `systemctl show` find them by name, as on a real host.
  sshd = await startSshd({ path: `${engine.binDir}:/usr/local/bin:/usr/bin:/bin` })
  await engine.waitReady()
})

afterAll(async () => {
  await Promise.allSettled([sshd?.stop(), engine?.stop()])
  user?.remove()
  rmSync(scratch, { recursive: true, force: true })
})

/** verify against the engine, over ssh; no local PATH shims: everything host-side goes through sshd. */
function verifyOverSsh(host: string, sshOpts: string, extra: readonly string[] = []): Promise<VerifyRun> {
  return runVerify(
    [
      '--svc',
      engine.svc,
      '--knob',
      'PREFILL_INTERLEAVE',
      '--value',
      '1',
      '--base-url',
      engine.baseUrl,
      '--process',
      engine.processName,
      ...FAST,
      '--host',
      host,
      '--ssh-opts',
      sshOpts,
      ...extra,
    ],
    { timeoutMs: 45_000 },
  )
}

function hostSteps(run: VerifyRun) {
  return (run.report?.steps ?? []).filter((s) => (HOST_STEPS as readonly string[]).includes(s.id))
}

/** All four host steps inconclusive, each within the host timeout, none hanging. */
function expectHostInconclusive(run: VerifyRun): void {
  expect(run.exitCode, run.stdout + run.stderr).toBe(3)
  const steps = hostSteps(run)
  expect(steps.map((s) => s.id).sort()).toEqual([...HOST_STEPS].sort())
  for (const s of steps) expect(s.durationMs, s.id).toBeLessThan(HOST_TIMEOUT_MS)
}

// The blocks run one after the other (the first counts sshd's connections; the second times ssh's
// own timeouts, away from the burst of verify runs the last one starts); the tests inside each side by side.
describe('a hostile --svc never reaches ssh', () => {
  // Refused before any proof step: the same verify() in this process (no node start, no vitest).
  describe.concurrent('refused with exit 2 before any connection', () => {
    test.each([
      ['--svc', ['--svc', `x;touch ${sentinel}`], {}],
      ['VERIFY_SVC', [], { VERIFY_SVC: `$(touch ${sentinel})` }],
      ['--deploy-user', ['--svc', 'ssh-ref', '--deploy-user', `root;touch ${sentinel}`], {}],
    ] as const)('a hostile %s', async (_name, args, env) => {
      const before = sshd.connections()
      const run = await verifyInProcess(
        [...args, '--knob', 'PREFILL_INTERLEAVE', '--base-url', engine.baseUrl, '--host', 'root@127.0.0.1', '--ssh-opts', sshd.sshOptsText],
        { env },
      )
      expect(run.exitCode, run.stdout + run.stderr).toBe(2)
      expect(run.stderr).toMatch(/nothing was contacted/)
      expect(existsSync(sentinel)).toBe(false)
      expect(sshd.connections()).toBe(before) // nothing else in this block connects
      cleanup(run)
    })
  })

  test('values that do reach the host (through fillTemplate) stay data through sshd and the login shell', async () => {
    const values = [`x;touch ${sentinel}`, `$(touch ${sentinel})`, `'; touch ${sentinel}; '`, `\`touch ${sentinel}\``]
    const host = createHost({ host: { kind: 'ssh', user: 'root', host: '127.0.0.1' }, sshOpts: sshd.sshOpts, deployUser: null })
    const script = values.map((v) => fillTemplate(`printf '%s\\n' {svc}`, { svc: v, unit: v })).join('; ')
    const r = await host.run({ script, timeoutMs: HOST_TIMEOUT_MS })
    expect(r.failure, r.stderr).toBeUndefined()
    expect(r.stdout).toBe(values.map((v) => `${v}\n`).join(''))
    expect(existsSync(sentinel)).toBe(false)
  })

  test('a verify over ssh is one login: first contact, the host reads (one session) and the re-check after the meter share one master connection', async () => {
    const before = sshd.connections()
    const run = await verifyOverSsh('root@127.0.0.1', sshd.sshOptsText)
    expect(run.exitCode, run.stdout + run.stderr).toBe(0)
    for (const s of hostSteps(run)) expect(s.where).toMatch(new RegExp(`^ssh root@127\\.0\\.0\\.1:${sshd.port}: `))
    expect(sshd.connections() - before).toBe(1) // nothing else in this block connects meanwhile
    cleanup(run)
  })
})

describe('every wait is bounded', () => {
  test.concurrent('a server that accepts and never speaks: ssh gives up at its ConnectTimeout, inside the command timeout', async () => {
    const sockets = new Set<Socket>()
    const server = createServer((socket) => sockets.add(socket)) // accepts, never sends a banner
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const port = (server.address() as AddressInfo).port
    try {
      const host = createHost({
        host: { kind: 'ssh', user: 'root', host: '127.0.0.1' },
        sshOpts: sshd.optsText({ port }).split(' '),
        deployUser: null,
      })
      const r = await host.run({ script: 'true', timeoutMs: 3000 })
      expect(r.failure, r.stderr).toBe('unreachable')
      expect(r.stderr).toMatch(/timed out/i)
      expect(r.target).toBe(`root@127.0.0.1:${port}`)
      expect(r.durationMs).toBeLessThan(3000 + 1000)
    } finally {
      for (const s of sockets) s.destroy()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  test.concurrent('a remote command that outlives its timeout ends with failure timeout (ssh is killed, not waited for)', async () => {
    const host = createHost({ host: { kind: 'ssh', user: 'root', host: '127.0.0.1' }, sshOpts: sshd.sshOpts, deployUser: null })
    const r = await host.run({ script: 'sleep 5', timeoutMs: 2000 })
    expect(r.failure).toBe('timeout')
    expect(r.durationMs).toBeLessThan(2000 + 1000)
  })
})

describe.concurrent('through a real sshd', () => {
  test('pnpm verify --host root@127.0.0.1 --ssh-opts "-i <key> -p <port> …" is green; the host steps ran over ssh', async () => {
    const before = sshd.connections()
    const run = await verifyOverSsh('root@127.0.0.1', sshd.sshOptsText)
    expect(run.exitCode, run.stdout + run.stderr).toBe(0)
    expect(run.report?.verdict).toBe('green')
    for (const s of hostSteps(run)) {
      expect(s.verdict, `${s.id}: ${s.observed}`).toBe('passed')
      expect(s.where).toMatch(new RegExp(`^ssh root@127\\.0\\.0\\.1:${sshd.port}: `))
    }
    // Over ssh at all (the tests beside it connect too; how many logins one verify makes is counted alone, above).
    expect(sshd.connections() - before).toBeGreaterThanOrEqual(1)
    cleanup(run)
  })

  test('--runtime process over ssh: --help is asked, through the same ssh, of the binary the engine process runs there', async () => {
    const run = await verifyOverSsh('root@127.0.0.1', sshd.sshOptsText, ['--runtime', 'process', '--unit', '{svc}'])
    expect(run.exitCode, run.stdout + run.stderr).toBe(0)
    const help = run.report?.steps.find((s) => s.id === 'help')
    // The reference engine is node running its entry script, through a link named after the engine.
    const argv = readFileSync(`/proc/${engine.pids[0]}/cmdline`, 'utf8').split('\0')
    expect(help?.evidence).toMatchObject({ binary: { pid: String(engine.pids[0]), asked: [argv[0], argv[1]] } })
    expect(help?.where).toBe(`ssh root@127.0.0.1:${sshd.port}: { ${argv[0]} ${argv[1]} --help ; } 2>&1`)
    cleanup(run)
  })

  describe('failures end inconclusive at once, saying what to fix', () => {
    test('connection refused: exit 3, the message names host and port', async () => {
      const closed = await freePort()
      const run = await verifyOverSsh(`root@127.0.0.1:${closed}`, sshd.optsText({ port: closed }))
      expectHostInconclusive(run)
      for (const s of hostSteps(run)) {
        expect(s.verdict).toBe('inconclusive')
        expect(s.observed).toMatch(/unreachable/)
        expect(`${s.where} ${s.observed}`).toContain(`127.0.0.1:${closed}`)
        expect(s.observed).toMatch(new RegExp(`127\\.0\\.0\\.1 port ${closed}: Connection refused`))
      }
      expect(run.stdout).toContain(`127.0.0.1:${closed}`)
      expect(verdicts(run.report).health).toBe('passed')
      cleanup(run)
    })

    test('unknown host key with BatchMode: exit 3 fast, the message says host key', async () => {
      const run = await verifyOverSsh('root@127.0.0.1', sshd.optsText({ knownHostsPath: sshd.emptyKnownHostsPath }))
      expectHostInconclusive(run)
      for (const s of hostSteps(run)) {
        expect(s.verdict).toBe('inconclusive')
        expect(s.observed).toMatch(/host-key/)
        expect(s.observed).toMatch(/Host key verification failed/)
        expect(s.next).toMatch(/host key/)
      }
      cleanup(run)
    })

    test('sudo that wants a password (an unprivileged ssh user, --deploy-user root): no hang, inconclusive with the sudoers hint', async () => {
      user = createUser()
      const run = await verifyOverSsh(`${user.name}@127.0.0.1`, sshd.sshOptsText, ['--deploy-user', 'root'])
      expectHostInconclusive(run)
      for (const id of ['ledger', 'help']) {
        const s = hostSteps(run).find((x) => x.id === id)!
        expect(s.verdict).toBe('inconclusive')
        expect(s.observed, id).toMatch(/sudo-password/)
        expect(s.observed).toMatch(/a password is required/)
        expect(s.next).toMatch(/NOPASSWD/)
        expect(s.where).toContain(`sudo -n -u root -- sh -c`)
      }
      cleanup(run)
    })
  })
})
