// An engine that an interpreter runs as a script, as a pip-installed vLLM runs (`…/bin/python3
// …/bin/vllm serve …`: pidof finds nothing), verified under --runtime process against the
// reference engine speaking vLLM, run as a script named like the engine (engine/launch.ts
// `script`): found by its script, also while it loads (its port not bound yet: waited for, never
// "nothing listens there", exit 2); its --help read from the binary it runs, never from a second
// build first on PATH; and a port another process holds is still not this engine.
import { execFileSync } from 'node:child_process'
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, test } from 'vitest'
import { freePort, startEngine, type EngineHandle } from '../../engine/launch.ts'
import { cleanup, runVerify, verdicts, type VerifyRun } from '../support/run-verify.ts'
import { removeTempDir, tempDir } from '../support/temp-dir.ts'

const engines: EngineHandle[] = []
const dirs: string[] = []
afterAll(async () => {
  await Promise.all(engines.map((e) => e.stop()))
  for (const d of dirs) removeTempDir(d)
})

// Process names are machine-wide: this run's own suffix keeps another checkout's run apart.
const RUN = process.pid % 100_000
const FAST = ['--health-budget', '20s', '--probe-timeout', '5s', '--host-timeout', '10s']

async function vllm(name: string, script: 'shebang' | 'env', more: { closedMs?: number; port?: number } = {}): Promise<EngineHandle> {
  const e = await startEngine({
    profile: 'vllm',
    svc: name,
    processName: name,
    script,
    args: ['--max-num-seqs', '8'],
    load: { closedMs: more.closedMs ?? 0, unavailableMs: 0 },
    ...(more.port !== undefined ? { port: more.port } : {}),
  })
  engines.push(e)
  return e
}

/** verify of MAX_NUM_SEQS=8 under --runtime process, the ledger from the engine's journal. */
function verifyArgs(e: EngineHandle, port = e.port): string[] {
  return [
    '--engine',
    'vllm',
    '--runtime',
    'process',
    '--svc',
    e.svc,
    '--process',
    e.processName,
    '--base-url',
    `http://127.0.0.1:${port}`,
    '--host',
    'local',
    '--ledger-cmd',
    'journalctl -u {svc} -o cat -n 100000',
    '--knob',
    'MAX_NUM_SEQS',
    '--value',
    '8',
    ...FAST,
  ]
}

const step = (run: VerifyRun, id: string) => run.report?.steps.find((s) => s.id === id)
const said = (run: VerifyRun) => `${run.stdout}\n${run.stderr}`

/** What `pidof` finds under a name: nothing, for a script an interpreter runs. */
function pidof(name: string): string {
  try {
    return execFileSync('pidof', [name], { encoding: 'utf8' }).trim()
  } catch {
    return ''
  }
}

