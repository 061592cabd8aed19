// The engine lookup (helpers/engine/): /proc's text parsed as Linux writes it, and the engine
// found from the endpoint against made-up hosts (test/support/fake-proc.ts): the listener of the
// URL's port (tcp and tcp6, v4-mapped, LISTEN only, a socket shared after a fork), the
// container, --pid-cmd, pidof; the re-check after the meter's watch; first contact's unserved port.
import { describe, expect, test } from 'vitest'
import type { HostSpec } from '../../helpers/config/load.ts'
import { findEngine, type EngineQuery } from '../../helpers/engine/find.ts'
import { decodeAddress, parseListeners, parseStat, processTree, startTimeSeconds } from '../../helpers/engine/proc.ts'
import { recheckEngine } from '../../helpers/engine/recheck.ts'
import { reaches, urlIsThisHost } from '../../helpers/engine/same-host.ts'
import { unservedPort } from '../../helpers/engine/unserved.ts'
import { fakeProcHost, hexAddress, surveyText, type FakeHostState } from '../support/fake-proc.ts'

const LOCAL: HostSpec = { kind: 'local' }
const query = (more: Partial<EngineQuery> = {}): EngineQuery => ({
  process: 'radiance',
  svc: 'llm-7',
  unit: 'llm-7',
  port: 8000,
  urlHost: '127.0.0.1',
  pidCmd: null,
  host: LOCAL,
  timeoutMs: 1000,
  ...more,
})
const engine = (pid: string, port: number | undefined, more: Partial<FakeHostState['procs'][number]> = {}) => ({
  pid,
  name: 'radiance',
  argv: ['/opt/radiance/bin/radiance', 'serve', ...(port !== undefined ? ['--port', String(port)] : []), '--prefill-interleave', '1'],
  ...(port !== undefined ? { sockets: [{ port }] } : {}),
  ...more,
})

describe('/proc text', () => {
  test('addresses as /proc/net/tcp{,6} print them: little-endian words, v4-mapped IPv6 said as such', () => {
    expect(decodeAddress('0100007F')).toBe('127.0.0.1')
    expect(decodeAddress('00000000')).toBe('0.0.0.0')
    expect(decodeAddress('00000000000000000000000000000000')).toBe('::')
    expect(decodeAddress('00000000000000000000000001000000')).toBe('::1')
    expect(decodeAddress('0000000000000000FFFF00000100007F')).toBe('::ffff:127.0.0.1')
    expect(decodeAddress('B80D0120000000000000000001000000')).toBe('2001:db8::1')
    for (const a of ['10.1.2.3', '::', '::1', '::ffff:10.0.0.7', 'fe80::1:2', '2001:db8:0:1::5'])
      expect(decodeAddress(hexAddress(a))).toBe(a)
    expect(decodeAddress('xyz')).toBeUndefined()
  })

  test('only LISTEN sockets (state 0A) with an inode, from tcp and tcp6 lines alike; header and other states are left out', () => {
    const text = [
      '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
      '   0: 0100007F:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0000000000000000 100 0 0 10 0',
      '   1: 0100007F:1F40 0100007F:D2C4 01 00000000:00000000 00:00000000 00000000  1000        0 4343 1 0000000000000000 20 4 30 10 -1',
      '   2: 00000000:1F41 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 0 1 0000000000000000 100 0 0 10 0',
      '   0: 00000000000000000000000000000000:1F42 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 5151 1 0000000000000000 100 0 0 10 0',
      '   1: 0000000000000000FFFF00000100007F:1F43 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 5252 1 0000000000000000 100 0 0 10 0',
    ].join('\n')
    expect(parseListeners(text)).toEqual([
      { address: '127.0.0.1', port: 8000, inode: '4242', family: 4 },
      { address: '::', port: 8002, inode: '5151', family: 6 },
      { address: '::ffff:127.0.0.1', port: 8003, inode: '5252', family: 6 },
    ])
  })

  test('a stat line is read after the LAST ")" (a name may hold ") ("), and the start time is prometheus_client\'s', () => {
    const s = parseStat('4242 (rad) (iance) S 1 4242 4242 0 -1 4194560 100 0 0 0 10 5 0 0 20 0 1 0 123456 10000000 500 1')
    expect(s).toEqual({ pid: '4242', comm: 'rad) (iance', ppid: '1', startTicks: 123456 })
    expect(startTimeSeconds(123456, 1764500000, 100)).toBe(1764500000 + 1234.56)
    expect(parseStat('garbage')).toBeUndefined()
  })

  test('a process tree is its root, then its children breadth first', () => {
    const stats = new Map([
      ['10', { pid: '10', comm: 'conmon', ppid: '1', startTicks: 1 }],
      ['11', { pid: '11', comm: 'sh', ppid: '10', startTicks: 2 }],
      ['12', { pid: '12', comm: 'radiance', ppid: '11', startTicks: 3 }],
      ['20', { pid: '20', comm: 'x', ppid: '1', startTicks: 4 }],
    ])
    expect(processTree('10', stats)).toEqual(['10', '11', '12'])
  })
})

