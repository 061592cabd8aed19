// The emulated engines as launched processes (engine/launch.ts `startEngine({ profile })`): their
// argv is the real engine's own, and the host shims beside podman and systemctl answer for them:
// `docker logs/exec/inspect` and `kubectl logs/exec/get pod` in the CLIs' output formats.
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { parsePrometheusText } from '../../helpers/prom/parse.ts'
import { COMPILE_CACHE, ENGINE_ENTRY, startEngine } from '../../engine/launch.ts'
import type { EngineHandle } from '../../engine/launch.ts'
import { PROFILE_ENV } from '../../engine/env.ts'
import { helpAnswers } from '../../engine/profile-launch.ts'
import { builtinProfile } from '../../helpers/profiles/load.ts'

/** What the launcher adds to a vLLM command line that names no subcommand: a deployment serving tool calls (engine/profiles/index.ts). */
const TOOLS = ['--enable-auto-tool-choice', '--tool-call-parser', 'hermes']

interface Ran {
  code: number
  stdout: string
  stderr: string
}
function run(file: string, args: readonly string[], env: Record<string, string> = {}): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { env: { NODE_COMPILE_CACHE: COMPILE_CACHE, ...process.env, ...env }, timeout: 10_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) })
      },
    )
  })
}
const unique = (prefix: string): string => `${prefix}${Math.random().toString(36).slice(2, 7)}`

let vllm: EngineHandle
let radiance: EngineHandle
beforeAll(async () => {
  ;[vllm, radiance] = await Promise.all([
    startEngine({
      profile: 'vllm',
      svc: 'vllm-0',
      processName: unique('vllm-'),
      namespace: 'llm',
      args: ['--max-num-seqs', '8'],
      load: { closedMs: 0, unavailableMs: 0 },
    }),
    startEngine({ svc: 'rad-0', processName: unique('rad-'), args: ['--load-closed-ms', '0', '--load-503-ms', '0'] }),
  ])
  await Promise.all([vllm.waitReady(), radiance.waitReady()])
})
afterAll(async () => Promise.all([vllm?.stop(), radiance?.stop()]))

describe('a launched emulated engine', () => {
  test("its argv is the engine's own (no --profile, no fault switch) and pidof finds it under the engine's process name", async () => {
    expect(vllm.profile).toBe('vllm')
    const argv = readFileSync(`/proc/${vllm.pids[0]}/cmdline`, 'utf8').split('\0').filter(Boolean)
    expect(argv.slice(1)).toEqual([ENGINE_ENTRY, 'serve', 'Qwen/Qwen3-0.6B', ...TOOLS, '--max-num-seqs', '8', '--port', String(vllm.port)])
    expect((await run('pidof', [vllm.processName])).stdout.trim()).toBe(String(vllm.pids[0]))
    expect(readFileSync(vllm.ledgerPath, 'utf8')).toMatch(
      /non-default args: \{'model_tag': 'Qwen\/Qwen3-0\.6B', 'port': \d+, 'enable_auto_tool_choice': True, 'tool_call_parser': 'hermes', 'max_num_seqs': 8\}\n/,
    )
  })

  test('faults come through its env; a fault of another profile, or of radiance, is refused', async () => {
    const e = await startEngine({
      profile: 'vllm',
      processName: unique('vold-'),
      faults: ['vllm_old_metric_names'],
      load: { closedMs: 0, unavailableMs: 0 },
    })
    try {
      await e.waitReady()
      const page = parsePrometheusText(await (await fetch(`${e.baseUrl}/metrics`)).text())
      expect(page.family('vllm:gpu_cache_usage_perc')?.type).toBe('gauge')
    } finally {
      await e.stop()
    }
    await expect(startEngine({ profile: 'vllm', faults: ['llamacpp_log_differs'] })).rejects.toThrow(/not a fault of the vllm profile/)
    await expect(startEngine({ profile: 'sglang', faults: ['knob_ignored'] })).rejects.toThrow(/not a fault of the sglang profile/)
  })

  test('SGLang launched: the port is closed, then /health answers 503, then 200', async () => {
    const e = await startEngine({ profile: 'sglang', processName: unique('sgl-'), load: { closedMs: 300, unavailableMs: 500 } })
    try {
      const seen: (number | string)[] = []
      const deadline = Date.now() + 8000
      while (Date.now() < deadline && seen.at(-1) !== 200) {
        let state: number | string
        try {
          const res = await fetch(`${e.baseUrl}/health`, { signal: AbortSignal.timeout(1000) })
          state = res.status
          await res.arrayBuffer()
        } catch {
          state = 'closed'
        }
        if (seen.at(-1) !== state) seen.push(state)
        await new Promise((r) => setTimeout(r, 20))
      }
      expect(seen).toEqual(['closed', 503, 200])
    } finally {
      await e.stop()
    }
  })
})

