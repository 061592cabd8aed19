// The reference engine's switches for one engine proven whole (issue 20): it parses its command
// line as vLLM's parser does (`_` for `-`, unique prefixes, the last occurrence wins, `--config
// FILE` from its working folder), exports its real process start time, answers `podman inspect`
// as a container's main process when asked to, and a proxy forwards to it.
import { execFile } from 'node:child_process'
import { afterAll, describe, expect, test } from 'vitest'
import { CONFIG_FLAG, parseFlags } from '../../engine/flags.ts'
import { loadYaml } from '../../engine/profiles/yaml.ts'
import { startEngine, type EngineHandle, type EngineOptions } from '../../engine/launch.ts'
import { startProxy } from '../../engine/proxy.ts'
import { parseStat } from '../../helpers/engine/proc.ts'
import { readFileSync } from 'node:fs'

const FAST = ['--load-closed-ms', '0', '--load-503-ms', '0']
// parseFlags reads a --config file with the YAML library an engine imports only when it is given one.
await loadYaml()
const engines: EngineHandle[] = []
afterAll(async () => {
  await Promise.all(engines.map((e) => e.stop()))
})
async function launch(options: EngineOptions): Promise<EngineHandle> {
  const e = await startEngine({ processName: `rsw-${Math.random().toString(36).slice(2, 8)}`, ...options })
  engines.push(e)
  await e.waitReady()
  return e
}

const sh = (script: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    execFile('sh', ['-c', script], { env: { ...process.env, ...env } }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    )
  })

const interleave = (argv: string[], files: Record<string, string> = {}): unknown => {
  const r = parseFlags(argv, (p) => {
    if (!(p in files)) throw Object.assign(new Error('no such file'), { code: 'ENOENT' })
    return files[p]!
  })
  return r.kind === 'config' ? r.config.prefillInterleave : r
}

describe("radiance's command line, as vLLM's parser reads it", () => {
  test('_ for -, a unique prefix, the last occurrence', () => {
    expect(interleave(['--prefill_interleave', '1'])).toBe(1)
    expect(interleave(['--prefill-inter', '3'])).toBe(3)
    expect(interleave(['--prefill-interleave', '1', '--prefill-inter=0'])).toBe(0)
    expect(interleave(['--p', '1'])).toMatchObject({
      kind: 'error',
      errors: expect.arrayContaining([expect.stringMatching(/^ambiguous option: --p could match --port, --prefill-interleave/)]),
    })
  })
  test('--config FILE: YAML beneath the command line; twice, unreadable or not YAML is refused at boot', () => {
    const files = {
      'serve.yaml': 'prefill_interleave: 2\nstager-depth: 5\n',
      'bad.yaml': 'a: [1\n',
      'float.yaml': 'prefill-interleave: 1.0\n',
    }
    expect(interleave([CONFIG_FLAG, 'serve.yaml'], files)).toBe(2)
    expect(interleave([CONFIG_FLAG, 'serve.yaml', '--prefill-interleave', '4'], files)).toBe(4)
    expect(interleave([`${CONFIG_FLAG}=serve.yaml`], files)).toBe(2)
    expect(interleave([CONFIG_FLAG, 'a', CONFIG_FLAG, 'b'], files)).toMatchObject({
      kind: 'error',
      errors: ['--config given 2 times: one config file only'],
    })
    expect(interleave([CONFIG_FLAG, 'gone.yaml'], files)).toMatchObject({
      kind: 'error',
      errors: ['config file gone.yaml: cannot be read (ENOENT)'],
    })
    expect(interleave([CONFIG_FLAG, 'bad.yaml'], files)).toMatchObject({ kind: 'error' })
    // Python's str(1.0) is "1.0", which an int flag refuses, as vLLM's would.
    expect(interleave([CONFIG_FLAG, 'float.yaml'], files)).toMatchObject({
      kind: 'error',
      errors: ["invalid int value '1.0' for --prefill-interleave"],
    })
  })

  test("a launched engine reads --config from its working folder, and its ledger resolves the file's value", async () => {
    const e = await launch({ args: [...FAST, '--config', 'serve.yaml'], files: { 'serve.yaml': 'prefill-interleave: 3\n' } })
    expect(readFileSync(e.ledgerPath, 'utf8')).toContain('--prefill-interleave 3 (default 0)')
    expect(readFileSync(`/proc/${e.pids[0]}/cmdline`, 'utf8').split('\0')).toContain('serve.yaml')
  })
})

describe('the host side of one engine', () => {
  test('process_start_time_seconds is its own /proc/<pid>/stat start time, as prometheus_client computes it', async () => {
    const e = await launch({ args: FAST })
    const page = await (await fetch(`${e.baseUrl}/metrics`)).text()
    const printed = Number(/^process_start_time_seconds (\S+)$/m.exec(page)![1])
    const stat = parseStat(readFileSync(`/proc/${e.pids[0]}/stat`, 'utf8'))!
    const btime = Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))![1])
    expect(printed).toBeCloseTo(btime + stat.startTicks / 100, 2)
    // A start time, not the moment of the first scrape.
    expect(printed).toBeLessThan(Date.now() / 1000)
  })

  test('the podman shim answers inspect with the pid only for a container engine, and "no such object" otherwise', async () => {
    const inside = await launch({ args: FAST, svc: 'sw-in', container: true })
    const bare = await launch({ args: FAST, svc: 'sw-bare' })
    const ask = (e: EngineHandle, svc: string) => sh(`podman inspect --format '{{.State.Pid}}' ${svc}`, e.env)
    expect(await ask(inside, 'sw-in')).toMatchObject({ code: 0, stdout: `${inside.pids[0]}\n` })
    expect(await ask(inside, 'other')).toMatchObject({ code: 125, stderr: 'Error: no such object: "other"\n' })
    expect(await ask(bare, 'sw-bare')).toMatchObject({ code: 125, stderr: 'Error: no such object: "sw-bare"\n' })
    expect((await sh(`podman inspect --format '{{.Id}}' sw-in`, inside.env)).code).toBe(125)
  })

  test('a proxy forwards to the engine, and holds its own socket', async () => {
    const e = await launch({ args: FAST })
    const proxy = await startProxy(e.port)
    try {
      const res = await fetch(`${proxy.baseUrl}/health`)
      expect(res.status).toBe(200)
      expect(await res.json()).toMatchObject({ status: 'ok' })
      expect(proxy.port).not.toBe(e.port)
    } finally {
      await proxy.stop()
    }
  })
})