describe('which listening socket a base URL reaches', () => {
  const at = (address: string) => ({ address, port: 8000, inode: '1', family: address.includes(':') ? (6 as const) : (4 as const) })
  test.each([
    ['0.0.0.0', '127.0.0.1', true],
    ['0.0.0.0', 'gpu-7', true],
    ['0.0.0.0', '::1', false],
    ['::', '::1', true],
    ['::', '10.0.0.7', true],
    ['127.0.0.1', '127.0.0.1', true],
    ['127.0.0.1', 'localhost', true],
    ['127.0.0.1', '10.0.0.7', false],
    ['::ffff:10.0.0.7', '10.0.0.7', true],
    ['10.0.0.7', 'gpu-7', true],
    ['127.0.0.1', 'gpu-7', false],
  ] as const)('bound %s, URL host %s: %s', (bound, host, yes) => {
    expect(reaches(at(bound), host)).toBe(yes)
  })
  test("the URL names the host inspected: loopback for local; the ssh host's own name or address", () => {
    expect(urlIsThisHost('127.0.0.1', LOCAL)).toBe(true)
    expect(urlIsThisHost('[::1]', LOCAL)).toBe(true)
    expect(urlIsThisHost('gpu-7', LOCAL)).toBe(false)
    expect(urlIsThisHost('GPU-7', { kind: 'ssh', host: 'gpu-7' })).toBe(true)
    expect(urlIsThisHost('10.0.0.7', { kind: 'ssh', host: 'gpu-7' })).toBe(false)
    expect(urlIsThisHost('localhost', { kind: 'ssh', host: '127.0.0.1', port: 2222 })).toBe(true)
    expect(urlIsThisHost('lb.example', { kind: 'ssh', host: 'gpu-7' })).toBe(false)
    expect(urlIsThisHost(null, LOCAL)).toBe(false)
  })
})