describe('docker shim', () => {
  test("docker logs prints the log, --tail N its last lines; an unknown container is the daemon's error, exit 1", async () => {
    const all = await run('docker', ['logs', 'vllm-0'], vllm.env)
    expect(all).toEqual({ code: 0, stdout: readFileSync(vllm.ledgerPath, 'utf8'), stderr: '' })
    expect((await run('docker', ['logs', '--tail', '2', 'vllm-0'], vllm.env)).stdout.split('\n').filter(Boolean)).toHaveLength(2)
    expect(await run('docker', ['logs', 'nope'], vllm.env)).toEqual({
      code: 1,
      stdout: '',
      stderr: 'Error response from daemon: No such container: nope\n',
    })
  })

  test("docker inspect: the engine's host pid by --format '{{.State.Pid}}', a JSON array without --format, 'No such object' otherwise", async () => {
    expect(await run('docker', ['inspect', '--format', '{{.State.Pid}}', 'vllm-0'], vllm.env)).toEqual({
      code: 0,
      stdout: `${vllm.pids[0]}\n`,
      stderr: '',
    })
    expect((await run('docker', ['inspect', '-f', '{{.State.Status}} {{json .Config.Cmd}}', 'vllm-0'], vllm.env)).stdout).toBe(
      `running ${JSON.stringify(['serve', 'Qwen/Qwen3-0.6B', ...TOOLS, '--max-num-seqs', '8', '--port', String(vllm.port)])}\n`,
    )
    const whole = JSON.parse((await run('docker', ['container', 'inspect', 'vllm-0'], vllm.env)).stdout) as Array<{
      Name: string
      Id: string
      State: { Pid: number; Running: boolean }
      HostConfig: { NetworkMode: string }
    }>
    expect(whole).toHaveLength(1)
    expect(whole[0]).toMatchObject({ Name: '/vllm-0', State: { Pid: vllm.pids[0], Running: true }, HostConfig: { NetworkMode: 'host' } })
    expect((await run('docker', ['inspect', '-f', '{{.State.Pid}}', whole[0]!.Id.slice(0, 12)], vllm.env)).stdout).toBe(`${vllm.pids[0]}\n`)
    expect(await run('docker', ['inspect', '--format', '{{.State.Pid}}', 'nope'], vllm.env)).toEqual({
      code: 1,
      stdout: '',
      stderr: 'Error: No such object: nope\n',
    })
  })

  test("docker exec runs the engine's own command as the engine, host commands as they are, and 126 for a missing one", async () => {
    const own = await run(process.execPath, [ENGINE_ENTRY, '--profile', 'vllm', 'serve', '--help=max-num-seqs'])
    expect(own.stdout).toContain("Arguments matching 'max-num-seqs':")
    expect(await run('docker', ['exec', 'vllm-0', 'vllm', 'serve', '--help=max-num-seqs'], vllm.env)).toEqual(own)
    expect((await run('docker', ['exec', '-i', 'vllm-0', 'pidof', vllm.processName], vllm.env)).stdout.trim()).toBe(String(vllm.pids[0]))
    const missing = await run('docker', ['exec', 'vllm-0', 'no-such-binary'], vllm.env)
    expect(missing).toEqual({
      code: 126,
      stdout: '',
      stderr:
        'OCI runtime exec failed: exec failed: unable to start container process: exec: "no-such-binary": executable file not found in $PATH: unknown\n',
    })
    // radiance's `--help` through docker is byte for byte the engine's own, as through podman.
    expect(await run('docker', ['exec', 'rad-0', 'radiance', '--help'], radiance.env)).toEqual(
      await run(process.execPath, [ENGINE_ENTRY, '--help']),
    )
  })

  test("an emulated engine's help command lines are answered from a file: byte for byte what its process prints, with no node start", async () => {
    const own = await run(process.execPath, [ENGINE_ENTRY, '--profile', 'vllm', 'serve', '--help=all'])
    expect(own.stdout).toContain('--max-num-seqs')
    // A node that cannot start (its preload is missing) answers nothing; the file still does.
    const noNode = { ...vllm.env, NODE_OPTIONS: '--import=/nonexistent/armproof-preload.mjs' }
    for (const shim of ['podman', 'docker']) expect(await run(shim, ['exec', 'vllm-0', 'vllm', 'serve', '--help=all'], noNode)).toEqual(own)
    expect((await run('docker', ['exec', 'vllm-0', 'vllm', 'serve', '--help=max-num-seqs'], noNode)).code).not.toBe(0)
    // Each verifier profile's help command (helpers/profiles/*.yaml) is among its engine's answers, as its process prints it.
    for (const profile of ['vllm', 'sglang', 'llama.cpp'] as const) {
      const argv = builtinProfile(profile).engine.help.command.split(' ').slice(1)
      const answer = helpAnswers(profile, { [PROFILE_ENV]: profile }, []).find((a) => a.argv.join(' ') === argv.join(' '))
      expect(answer?.stdout, `${profile}: ${argv.join(' ')}`).toBe(
        (await run(process.execPath, [ENGINE_ENTRY, '--profile', profile, ...argv])).stdout,
      )
    }
  })

  test('podman answers for an emulated engine too: logs and exec <svc> vllm …', async () => {
    expect((await run('podman', ['logs', 'vllm-0'], vllm.env)).stdout).toBe(readFileSync(vllm.ledgerPath, 'utf8'))
    expect((await run('podman', ['exec', 'vllm-0', 'vllm', '--version'], vllm.env)).stdout).toBe('0.23.0\n')
    expect((await run('podman', ['exec', 'vllm-0', 'radiance', '--help'], vllm.env)).code).toBe(127)
  })
})