describe('an engine an interpreter runs as a script named like it, under --runtime process', () => {
  test('is found by its script (pidof finds nothing) and verified green; --help asked of the interpreter and the script it runs', async () => {
    const e = await vllm(`vs-${RUN}`, 'shebang')
    await e.waitReady()
    const argv = execFileSync('cat', [`/proc/${e.pids[0]}/cmdline`], { encoding: 'utf8' })
      .split('\0')
      .slice(0, 3)
    expect(argv).toEqual([process.execPath, join(e.root, 'bin-engine', e.processName), 'serve'])
    expect(pidof(e.processName)).toBe('')
    const run = await runVerify(verifyArgs(e), { engine: e })
    try {
      expect(run.exitCode, said(run)).toBe(0)
      expect(verdicts(run.report)).toMatchObject({ help: 'passed', argv: 'passed', ledger: 'passed', health: 'passed', meter: 'skipped' })
      expect(step(run, 'argv')?.evidence).toMatchObject({ pid: e.pids[0], foundBy: 'listener' })
      const script = join(e.root, 'bin-engine', e.processName)
      expect(step(run, 'help')?.evidence).toMatchObject({ binary: { pid: String(e.pids[0]), script, asked: [process.execPath, script] } })
      expect(step(run, 'help')?.observed).toContain(`(asked ${process.execPath} running ${script}, as pid ${e.pids[0]} runs it`)
    } finally {
      cleanup(run)
    }
  })

  test('started before it listens (the process runs, its port not bound yet): verify waits for it and goes green, never exit 2', async () => {
    // Through `#!/usr/bin/env node`: the process is named node, only its command line names the script.
    const e = await vllm(`ve-${RUN}`, 'env', { closedMs: 4000 })
    expect(await fetch(e.baseUrl).catch((error: Error) => error)).toBeInstanceOf(Error)
    // Where no process is found under the name (what the lookup saw of a script before), the closed port is the operator's mistake: exit 2.
    const unnamed = verifyArgs(e).map((a) => (a === e.processName ? `vz-${RUN}` : a))
    const mistaken = await runVerify(unnamed, { engine: e })
    try {
      expect(mistaken.exitCode, said(mistaken)).toBe(2)
      expect(said(mistaken)).toContain(`nothing on this host listens on port ${e.port}`)
    } finally {
      cleanup(mistaken)
    }
    const run = await runVerify(verifyArgs(e), { engine: e })
    try {
      expect(run.exitCode, said(run)).toBe(0)
      expect(verdicts(run.report)).toMatchObject({ help: 'passed', argv: 'passed', health: 'passed' })
      expect(step(run, 'argv')?.evidence).toMatchObject({ pid: e.pids[0], foundBy: 'pidof' })
      // Found by its command line before it listened (its task name is node's), and waited for.
      expect(step(run, 'argv')?.observed).toContain(
        `is the only process named ${e.processName} (node running its script ${join(e.root, 'bin-engine', e.processName)})`,
      )
      expect(step(run, 'health')?.observed, said(run)).toMatch(/after [1-9]/)
    } finally {
      cleanup(run)
    }
  })

  test('a second build first on PATH, whose --help lacks the flag, is not what step help reads (asked by name, it is red)', async () => {
    const e = await vllm(`vp-${RUN}`, 'shebang')
    await e.waitReady()
    const other = tempDir('armproof-other-build-')
    dirs.push(other)
    mkdirSync(join(other, 'bin'))
    // Named as the profile's help command names the program (`vllm serve --help=all`): what a PATH lookup finds first.
    const fake = join(other, 'bin', 'vllm')
    writeFileSync(fake, '#!/bin/sh\necho "usage: vllm serve [-h] [--model MODEL] [--port PORT]"\n')
    chmodSync(fake, 0o755)
    const env = { PATH: `${join(other, 'bin')}:${e.env.PATH}` }
    const run = await runVerify(verifyArgs(e), { engine: e, env })
    try {
      expect(run.exitCode, said(run)).toBe(0)
      expect(step(run, 'help')).toMatchObject({ verdict: 'passed' })
      expect(JSON.stringify(step(run, 'help')?.evidence)).not.toContain(other)
    } finally {
      cleanup(run)
    }
    // The same run with the help asked of whatever `vllm` is first on PATH: that build's --help lacks the flag.
    const byName = await runVerify([...verifyArgs(e), '--help-cmd', 'vllm serve --help=all'], { engine: e, env })
    try {
      expect(byName.exitCode, said(byName)).toBe(1)
      expect(step(byName, 'help')).toMatchObject({ verdict: 'failed', observed: expect.stringContaining('does not define --max-num-seqs') })
    } finally {
      cleanup(byName)
    }
  })

  test('a port held by another process is still not this engine: not green, and not exit 2', async () => {
    const port = await freePort()
    // Another engine (another name) holds the port; the script engine, named on its command line for that port, still loads.
    const holder = await startEngine({
      profile: 'vllm',
      svc: `vh-${RUN}`,
      processName: `vh-${RUN}`,
      port,
      load: { closedMs: 0, unavailableMs: 0 },
    })
    engines.push(holder)
    await holder.waitReady()
    const e = await vllm(`vo-${RUN}`, 'shebang', { closedMs: 120_000, port })
    const run = await runVerify(verifyArgs(e, port), { engine: e })
    try {
      expect(run.exitCode, said(run)).toBe(3)
      expect(run.report?.verdict).toBe('inconclusive')
      expect(step(run, 'argv')).toMatchObject({
        verdict: 'inconclusive',
        observed: expect.stringContaining(
          `but nothing ties the endpoint to pid ${e.pids[0]}: port ${port} is served by pid ${holder.pids[0]} (${holder.processName}) on 127.0.0.1, not by pid ${e.pids[0]}`,
        ),
      })
    } finally {
      cleanup(run)
    }
  })
})