describe('the engine, found from the endpoint', () => {
  test("the listener of the URL's port is the engine, tied to it; another engine of the name is named with its port; one host call", async () => {
    const host = fakeProcHost({
      procs: [engine('4242', 8000, { startTicks: 123456 }), engine('5151', 8001)],
      btime: 1764500000,
      clkTck: 100,
    })
    const found = await findEngine(host, query())
    expect(found).toMatchObject({
      kind: 'found',
      pid: '4242',
      foundBy: 'listener',
      listenerTied: true,
      startTimeSeconds: 1764501234.56,
      startTimeResolution: 0.01,
      others: [{ pid: '5151', ports: [8001], portsFrom: 'sockets' }],
    })
    expect(found.kind === 'found' && found.how).toBe('holds the listening socket of port 8000 (0.0.0.0)')
    expect(host.calls).toHaveLength(1)
    // The other one, through its own port.
    expect(await findEngine(host, query({ port: 8001 }))).toMatchObject({
      kind: 'found',
      pid: '5151',
      others: [{ pid: '4242', ports: [8000] }],
    })
  })

  test('tcp6 and v4-mapped listeners count; a socket in another state, or bound to an address the URL cannot reach, does not', async () => {
    expect(
      await findEngine(fakeProcHost({ procs: [engine('7', undefined, { sockets: [{ port: 8000, address: '::' }] })] }), query()),
    ).toMatchObject({ kind: 'found', pid: '7', foundBy: 'listener' })
    expect(
      await findEngine(
        fakeProcHost({ procs: [engine('7', undefined, { sockets: [{ port: 8000, address: '::ffff:127.0.0.1' }] })] }),
        query(),
      ),
    ).toMatchObject({ kind: 'found', pid: '7', foundBy: 'listener' })
    // Established (01), not listening: pidof decides, untied.
    expect(
      await findEngine(fakeProcHost({ procs: [engine('7', undefined, { sockets: [{ port: 8000, state: '01' }] })] }), query()),
    ).toMatchObject({ kind: 'found', pid: '7', foundBy: 'pidof', listenerTied: false })
    // Two engines on one port, each on its own address: the URL's address decides.
    const split = fakeProcHost({
      procs: [
        engine('7', undefined, { sockets: [{ port: 8000, address: '127.0.0.1' }] }),
        engine('8', undefined, { sockets: [{ port: 8000, address: '10.0.0.7' }] }),
      ],
    })
    expect(await findEngine(split, query())).toMatchObject({ kind: 'found', pid: '7' })
    expect(await findEngine(split, query({ urlHost: '10.0.0.7' }))).toMatchObject({ kind: 'found', pid: '8', listenerTied: false })
  })

  test('several pids sharing the listening socket after a fork: the family\'s root is the engine, its children are not "other engines"', async () => {
    const shared = { port: 8000, inode: '777' }
    const host = fakeProcHost({
      procs: [
        engine('100', undefined, { sockets: [shared] }),
        engine('101', undefined, { ppid: '100', sockets: [shared] }),
        engine('102', undefined, { ppid: '100', sockets: [shared] }),
      ],
    })
    const found = await findEngine(host, query())
    expect(found).toMatchObject({ kind: 'found', pid: '100', foundBy: 'listener', others: [] })
    expect(found.kind === 'found' && found.how).toContain('shared after a fork with pid 101, pid 102')
  })

  test('two unrelated engines on one port (SO_REUSEPORT) are ambiguous: neither is proven', async () => {
    const found = await findEngine(fakeProcHost({ procs: [engine('7', 8000), engine('8', 8000)] }), query())
    expect(found).toMatchObject({ kind: 'ambiguous', pids: ['7', '8'] })
    expect(found.kind === 'ambiguous' && found.observed).toContain('2 engines named radiance listen on port 8000')
  })

  test("a proxy holds the port: the engine is then the container's, untied, and the proxy is said", async () => {
    const procs = [
      { pid: '50', name: 'rootlessport', sockets: [{ port: 8000 }] },
      { pid: '60', name: 'conmon' },
      engine('61', undefined, { ppid: '60' }),
    ]
    const found = await findEngine(fakeProcHost({ procs, container: '61' }), query())
    expect(found).toMatchObject({
      kind: 'found',
      pid: '61',
      foundBy: 'container',
      listenerTied: false,
      portHolders: [{ pid: '50', name: 'rootlessport', address: '0.0.0.0' }],
    })
    expect(found.kind === 'found' && found.how).toContain(
      'port 8000 is served by pid 50 (rootlessport) on 0.0.0.0, not by a process named radiance',
    )
    // The engine deep in the container's tree (a shell wrapper as its main process).
    const wrapped = await findEngine(
      fakeProcHost({ procs: [{ pid: '60', name: 'sh' }, engine('61', undefined, { ppid: '60' })], container: '60' }),
      query(),
    )
    expect(wrapped).toMatchObject({ kind: 'found', pid: '61', foundBy: 'container' })
    // Stopped, or running without the engine's name in it.
    expect(await findEngine(fakeProcHost({ procs: [], container: '0' }), query())).toMatchObject({ kind: 'missing' })
    const unnamed = await findEngine(fakeProcHost({ procs: [{ pid: '60', name: 'python3' }], container: '60' }), query())
    expect(unnamed.kind === 'missing' && unnamed.next).toBe("set --process to the engine's process name in llm-7")
  })

  test('no listener, no container: --pid-cmd, else the one pidof finds; two are ambiguous, none is "engine not running"', async () => {
    const pidCmd = fakeProcHost({ procs: [engine('9', undefined), engine('10', undefined)], pidCmdOut: '10\n' })
    expect(await findEngine(pidCmd, query({ pidCmd: 'cat /run/{svc}.pid' }))).toMatchObject({
      kind: 'found',
      pid: '10',
      foundBy: 'pid-cmd',
    })
    expect(pidCmd.calls.at(-1)).toBe('cat /run/llm-7.pid')
    const badCmd = await findEngine(fakeProcHost({ procs: [], pidCmdOut: 'no such unit\n' }), query({ pidCmd: 'x {port}' }))
    expect(badCmd.kind === 'missing' && badCmd.observed).toContain('--pid-cmd printed "no such unit"')
    expect(await findEngine(fakeProcHost({ procs: [engine('9', undefined)] }), query())).toMatchObject({
      kind: 'found',
      pid: '9',
      foundBy: 'pidof',
      listenerTied: false,
    })
    const two = await findEngine(
      fakeProcHost({ procs: [engine('9', 9001), engine('10', undefined, { argv: ['radiance', '--port', '9002'] })] }),
      query(),
    )
    expect(two).toMatchObject({ kind: 'ambiguous', pids: ['9', '10'] })
    expect(two.kind === 'ambiguous' && two.observed).toContain('pid 9 on port 9001, pid 10 on port 9002 (its --port; not listening yet)')
    expect(two.kind === 'ambiguous' && two.next).toContain('(9001 or 9002)')
    // Still loading: none listens yet; the one whose command line names the port is the engine, two such are ambiguous.
    const loading = await findEngine(
      fakeProcHost({ procs: [engine('9', undefined, { argv: ['radiance', '--port', '8000'] }), engine('10', 8001)] }),
      query(),
    )
    expect(loading).toMatchObject({ kind: 'found', pid: '9', foundBy: 'pidof', listenerTied: false })
    expect(loading.kind === 'found' && loading.how).toContain('whose command line names port 8000 (it does not listen yet: loading?)')
    const twins = await findEngine(
      fakeProcHost({
        procs: [
          engine('9', undefined, { argv: ['radiance', '--port', '8000'] }),
          engine('10', undefined, { argv: ['radiance', '--port=8000'] }),
        ],
      }),
      query(),
    )
    expect(twins.kind === 'ambiguous' && twins.observed).toBe(
      '2 processes named radiance (pids 9, 10) name port 8000 on their command line and none listens on it yet: which one will serve it cannot be told',
    )
    const none = await findEngine(fakeProcHost({ procs: [{ pid: '3', name: 'nginx', sockets: [{ port: 8000 }] }] }), query())
    expect(none.kind === 'missing' && none.observed).toMatch(/^engine not running: pidof radiance found no process/)
    expect(none.kind === 'missing' && none.next).toContain('(port 8000 is served by nginx)')
  })

  test('a socket whose holder this user cannot see is said as such, and the lookup goes on', async () => {
    const found = await findEngine(fakeProcHost({ procs: [engine('9', 8000, { hidden: true })] }), query())
    expect(found).toMatchObject({ kind: 'found', pid: '9', foundBy: 'pidof', portHolders: [{ pid: null }] })
    expect(found.kind === 'found' && found.how).toContain('port 8000 is served by a process this user cannot see')
  })

  test('a host that cannot be reached is trouble, never a verdict of its own', async () => {
    expect(await findEngine(fakeProcHost({ procs: [], failure: 'unreachable' }), query())).toMatchObject({
      kind: 'trouble',
      result: { failure: 'unreachable' },
    })
  })

  test('the survey text the fake prints parses as the real one (the same marks)', () => {
    expect(surveyText({ procs: [engine('1', 8000)] }, 'radiance', 8000)).toContain('@@armproof owners\n1 9001\n')
  })
})