describe('kubectl shim', () => {
  test('kubectl logs [-n ns] [-c container] [--tail=N]; a pod of another namespace is NotFound, another container invalid', async () => {
    expect((await run('kubectl', ['logs', '-n', 'llm', 'vllm-0'], vllm.env)).stdout).toBe(readFileSync(vllm.ledgerPath, 'utf8'))
    expect(
      (await run('kubectl', ['logs', 'pod/vllm-0', '--namespace=llm', '-c', 'vllm', '--tail=3'], vllm.env)).stdout
        .split('\n')
        .filter(Boolean),
    ).toHaveLength(3)
    expect(await run('kubectl', ['logs', 'vllm-0'], vllm.env)).toEqual({
      code: 1,
      stdout: '',
      stderr: 'Error from server (NotFound): pods "vllm-0" not found\n',
    })
    expect((await run('kubectl', ['logs', '-n', 'llm', 'vllm-0', '-c', 'sidecar'], vllm.env)).stderr).toBe(
      'error: container sidecar is not valid for pod vllm-0\n',
    )
  })

  test("kubectl get pod: the table, -o name, -o jsonpath for what the pod exposes, -o json; hostPID so the pid is the host's", async () => {
    const table = (await run('kubectl', ['get', 'pod', 'vllm-0', '-n', 'llm'], vllm.env)).stdout.split('\n')
    expect(table[0]).toMatch(/^NAME {3,}READY {3}STATUS {4}RESTARTS {3}AGE$/)
    expect(table[1]).toMatch(/^vllm-0 {3,}1\/1 {5}Running {3}0 {10}\d+s$/)
    expect((await run('kubectl', ['get', 'pod', 'vllm-0', '-n', 'llm', '-o', 'name'], vllm.env)).stdout).toBe('pod/vllm-0\n')
    const exposed = await run(
      'kubectl',
      ['get', 'pod', 'vllm-0', '-n', 'llm', '-o', 'jsonpath={.status.podIP} {.spec.containers[*].ports[*].containerPort} {.spec.hostPID}'],
      vllm.env,
    )
    expect(exposed.stdout).toBe(`127.0.0.1 ${vllm.port} true`)
    const pod = JSON.parse((await run('kubectl', ['get', 'pods/vllm-0', '-n', 'llm', '-o', 'json'], vllm.env)).stdout) as {
      kind: string
      spec: { containers: Array<{ name: string; args: string[] }> }
      status: { phase: string }
    }
    expect(pod).toMatchObject({
      kind: 'Pod',
      status: { phase: 'Running' },
      spec: {
        containers: [{ name: 'vllm', args: ['serve', 'Qwen/Qwen3-0.6B', ...TOOLS, '--max-num-seqs', '8', '--port', String(vllm.port)] }],
      },
    })
    expect(await run('kubectl', ['get', 'pod', 'other', '-n', 'llm'], vllm.env)).toEqual({
      code: 1,
      stdout: '',
      stderr: 'Error from server (NotFound): pods "other" not found\n',
    })
  })

  test('kubectl exec POD -- CMD: the engine command, host commands with their exit code said, and the old form refused', async () => {
    expect(await run('kubectl', ['exec', '-n', 'llm', 'vllm-0', '--', 'vllm', '--version'], vllm.env)).toEqual({
      code: 0,
      stdout: '0.23.0\n',
      stderr: '',
    })
    expect(await run('kubectl', ['exec', '-n', 'llm', 'vllm-0', '-c', 'vllm', '--', 'sh', '-c', 'exit 3'], vllm.env)).toEqual({
      code: 3,
      stdout: '',
      stderr: 'command terminated with exit code 3\n',
    })
    expect(
      (await run('kubectl', ['exec', '-n', 'llm', 'vllm-0', '--', 'cat', `/proc/${vllm.pids[0]}/cmdline`], vllm.env)).stdout,
    ).toContain('serve\0Qwen/Qwen3-0.6B\0')
    expect(await run('kubectl', ['exec', '-n', 'llm', 'vllm-0', 'vllm', '--version'], vllm.env)).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: exec [POD] [COMMAND] is not supported anymore. Use exec [POD] -- [COMMAND] instead\n',
    })
  })
})

