// A host whose /proc is made up: the text the engine lookup's reads (helpers/engine/survey.ts)
// get back, written the way Linux writes it (/proc/net/tcp{,6} lines, stat lines, NUL-separated
// command lines), for tests of the lookup and of the steps that run it without real processes.
import { splitWords } from '../../helpers/config/shell.ts'
import type { HostClient, HostResult } from '../../helpers/seams/host.ts'
import { runsScript } from '../../helpers/engine/named.ts'
import type { EngineProcess } from '../../helpers/steps/context.ts'

export interface FakeSocket {
  port: number
  /** Default 0.0.0.0; an IPv6 address (or ::ffff:a.b.c.d) goes to /proc/net/tcp6. */
  address?: string
  /** Shared by a fork's parent and child; default one per socket. */
  inode?: string
  /** TCP state code; default 0A (LISTEN). */
  state?: string
}

export interface FakeProcess {
  pid: string
  /** Its task name (comm) and argv[0]'s basename. */
  name: string
  argv?: string[]
  ppid?: string
  startTicks?: number
  sockets?: FakeSocket[]
  /** Its sockets are not visible to this user (another user's process). */
  hidden?: boolean
}

export interface FakeHostState {
  procs: FakeProcess[]
  /** What `podman inspect … {{.State.Pid}}` answers: a pid ('0': stopped); undefined: no such container. */
  container?: string
  btime?: number
  clkTck?: number
  /** stdout of --pid-cmd. */
  pidCmdOut?: string
  /** Every call fails this way (e.g. ssh unreachable). */
  failure?: HostResult['failure']
  /**
   * What `kubectl get pod … -o json` answers (a pod object), or kubectl's failure (its stderr and
   * exit code); the lookup's reads in the pod (`kubectl exec … -- sh -c '<script>'`) are answered
   * from this same state, as a pod sharing these processes would.
   */
  kubectl?: { pod: unknown } | { stderr: string; exit: number }
  /** How `kubectl exec` fails after `kubectl get pod` answered (a container without sh); default: it runs the script. */
  kubectlExec?: { stderr: string; exit: number }
}

/** A running pod of one container declaring `ports`, in `kubectl get pod -o json`'s shape. */
export function podObject(
  ports: readonly number[] = [],
  more: { phase?: string; state?: Record<string, unknown>; hostPID?: boolean; sidecar?: { name: string; ports: number[] } } = {},
): unknown {
  const running = { running: { startedAt: '2026-11-30T02:00:00Z' } }
  const sidecar = more.sidecar
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'llm-7-0', namespace: 'llm' },
    spec: {
      hostPID: more.hostPID ?? false,
      containers: [
        // A sidecar listed first (a service mesh's proxy): kubectl exec's default container.
        ...(sidecar
          ? [{ name: sidecar.name, image: 'proxyv2:1', ports: sidecar.ports.map((containerPort) => ({ containerPort, protocol: 'TCP' })) }]
          : []),
        { name: 'engine', image: 'radiance:1', ports: ports.map((containerPort) => ({ containerPort, protocol: 'TCP' })) },
      ],
    },
    status: {
      phase: more.phase ?? 'Running',
      containerStatuses: [
        ...(sidecar ? [{ name: sidecar.name, ready: true, state: running }] : []),
        { name: 'engine', ready: true, state: more.state ?? running },
      ],
    },
  }
}

const le = (bytes: number[]): string =>
  bytes
    .map((b) => b.toString(16).padStart(2, '0'))
    .reverse()
    .join('')
    .toUpperCase()

/** An address as /proc/net/tcp{,6} prints it: 32-bit words in little-endian hex. */
export function hexAddress(address: string): string {
  if (/^\d+\.\d+\.\d+\.\d+$/.test(address)) return le(address.split('.').map(Number))
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  let groups: number[]
  if (mapped)
    groups = [
      0,
      0,
      0,
      0,
      0,
      0xffff,
      ...(() => {
        const b = mapped[1]!.split('.').map(Number)
        return [(b[0]! << 8) | b[1]!, (b[2]! << 8) | b[3]!]
      })(),
    ]
  else {
    const [head, tail] = address.split('::') as [string, string | undefined]
    const h = head ? head.split(':').map((x) => Number.parseInt(x, 16)) : []
    const t = tail ? tail.split(':').map((x) => Number.parseInt(x, 16)) : []
    groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill(0), ...t]
  }
  const bytes = groups.flatMap((g) => [g >> 8, g & 0xff])
  return [0, 1, 2, 3].map((i) => le(bytes.slice(i * 4, i * 4 + 4))).join('')
}