describe('the re-check after the watch', () => {
  const seen = { pid: '4242', argvHeld: true, startTimeSeconds: 1764500010, foundBy: 'listener' as const }
  test('the same pid, started at the same time, still serving the port: same', async () => {
    const check = await recheckEngine(fakeProcHost({ procs: [engine('4242', 8000, { startTicks: 1000 })] }), query(), seen)
    expect(check).toMatchObject({
      state: 'same',
      pids: ['4242'],
      detail: 'pid 4242 (read by step argv) still holds the listening socket of port 8000 (0.0.0.0)',
    })
  })
  test('the pid now another process (its start time moved), another pid, or none: changed; an unreachable host: unknown', async () => {
    expect(await recheckEngine(fakeProcHost({ procs: [engine('4242', 8000, { startTicks: 9000 })] }), query(), seen)).toMatchObject({
      state: 'changed',
      detail: 'step argv read pid 4242, started at 1764500010; pid 4242 is now another process, started at 1764500090',
    })
    expect(await recheckEngine(fakeProcHost({ procs: [engine('5151', 8000)] }), query(), seen)).toMatchObject({
      state: 'changed',
      pids: ['5151'],
    })
    expect((await recheckEngine(fakeProcHost({ procs: [] }), query(), seen)).state).toBe('changed')
    expect(await recheckEngine(fakeProcHost({ procs: [], failure: 'timeout' }), query(), seen)).toMatchObject({
      state: 'unknown',
      detail: 'the engine process could not be looked up again (timeout: ssh: connect to host gpu-7 port 22: Connection refused)',
    })
    expect((await recheckEngine(fakeProcHost({ procs: [] }), query(), undefined)).state).toBe('unproven')
  })
  test('several engines of the name are no restart: the one serving the port is the same', async () => {
    expect(
      (await recheckEngine(fakeProcHost({ procs: [engine('4242', 8000, { startTicks: 1000 }), engine('5151', 8001)] }), query(), seen))
        .state,
    ).toBe('same')
  })
})