describe("a bare process's shims, and the runtime's own faults", () => {
  test('journalctl -u <svc> [-o cat] [-n N] prints the log; another unit has no entries; radiance --help runs on the host', async () => {
    expect(await run('journalctl', ['-u', 'rad-0', '-o', 'cat', '--no-pager'], radiance.env)).toEqual({
      code: 0,
      stdout: readFileSync(radiance.ledgerPath, 'utf8'),
      stderr: '',
    })
    expect((await run('journalctl', ['--unit=rad-0.service', '-n', '2'], radiance.env)).stdout.split('\n').filter(Boolean)).toHaveLength(2)
    expect(await run('journalctl', ['-u', 'other'], radiance.env)).toEqual({ code: 0, stdout: '-- No entries --\n', stderr: '' })
    expect((await run('journalctl', ['-u', 'rad-0', '-f'], radiance.env)).code).toBe(1)
    expect(await run('radiance', ['--help'], radiance.env)).toEqual(await run(process.execPath, [ENGINE_ENTRY, '--help']))
  })

  test('container_stopped: docker says exited (State.Pid 0) and refuses exec; the pod waits in CrashLoopBackOff and kubectl exec finds no container; logs still read', async () => {
    const e = await startEngine({
      svc: 'stop-0',
      processName: unique('stop-'),
      runtimeFaults: ['container_stopped'],
      args: ['--load-closed-ms', '0', '--load-503-ms', '0'],
    })
    try {
      expect((await run('docker', ['inspect', '--format', '{{.State.Pid}} {{.State.Status}}', 'stop-0'], e.env)).stdout).toBe('0 exited\n')
      const exec = await run('docker', ['exec', 'stop-0', 'radiance', '--help'], e.env)
      expect([exec.code, exec.stderr]).toEqual([
        1,
        expect.stringMatching(/^Error response from daemon: container [0-9a-f]{64} is not running\n$/),
      ])
      expect((await run('docker', ['logs', 'stop-0'], e.env)).stdout).toBe(readFileSync(e.ledgerPath, 'utf8'))
      const pod = JSON.parse((await run('kubectl', ['get', 'pod', 'stop-0', '-o', 'json'], e.env)).stdout) as {
        status: { phase: string; containerStatuses: Array<{ ready: boolean; state: Record<string, { reason?: string }> }> }
      }
      expect(pod.status.phase).toBe('Running')
      expect(pod.status.containerStatuses[0]).toMatchObject({ ready: false, state: { waiting: { reason: 'CrashLoopBackOff' } } })
      expect((await run('kubectl', ['get', 'pod', 'stop-0'], e.env)).stdout.split('\n')[1]).toMatch(
        /^stop-0 {3,}0\/1 {5}CrashLoopBackOff {3}5 /,
      )
      expect(await run('kubectl', ['exec', 'stop-0', '--', 'radiance', '--help'], e.env)).toEqual({
        code: 1,
        stdout: '',
        stderr: 'error: unable to upgrade connection: container not found ("radiance")\n',
      })
    } finally {
      await e.stop()
    }
  })

  test('kubectl_refused: every kubectl command answers the refused connection, exit 1', async () => {
    const e = await startEngine({
      svc: 'ref-0',
      processName: unique('kref-'),
      runtimeFaults: ['kubectl_refused'],
      args: ['--load-closed-ms', '0', '--load-503-ms', '0'],
    })
    try {
      for (const args of [
        ['get', 'pod', 'ref-0', '-o', 'json'],
        ['logs', 'ref-0'],
        ['exec', 'ref-0', '--', 'true'],
      ]) {
        expect(await run('kubectl', args, e.env)).toEqual({
          code: 1,
          stdout: '',
          stderr: 'The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?\n',
        })
      }
    } finally {
      await e.stop()
    }
  })
})