function tcpLine(i: number, s: FakeSocket, inode: string): string {
  const port = s.port.toString(16).toUpperCase().padStart(4, '0')
  const zero = (s.address ?? '0.0.0.0').includes(':') ? '0'.repeat(32) : '00000000'
  return `  ${i}: ${hexAddress(s.address ?? '0.0.0.0')}:${port} ${zero}:0000 ${s.state ?? '0A'} 00000000:00000000 00:00000000 00000000  1000        0 ${inode} 1 0000000000000000 100 0 0 10 0`
}

function statLine(p: FakeProcess): string {
  // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime …
  return `${p.pid} (${p.name.slice(0, 15)}) S ${p.ppid ?? '1'} ${p.pid} ${p.pid} 0 -1 4194560 100 0 0 0 10 5 0 0 20 0 1 0 ${p.startTicks ?? 1000} 10000000 500 18446744073709551615`
}

const MARK = '@@armproof '

function details(state: FakeHostState, pids: readonly string[]): string {
  return pids
    .map((pid) => {
      const p = state.procs.find((x) => x.pid === pid)
      return `${MARK}stat ${pid}\n${p ? `${statLine(p)}\n` : ''}${MARK}cmdline ${pid}\n${p ? [...(p.argv ?? [`/usr/bin/${p.name}`]), ''].join('\0') : ''}\n`
    })
    .join('')
}

/** The survey's output for `name` and `port`, as the real script prints it: only the port's sockets and the named processes'. */
export function surveyText(state: FakeHostState, name: string, port: number | null): string {
  let inode = 9000
  const sockets = state.procs.flatMap((p) => (p.sockets ?? []).map((s) => ({ p, s, inode: s.inode ?? String(++inode) })))
  const listening = sockets.filter((x) => (x.s.state ?? '0A') === '0A')
  // As helpers/engine/named.ts' line: pidof's (argv[0]'s basename), the task name, or an interpreter running a script of that name.
  const named = state.procs.filter((p) => p.name === name || runsScript(p.argv ?? [], name)).map((p) => p.pid)
  const onPort = new Set(listening.filter((x) => x.s.port === port).map((x) => x.inode))
  const kept = listening.filter((x) => !x.p.hidden && (named.includes(x.p.pid) || onPort.has(x.inode)))
  const keptInodes = new Set([...onPort, ...kept.map((x) => x.inode)])
  // One line per socket (a shared one once), as /proc/net/tcp{,6} has it.
  const lines = [...new Map(listening.filter((x) => keptInodes.has(x.inode)).map((x) => [x.inode, x])).values()]
  const v4 = lines.filter((x) => !(x.s.address ?? '').includes(':'))
  const v6 = lines.filter((x) => (x.s.address ?? '').includes(':'))
  const listen = [...v4.map((x, i) => tcpLine(i, x.s, x.inode)), ...v6.map((x, i) => tcpLine(i, x.s, x.inode))]
  const owners = kept.map((x) => `${x.p.pid} ${x.inode}`)
  const holders = kept.filter((x) => onPort.has(x.inode)).map((x) => x.p.pid)
  const candidates = [...new Set([...named, ...holders])].sort((a, b) => Number(a) - Number(b))
  return [
    `${MARK}btime\n${state.btime ?? 1764500000}\n`,
    `${MARK}clk_tck\n${state.clkTck ?? 100}\n`,
    `${MARK}listen\n${listen.map((l) => `${l}\n`).join('')}`,
    `${MARK}owners\n${owners.map((l) => `${l}\n`).join('')}`,
    `${MARK}pidof\n${named.join(' ')}\n`,
    details(state, candidates),
  ].join('')
}

