// The parts of serve's lifecycle a unit can take: the options of its budgets, the run folders a
// killed serve left (swept by its successor), a run's lines without the paths of its folder, and
// the terms a served verify keeps (its parent, its deadline), read from env only as serve writes them.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { SERVED_RUN_ENV, servedRunOf } from '../../helpers/cli/served-run.ts'
import { parseServeOptions } from '../../helpers/serve/options.ts'
import { RUN_DIR_PREFIX, runEnv, scrubRunPaths, sweepRunDirs } from '../../helpers/serve/run.ts'
import { tempDir } from '../support/temp-dir.ts'

const base = ['--targets', 't.yaml', '--no-token']

describe('options of the budgets', () => {
  test('defaults, and each read from its flag or env twin', () => {
    const d = parseServeOptions(base, {}, '/')
    expect(d.ok && d.options).toMatchObject({
      queueWaitMs: 60_000,
      keepRunsMs: 3_600_000,
      maxConnections: 256,
      maxConnectionsPerClient: 32,
      headerTimeoutMs: 10_000,
      requestTimeoutMs: 15_000,
      metricsListen: null,
    })
    const set = parseServeOptions(
      [...base, '--queue-wait', '0', '--max-connections', '64', '--metrics-listen', '127.0.0.1:9090'],
      { ARMPROOF_SERVE_MAX_CONNECTIONS_PER_CLIENT: '8', ARMPROOF_SERVE_HEADER_TIMEOUT: '2s', ARMPROOF_SERVE_KEEP_RUNS: '10m' },
      '/',
    )
    expect(set.ok && set.options).toMatchObject({
      queueWaitMs: 0,
      maxConnections: 64,
      maxConnectionsPerClient: 8,
      headerTimeoutMs: 2000,
      keepRunsMs: 600_000,
      metricsListen: { host: '127.0.0.1', port: 9090 },
    })
  })

  test('every problem at once: bad durations, a per-client share above the total, a request limit below the header limit, the probes on --listen', () => {
    const r = parseServeOptions(
      [
        ...base,
        '--queue-wait',
        'soon',
        '--keep-runs',
        '0',
        '--max-connections',
        '8',
        '--max-connections-per-client',
        '16',
        '--header-timeout',
        '20s',
        '--request-timeout',
        '5s',
        '--metrics-listen',
        '127.0.0.1:8080',
      ],
      {},
      '/',
    )
    expect(r.ok).toBe(false)
    const text = r.ok ? '' : r.problems.join('\n')
    for (const said of [
      '--queue-wait: "soon" is not a duration',
      '--keep-runs: "0" is not a positive duration',
      '--max-connections-per-client 16 is above --max-connections 8',
      '--request-timeout 5s is shorter than --header-timeout 20s',
      "--metrics-listen: 127.0.0.1:8080 is --listen's own address",
    ])
      expect(text).toContain(said)
  })
})

describe('run folders', () => {
  test("a dead serve's folders are swept by its successor; a live serve's (and our own) are left", () => {
    const root = tempDir('armproof-sweep-')
    // A pid that was a process and is no more: a child that has exited.
    const dead = Number(execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }))
    const names = [
      `${RUN_DIR_PREFIX}${dead}-Ab12Cd`,
      `${RUN_DIR_PREFIX}${process.ppid}-Ef34Gh`,
      `${RUN_DIR_PREFIX}${process.pid}-Ij56Kl`,
      'armproof-serve-token-x1',
    ]
    for (const n of names) mkdirSync(join(root, n))
    expect(sweepRunDirs(root)).toBe(1)
    expect(names.map((n) => existsSync(join(root, n)))).toEqual([false, true, true, true])
  })

  test("a run's lines name neither its report's path nor its folder (both gone once it is answered)", () => {
    const dir = '/tmp/armproof-serve-4242-Zx81Qa'
    expect(scrubRunPaths(`  next: armproof writeback --report ${dir}/report.json --vault <dir>`, dir)).toBe(
      '  next: armproof writeback --report <report.json> --vault <dir>',
    )
    expect(scrubRunPaths(`cannot write ${dir}/x`, dir)).toBe("cannot write (serve's run folder)/x")
  })
})

describe('a served verify', () => {
  test("its terms come from serve's env value only, and never pass on from serve's own env", () => {
    const ok = { parent: 4242, dir: '/tmp/armproof-serve-4242-Zx81Qa', deadline: Date.now() + 1000, graceMs: 10_000 }
    expect(servedRunOf({ [SERVED_RUN_ENV]: JSON.stringify(ok) })).toEqual(ok)
    for (const bad of [{ ...ok, dir: '/home/me' }, { ...ok, parent: 1 }, { ...ok, dir: 'relative/armproof-serve-x' }, 'not json'])
      expect(servedRunOf({ [SERVED_RUN_ENV]: typeof bad === 'string' ? bad : JSON.stringify(bad) })).toBeUndefined()
    expect(servedRunOf({})).toBeUndefined()
    expect(runEnv({ [SERVED_RUN_ENV]: JSON.stringify(ok), PATH: '/bin' })).not.toHaveProperty(SERVED_RUN_ENV)
  })

  test('a served verify whose parent is gone stops itself and removes its folder; one past its deadline stops too', () => {
    const dir = tempDir(`${RUN_DIR_PREFIX}${process.pid}-`)
    const script = `
      const { watchServedRun } = await import(${JSON.stringify(new URL('../../helpers/cli/served-run.ts', import.meta.url).href)})
      watchServedRun(process.env, (code) => process.exit(code))
      setInterval(() => {}, 1000)`
    const run = (terms: object) =>
      execFileSync(process.execPath, ['--input-type=module', '-e', script], {
        env: { PATH: process.env.PATH, [SERVED_RUN_ENV]: JSON.stringify(terms) },
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: 10_000,
      })
    // Its "parent" is a pid that is not its parent: gone, as after serve's SIGKILL.
    const statusOf = (terms: object): { status: number; stderr: string } => {
      try {
        run(terms)
      } catch (error) {
        return { status: (error as { status: number }).status, stderr: String((error as { stderr: string }).stderr) }
      }
      throw new Error('did not stop')
    }
    const orphan = statusOf({ parent: 2, dir, deadline: Date.now() + 60_000, graceMs: 5000 })
    expect([orphan.status, orphan.stderr]).toEqual([143, expect.stringContaining(', which started this run, is gone')])
    expect(existsSync(dir)).toBe(false)
    const kept = tempDir(`${RUN_DIR_PREFIX}${process.pid}-`)
    const late = statusOf({ parent: process.pid, dir: kept, deadline: Date.now() + 300, graceMs: 5000 })
    expect([late.status, late.stderr]).toEqual([143, expect.stringContaining("this run passed its deadline (serve's --run-timeout)")])
    // Its parent lives: the folder is serve's to remove.
    expect(existsSync(kept)).toBe(true)
  })
})