describe('first contact: a port nothing on --host serves', () => {
  test("is the operator's mistake, naming the ports the engines there listen on and the nearest", async () => {
    const r = await unservedPort(
      fakeProcHost({ procs: [engine('7', 8000), engine('8', 8002)] }),
      query({ port: 8001 }),
      'http://127.0.0.1:8001',
    )
    expect(r?.message).toBe(
      '--base-url: nothing on this host listens on port 8001 and no container answers for llm-7: the engines named radiance there listen on port 8000 (pid 7), port 8002 (pid 8); did you mean --base-url http://127.0.0.1:8000 (the nearest)?',
    )
    const lonely = await unservedPort(
      fakeProcHost({ procs: [{ pid: '3', name: 'sshd', sockets: [{ port: 22 }] }] }),
      query({ port: 8001 }),
      'http://127.0.0.1:8001',
    )
    expect(lonely?.message).toMatch(/: no engine named radiance runs there either; check --base-url's port, --host and --svc$/)
  })
  test('is not a mistake where something serves it, a container answers, an engine may be loading onto it, the URL names another host, or the host cannot be read', async () => {
    const ask = (state: FakeHostState, more: Partial<EngineQuery> = {}) =>
      unservedPort(fakeProcHost(state), query({ port: 8001, ...more }), 'http://127.0.0.1:8001')
    expect(await ask({ procs: [{ pid: '3', name: 'nginx', sockets: [{ port: 8001 }] }] })).toBeUndefined()
    expect(await ask({ procs: [], container: '0' })).toBeUndefined()
    expect(await ask({ procs: [engine('7', undefined, { argv: ['radiance', '--port', '8001'] })] })).toBeUndefined()
    expect(await ask({ procs: [engine('7', undefined, { argv: ['radiance'] })] })).toBeUndefined()
    expect(await ask({ procs: [] }, { urlHost: 'lb.example' })).toBeUndefined()
    expect(await ask({ procs: [], failure: 'unreachable' })).toBeUndefined()
  })
})

describe('an engine an interpreter runs as a script (a pip-installed vLLM)', () => {
  // As a real vLLM's process listing has it: `…/venv/bin/python3 …/venv/bin/vllm serve …`,
  // its task name `vllm`, a resource tracker and the renamed VLLM::EngineCore below it.
  const VENV = '/srv/real/venv/bin'
  const vllm = (more: Partial<FakeHostState['procs'][number]> = {}) => ({
    pid: '6683',
    name: 'vllm',
    argv: [`${VENV}/python3`, `${VENV}/vllm`, 'serve', '/srv/real/tiny', '--port', '8011', '--max-num-seqs', '8'],
    ...more,
  })
  const children = [
    {
      pid: '7884',
      name: 'python3',
      ppid: '6683',
      argv: [`${VENV}/python3`, '-B', '-c', 'from multiprocessing.resource_tracker import main;main(32)'],
    },
    { pid: '7885', name: 'VLLM::EngineCore', ppid: '6683', argv: ['VLLM::EngineCore'] },
  ]
  const q = (more: Partial<EngineQuery> = {}) => query({ process: 'vllm', port: 8011, runtime: 'process', ...more })

  test('while it loads (its port not bound yet) it is found by its script, and first contact does not call the port a mistake', async () => {
    const host = fakeProcHost({ procs: [vllm(), ...children] })
    const found = await findEngine(host, q())
    expect(found).toMatchObject({ kind: 'found', pid: '6683', foundBy: 'pidof', listenerTied: false, others: [] })
    expect(found.kind === 'found' && found.how).toBe(
      `is the only process named vllm (${VENV}/python3 running its script ${VENV}/vllm); no process here listens on port 8011`,
    )
    expect(await unservedPort(host, q(), 'http://127.0.0.1:8011')).toBeUndefined()
  })

  test('once it listens, it holds the port: found by its listening socket, tied to the endpoint', async () => {
    const found = await findEngine(fakeProcHost({ procs: [vllm({ sockets: [{ port: 8011, address: '127.0.0.1' }] }), ...children] }), q())
    expect(found).toMatchObject({ kind: 'found', pid: '6683', foundBy: 'listener', listenerTied: true })
  })

  test('through `#!/usr/bin/env python3` its task name is the interpreter: its command line still names the script', async () => {
    const envRun = vllm({ name: 'python3', argv: ['python3', '/opt/venv/bin/vllm', 'serve', 'm', '--port', '8011'] })
    expect(await findEngine(fakeProcHost({ procs: [envRun] }), q())).toMatchObject({ kind: 'found', pid: '6683' })
  })

  test("a fork's child keeps the name and the command line while loading: the family's root is the engine, not a second one", async () => {
    const found = await findEngine(fakeProcHost({ procs: [vllm(), vllm({ pid: '6690', ppid: '6683' })] }), q())
    expect(found).toMatchObject({ kind: 'found', pid: '6683', others: [] })
  })

  test('a process that only names the script (sudo, tail, an interpreter running another script) is not the engine', async () => {
    const strays = [
      { pid: '20', name: 'sudo', argv: ['sudo', 'vllm', 'serve', 'm', '--port', '8011'] },
      { pid: '21', name: 'tail', argv: ['tail', '-f', '/var/log/vllm'] },
      { pid: '22', name: 'python3', argv: ['/usr/bin/python3', '/opt/tools/watch.py', 'vllm'] },
    ]
    const host = fakeProcHost({ procs: strays })
    expect(await findEngine(host, q())).toMatchObject({ kind: 'missing', pids: [] })
    expect((await unservedPort(host, q(), 'http://127.0.0.1:8011'))?.message).toContain('no engine named vllm runs there either')
  })

  test('a port held by another process is still not this engine: the loading script is found untied, the holder named as serving it', async () => {
    const found = await findEngine(
      fakeProcHost({ procs: [vllm(), { pid: '3', name: 'nginx', argv: ['nginx: master process'], sockets: [{ port: 8011 }] }] }),
      q(),
    )
    expect(found).toMatchObject({ kind: 'found', pid: '6683', foundBy: 'pidof', listenerTied: false, servedByOthers: [{ pid: '3' }] })
    expect(found.kind === 'found' && found.how).toContain(
      'port 8011 is served by pid 3 (nginx: master process) on 0.0.0.0, not by a process named vllm',
    )
    // Its own child holding the socket (an API server it forked) is not another process; nor is a holder this user cannot see.
    const child = await findEngine(
      fakeProcHost({ procs: [vllm(), { pid: '6700', name: 'ApiServer_0', ppid: '6683', sockets: [{ port: 8011 }] }] }),
      q(),
    )
    expect(child).toMatchObject({ kind: 'found', pid: '6683', servedByOthers: [] })
    const hidden = await findEngine(
      fakeProcHost({ procs: [vllm(), { pid: '9', name: 'x', sockets: [{ port: 8011 }], hidden: true }] }),
      q(),
    )
    expect(hidden).toMatchObject({ kind: 'found', pid: '6683', servedByOthers: [] })
  })
})