/** A host client answering the lookup's scripts from `state` (read anew on every call); `calls` keeps each script. */
export function fakeProcHost(state: FakeHostState | (() => FakeHostState), where = 'local'): HostClient & { calls: string[] } {
  const calls: string[] = []
  const now = () => (typeof state === 'function' ? state() : state)
  return {
    where,
    calls,
    async run(req): Promise<HostResult> {
      calls.push(req.script)
      const s = now()
      const done = (stdout: string, exitCode = 0): HostResult => ({ command: req.script, stdout, stderr: '', exitCode, durationMs: 1 })
      if (s.failure)
        return {
          command: req.script,
          stdout: '',
          stderr: 'ssh: connect to host gpu-7 port 22: Connection refused',
          exitCode: 255,
          failure: s.failure,
          durationMs: 1,
        }
      let script = req.script
      if (script.startsWith('kubectl ')) {
        const k = s.kubectl ?? { stderr: 'error: the server doesn\'t have a resource type "pod"', exit: 1 }
        if ('stderr' in k) return { command: req.script, stdout: '', stderr: `${k.stderr}\n`, exitCode: k.exit, durationMs: 1 }
        const words = splitWords(script)
        if (words[1] === 'get') return done(`${JSON.stringify(k.pod, null, 4)}\n`)
        if (s.kubectlExec)
          return { command: req.script, stdout: '', stderr: `${s.kubectlExec.stderr}\n`, exitCode: s.kubectlExec.exit, durationMs: 1 }
        // kubectl exec runs in -c's container, else the pod's first: a sidecar there has its own pid namespace (no engine in it) and, distroless, no sh.
        const containers = ((k.pod as { spec?: { containers?: Array<{ name: string }> } }).spec?.containers ?? []).map((c) => c.name)
        const c = words.slice(0, words.indexOf('--')).indexOf('-c')
        const into = c >= 0 ? words[c + 1]! : containers[0]
        if (into !== undefined && into !== 'engine')
          return {
            command: req.script,
            stdout: '',
            stderr: `${c < 0 ? `Defaulted container "${into}" out of: ${containers.join(', ')}\n` : ''}OCI runtime exec failed: exec failed: unable to start container process: exec: "sh": executable file not found in $PATH: unknown\ncommand terminated with exit code 126\n`,
            exitCode: 126,
            durationMs: 1,
          }
        // kubectl exec … -- sh -c '<script>': the script, read in the pod.
        script = words.at(-1)!
      }
      if (script.includes('getconf CLK_TCK')) {
        const hex = /-v h='([^']*)'/.exec(script)![1]!.trim()
        return done(
          surveyText(s, /pidof ([^\s;]+)/.exec(script)![1]!.replace(/^'|'$/g, ''), hex === '' ? null : Number.parseInt(hex.slice(1), 16)),
        )
      }
      if (script.includes('podman inspect') || script.includes('docker inspect')) {
        const inspect = s.container === undefined ? `Error: no such object: "svc"\n${MARK}exit 125\n` : `${s.container}\n${MARK}exit 0\n`
        return done(`${MARK}container\n${inspect}${MARK}stats\n${s.procs.map((p) => `${statLine(p)}\n`).join('')}`)
      }
      const asked = /^P='?([\d ]*)'?\n/.exec(script)
      if (asked) return done(details(s, asked[1]!.split(' ').filter(Boolean)))
      return done(s.pidCmdOut ?? '', s.pidCmdOut === undefined ? 127 : 0)
    },
  }
}

/** What step argv hands on about a process found by pidof, for judges that take it as input. */
export function engineSeen(pid: string, argvHeld: boolean, more: Partial<EngineProcess> = {}): EngineProcess {
  return { pid, argvHeld, startTimeSeconds: null, startTimeResolution: 0.01, foundBy: 'pidof', listenerTied: false, ...more }
}

/** The boot time and start ticks (CLK_TCK 100) that make a fake process's start time `seconds`, as the lookup computes it. */
export function startedAt(seconds: number): { btime: number; startTicks: number } {
  const btime = Math.floor(seconds) - 1000
  return { btime, startTicks: Math.round((seconds - btime) * 100) }
}
