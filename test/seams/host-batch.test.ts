// Several host reads in one call (HostClient.runAll, helpers/seams/host-batch.ts), through a real
// sh: each part comes back as it would alone (output, stderr, status), whatever it prints (NULs,
// no final newline, lines that look like the batch's own markers); a part out of time or output
// ends with that failure alone and the parts after it still run; a call that never got through
// gives every part its failure; and the same through the spawner (helpers/seams/spawner.ts).
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execa } from 'execa'
import { afterAll, describe, expect, test, vi } from 'vitest'
import { batchTag } from '../../helpers/seams/exec.ts'
import { LARGE_RSS, useSpawner } from '../../helpers/seams/executor.ts'
import { batchScript, newNonce, splitBatch } from '../../helpers/seams/host-batch.ts'
import { createHost, quote, type HostResult, type HostRun } from '../../helpers/seams/host.ts'
import { pick, prng } from '../support/prng.ts'
import { ROOT } from '../support/run-verify.ts'

const dir = mkdtempSync(join(tmpdir(), 'armproof-batch-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const local = (extra = {}) => createHost({ host: { kind: 'local' }, sshOpts: [], deployUser: null, ...extra })
const alone = (r: HostResult) => ({ stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode, failure: r.failure })

/** A script printing `text` exactly (any byte but NUL through printf's octal escapes), to stdout or stderr, then exiting `code`. */
function printing(out: string, err: string, code: number): string {
  const esc = (t: string) => [...Buffer.from(t, 'utf8')].map((b) => `\\${b.toString(8).padStart(3, '0')}`).join('')
  return `printf '${esc(out)}'; printf '${esc(err)}' >&2; exit ${code}`
}

describe('a batch answers each part as if it had run alone', () => {
  test('random outputs, statuses and marker look-alikes: runAll equals run, part by part (seeded)', async () => {
    const host = local()
    const nonce = newNonce()
    const bits = [
      '',
      'x',
      '\n',
      'line\n',
      'no newline',
      '\u00e9\u4e2d',
      '@@ap-',
      batchTag('0'.repeat(24)),
      `${batchTag('f'.repeat(24))}end 0 0\n`,
      `\n${batchTag(nonce)}end 1 7\n`,
      '@@armproof stat 1\n',
      '\t  \t',
      '%s%d\\',
      '\'"`$(x)',
    ]
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const random = prng(seed)
      const reqs: HostRun[] = Array.from({ length: 1 + Math.floor(random() * 6) }, () => {
        const text = () => Array.from({ length: Math.floor(random() * 5) }, () => pick(random, bits)).join('')
        return { script: printing(text(), text(), pick(random, [0, 0, 1, 2, 3, 127, 255])), timeoutMs: 5000 }
      })
      const together = await host.runAll!(reqs)
      const apart = await Promise.all(reqs.map((r) => host.run(r)))
      expect(together.map(alone), `seed ${seed}`).toEqual(apart.map(alone))
      expect(together.map((r) => r.command)).toEqual(reqs.map((r) => r.script))
    }
  })

  test('NUL bytes, a part that exits, one that reads stdin (closed), an unbalanced parenthesis in a string', async () => {
    const r = await local().runAll!([
      { script: "printf 'a\\0b\\0'", timeoutMs: 5000 },
      { script: 'echo before; exit 4; echo after', timeoutMs: 5000 },
      { script: 'cat; echo "read $?"', timeoutMs: 5000 },
      { script: "echo ') ( ;; esac'", timeoutMs: 5000 },
    ])
    expect(r.map((x) => [x.stdout, x.exitCode])).toEqual([
      ['a\0b\0', 0],
      ['before\n', 4],
      ['read 0\n', 0],
      [') ( ;; esac\n', 0],
    ])
  })

  test('a part out of time ends with failure timeout after its own timeout; the parts before keep theirs, the parts after still run', async () => {
    const started = performance.now()
    const r = await local().runAll!([
      { script: 'echo one', timeoutMs: 5000 },
      { script: 'echo partial; sleep 30', timeoutMs: 400 },
      { script: 'echo three', timeoutMs: 5000 },
    ])
    expect(performance.now() - started).toBeLessThan(5000)
    expect(r.map((x) => [x.stdout, x.exitCode, x.failure])).toEqual([
      ['one\n', 0, undefined],
      ['partial\n', null, 'timeout'],
      ['three\n', 0, undefined],
    ])
    expect(r[1]!.durationMs).toBeGreaterThanOrEqual(400)
  })

  test('a part past the output cap ends output-cut alone; the next part runs', async () => {
    const r = await local({ maxOutputBytes: 4096 }).runAll!([
      { script: 'head -c 100000 /dev/zero | tr "\\0" x', timeoutMs: 5000 },
      { script: 'echo next', timeoutMs: 5000 },
    ])
    expect(r[0]!.failure).toBe('output-cut')
    expect(r[0]!.stdout.length).toBeLessThanOrEqual(4096)
    expect([r[1]!.stdout, r[1]!.failure]).toEqual(['next\n', undefined])
  })

  test("a call that never got through (ssh refused) gives each part the failure and ssh's words", async () => {
    const ssh = join(dir, 'refusing-ssh')
    writeFileSync(ssh, "#!/bin/sh\necho 'ssh: connect to host gpu-7 port 22: Connection refused' >&2\nexit 255\n")
    chmodSync(ssh, 0o755)
    const host = createHost({ host: { kind: 'ssh', host: 'gpu-7' }, sshOpts: [], deployUser: null, sshCommand: ssh })
    const r = await host.runAll!([
      { script: 'echo a', timeoutMs: 3000 },
      { script: 'echo b', timeoutMs: 3000 },
    ])
    for (const x of r) {
      expect(x.failure).toBe('unreachable')
      expect(x.stderr).toMatch(/Connection refused/)
    }
  })

  test('a privileged part refused as the plain user runs again under sudo -n (--sudo auto), alone', async () => {
    const bin = join(dir, 'sudo-bin')
    mkdirSync(bin)
    writeFileSync(join(bin, 'sudo'), '#!/bin/sh\nwhile [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done\nshift\nFAKE_ROOT=1 exec "$@"\n')
    writeFileSync(
      join(bin, 'rootread'),
      `#!/bin/sh\nif [ "\${FAKE_ROOT:-}" = 1 ]; then echo secret; exit 0; fi\necho "cat: /proc/1/cmdline: Permission denied" >&2\nexit 1\n`,
    )
    for (const f of ['sudo', 'rootread']) chmodSync(join(bin, f), 0o755)
    const host = local({ env: { PATH: `${bin}:${process.env.PATH}` }, localUser: 'nobody' })
    const r = await host.runAll!([
      { script: 'rootread', privileged: true, timeoutMs: 5000 },
      { script: 'rootread', timeoutMs: 5000 },
    ])
    expect(r.map((x) => [x.stdout, x.exitCode])).toEqual([
      ['secret\n', 0],
      ['', 1],
    ])
    expect(r[0]!.command).toBe(`sudo -n -- sh -c ${quote('rootread')}`)
  })
})

describe('the batch script and its split', () => {
  test('each part is handed to the shell quoted: a part cannot see or end the others', async () => {
    const nonce = newNonce()
    const script = batchScript(['X=1; echo "$X"', `echo "\${X:-unset}"`], nonce)
    const r = await local().run({ script, timeoutMs: 5000 })
    const split = splitBatch(r.stdout, r.stderr, nonce, 2)
    expect(split.parts.map((p) => p.stdout)).toEqual(['1\n', 'unset\n'])
  })

  test('what no part printed is said outside, on stderr; a part whose end never came has no status', () => {
    const nonce = 'n0'
    const tag = batchTag(nonce)
    const split = splitBatch(`${tag}begin 0\nhalf`, `banner\n${tag}begin 0\n`, nonce, 2)
    expect(split.parts).toEqual([
      { stdout: 'half', stderr: '', exitCode: null, began: true },
      { stdout: '', stderr: '', exitCode: null, began: false },
    ])
    expect(split.outside).toBe('banner\n')
  })
})

describe('through the spawner', () => {
  test("the program is the spawner's child, not this process's; a batch and a lone read come back the same", async () => {
    useSpawner(true)
    try {
      const host = local()
      const one = await host.run({ script: 'echo "$PPID"', timeoutMs: 5000 })
      const parent = Number(one.stdout.trim())
      expect(parent).not.toBe(process.pid)
      const reqs = [
        { script: printing('a\nb', 'e', 3), timeoutMs: 5000 },
        { script: 'echo two', timeoutMs: 5000 },
      ]
      expect((await host.runAll!(reqs)).map(alone)).toEqual([
        { stdout: 'a\nb', stderr: 'e', exitCode: 3, failure: undefined },
        { stdout: 'two\n', stderr: '', exitCode: 0, failure: undefined },
      ])
      const slow = await host.run({ script: 'sleep 30', timeoutMs: 300 })
      expect(slow.failure).toBe('timeout')
    } finally {
      useSpawner(false)
    }
  })
  test('a process of LARGE_RSS or more starts its host programs from the spawner (a fork costs it more), one spawner for all of them; a small one from itself', async () => {
    const parentIn = async (mib: number) => {
      const r = await execa(process.execPath, [join(ROOT, 'test/support/spawn-parent.ts'), String(mib)], {
        cwd: ROOT,
        env: { NODE_OPTIONS: '' },
      })
      return JSON.parse(String(r.stdout)) as { pid: number; parent: number; again: number; rss: number }
    }
    const [small, large] = await Promise.all([parentIn(0), parentIn(Math.ceil(LARGE_RSS / 2 ** 20))])
    expect(small.rss).toBeLessThan(LARGE_RSS)
    expect(small.parent).toBe(small.pid)
    expect(large.rss).toBeGreaterThanOrEqual(LARGE_RSS)
    expect(large.parent).not.toBe(large.pid)
    expect(large.parent).toBeGreaterThan(0)
    // One spawner for the process, not one per program.
    expect([small.again, large.again]).toEqual([small.pid, large.parent])
  })
  test('a spawner let go when its run ended is no broken one: the next run that asks starts a fresh one', async () => {
    const parentOf = async (): Promise<number> => Number((await local().run({ script: 'echo "$PPID"', timeoutMs: 5000 })).stdout.trim())
    useSpawner(true)
    const first = await parentOf()
    useSpawner(false)
    // The first spawner ends (its exit seen here) before the next run asks.
    await vi.waitFor(() => expect(() => process.kill(first, 0)).toThrow(), { timeout: 5000 })
    await new Promise((resolve) => setTimeout(resolve, 50))
    useSpawner(true)
    try {
      const second = await parentOf()
      expect([second === process.pid, second === first]).toEqual([false, false])
    } finally {
      useSpawner(false)
    }
  })
})
