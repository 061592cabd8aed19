// The runtime's part of the engine lookup (./find.ts), each a script and its parser:
// - where the engine's /proc is read: on the host, or in its pod (`kubectl exec … -- sh -c`, so
//   the pids, sockets and command lines are those the pod sees);
// - podman and docker: the engine in {svc}'s container (`<tool> inspect --format '{{.State.Pid}}'`
//   and that container's process tree, ./survey.ts `containerScript`);
// - kubernetes: the pod itself first (`kubectl get pod -o json`: it must exist and run before
//   anything in it can be read), then the process named --process that listens on a port the pod
//   declares (a Service's port is often not the container's);
// - a bare process has no step of its own.
// Every kubectl runs as the deploy user, never under sudo (sudo would read root's kubeconfig).
import type { Runtime } from '../config/runtime.ts'
import { quote, quoteAll } from '../config/shell.ts'
import type { HostClient, HostResult, HostRun } from '../seams/host.ts'

/** The pod of a kubernetes target: its name, `[namespace/]pod` for messages, kubectl's options (--kube-opts and the namespace). */
export interface PodReach {
  pod: string
  name: string
  kube: readonly string[]
  /**
   * The container `kubectl exec` runs in (`-c`), where the pod has several: the one declaring the
   * base URL's port (./find.ts chooses it from the pod read). Unset: kubectl's default, the first
   * (a sidecar listed first would take every read).
   */
  container?: string
}

/** The same query, its pod's reads in `container` (the lookup's choice, `EngineFound.container`). */
export function inContainer<Q extends RuntimeReach>(q: Q, container: PodContainerChoice | undefined): Q {
  return q.pod && container ? { ...q, pod: { ...q.pod, container: container.name } } : q
}

/** The container of a pod of several that the reads run in, and why (for the evidence). */
export interface PodContainerChoice {
  name: string
  why: string
}

/**
 * Of a pod's several running containers, the one declaring the base URL's port; else the only one
 * declaring a port at all (a Service's port is often not the container's). A pod of one container
 * needs no choice (undefined: kubectl's default is it); several that cannot be told apart are
 * left to kubectl's default, said.
 */
export function engineContainer(read: PodRead, port: number | null): PodContainerChoice | undefined {
  if (read.kind !== 'pod' || read.containers.length < 2) return undefined
  const running = read.containers.filter((c) => c.state === 'running')
  const declaring = running.filter((c) => port !== null && c.ports.includes(port))
  if (declaring.length === 1) return { name: declaring[0]!.name, why: `the container declaring port ${port} (kubectl get pod)` }
  const withPorts = running.filter((c) => c.ports.length > 0)
  if (declaring.length === 0 && withPorts.length === 1)
    return { name: withPorts[0]!.name, why: `the only container declaring a port (${withPorts[0]!.ports.join(', ')}; kubectl get pod)` }
  return undefined
}

/** `-c <container>` for kubectl exec, where one was chosen. */
function containerWords(pod: PodReach): string[] {
  return pod.container ? ['-c', quote(pod.container)] : []
}

/** What the lookup needs to know of the runtime. */
export interface RuntimeReach {
  runtime?: Runtime
  pod?: PodReach | null
  timeoutMs: number
}

/** The container tool whose `inspect` finds {svc}'s container, if the runtime has one. */
export function containerTool(runtime: Runtime | undefined): 'podman' | 'docker' | null {
  return runtime === undefined || runtime === 'podman' ? 'podman' : runtime === 'docker' ? 'docker' : null
}

/** `kubectl <verb> <options> <pod> …` for this pod, quoted. */
export function kubectl(pod: PodReach, verb: string, ...rest: string[]): string {
  return ['kubectl', verb, quoteAll(pod.kube), quote(pod.pod), ...rest].filter((w) => w !== '').join(' ')
}

/** The request of a read of the engine's /proc (the survey, a pid's details, its --config file) where its processes are. */
export function procRun(q: Pick<RuntimeReach, 'pod' | 'timeoutMs'>, script: string): HostRun {
  if (q.pod)
    return {
      script: kubectl(q.pod, 'exec', ...containerWords(q.pod), '--', 'sh', '-c', quote(script)),
      asDeployUser: true,
      timeoutMs: q.timeoutMs,
    }
  return { script, privileged: true, timeoutMs: q.timeoutMs }
}

/** Runs a read of the engine's /proc (`procRun`). */
export function procRead(host: HostClient, q: RuntimeReach, script: string): Promise<HostResult> {
  return host.run(procRun(q, script))
}

/** Where the lookup read, for `where`: the host, or the pod through kubectl (as one would type it). */
export function procPlace(hostWhere: string, q: Pick<RuntimeReach, 'pod'>): string {
  return q.pod ? `${hostWhere}: ${kubectl(q.pod, 'exec', ...containerWords(q.pod), '--')}` : hostWhere
}

/** ` in pod ns/x` where the lookup read a pod's processes. */
export function inPod(q: Pick<RuntimeReach, 'pod'>): string {
  return q.pod ? ` in pod ${q.pod.name}` : ''
}

/** What `kubectl get pod -o json` says of the pod, or why it could not say. */
export type PodRead =
  | { kind: 'pod'; phase: string; containers: PodContainer[] }
  | { kind: 'no-pod' | 'unreachable' | 'forbidden' | 'no-kubectl' | 'unreadable'; said: string }

export interface PodContainer {
  name: string
  /** The ports the spec declares for it (containerPort). */
  ports: number[]
  /** running, waiting or terminated (with its reason), as containerStatuses say; unknown when they say nothing. */
  state: 'running' | 'waiting' | 'terminated' | 'unknown'
  reason: string | null
}

/** The request of the pod's read (`kubectl get pod -o json`), the lookup's first under kubernetes. */
export function podRun(q: Pick<RuntimeReach, 'timeoutMs'> & { pod: PodReach }): HostRun {
  return { script: kubectl(q.pod, 'get pod', '-o', 'json'), asDeployUser: true, timeoutMs: q.timeoutMs }
}

export function readPod(host: HostClient, q: RuntimeReach & { pod: PodReach }): Promise<HostResult> {
  return host.run(podRun(q))
}

const lastLine = (text: string): string => text.trim().split('\n').filter(Boolean).at(-1)?.slice(0, 300) ?? ''

/** Why a kubectl command failed, in kubectl's own words; undefined: nothing kubectl says (the command in the pod failed itself). */
export type KubectlFailure = 'no-pod' | 'unreachable' | 'forbidden' | 'no-kubectl' | 'container-down'

export function kubectlFailure(text: string, exitCode: number | null): KubectlFailure | undefined {
  if (exitCode === 127 || /kubectl: (?:command )?not found/.test(text)) return 'no-kubectl'
  if (/\(NotFound\)|pods? "[^"]*" not found/.test(text)) return 'no-pod'
  if (/\(Forbidden\)|\bis forbidden\b|\(Unauthorized\)|You must be logged in/i.test(text)) return 'forbidden'
  if (
    /The connection to the server .* was refused|Unable to connect to the server|dial tcp|i\/o timeout|no such host|TLS handshake timeout|context deadline exceeded/i.test(
      text,
    )
  )
    return 'unreachable'
  if (
    /unable to upgrade connection: container not found|is waiting to start|container [^ ]+ is not running|container not found \(/i.test(
      text,
    )
  )
    return 'container-down'
  return undefined
}

/** The next step for a kubectl failure on this pod. */
export function kubectlNext(kind: KubectlFailure, pod: PodReach): string {
  const ns = pod.name.includes('/') ? ` -n ${pod.name.split('/')[0]}` : ''
  const bare = pod.name.split('/').at(-1)!
  switch (kind) {
    case 'no-pod':
      return `check --host [namespace/]pod (kubectl get pods${ns}): a Deployment's pods get new names at every rollout, so name the pod that serves --base-url now`
    case 'forbidden':
      return `the kubeconfig's user needs get on pods and pods/log and create on pods/exec${ns ? ` in namespace${ns.slice(3)}` : ''}: grant them (a Role and a RoleBinding), or pass --kube-opts "--context <one that has them>"`
    case 'no-kubectl':
      return 'install kubectl where armproof runs (it reads the pod through kubectl), or put it on PATH'
    case 'unreachable':
      return `check --kube-opts (--context, --kubeconfig, --server) and that the API server answers: run kubectl get pod ${bare}${ns} by hand`
    case 'container-down':
      return `the engine's container is not running: kubectl describe pod ${bare}${ns} says why, kubectl logs ${bare}${ns} --previous shows how it ended; run again once the pod runs`
  }
}

export function parsePod(r: HostResult): PodRead {
  if (r.exitCode !== 0) {
    const said = lastLine(r.stderr || r.stdout) || `exit ${r.exitCode}`
    const kind = kubectlFailure(`${r.stderr}\n${r.stdout}`, r.exitCode)
    return {
      kind: kind === undefined || kind === 'container-down' ? 'unreadable' : kind,
      said: kind === undefined ? `kubectl get pod failed: ${said}` : said,
    }
  }
  let doc: unknown
  try {
    doc = JSON.parse(r.stdout)
  } catch {
    return { kind: 'unreadable', said: `kubectl get pod printed no JSON: ${lastLine(r.stdout) || '(nothing)'}` }
  }
  const o = (v: unknown): Record<string, unknown> =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {}
  const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])
  const pod = o(doc)
  if (pod.kind !== 'Pod') return { kind: 'unreadable', said: `kubectl get pod answered ${JSON.stringify(pod.kind ?? null)}, not a Pod` }
  const spec = o(pod.spec)
  const status = o(pod.status)
  const statuses = new Map(list(status.containerStatuses).map((c) => [String(o(c).name), o(o(c).state)]))
  const containers = list(spec.containers).map((c): PodContainer => {
    const name = String(o(c).name ?? '')
    const state = statuses.get(name) ?? {}
    const [kind] = Object.keys(state).filter((k) => k === 'running' || k === 'waiting' || k === 'terminated') as PodContainer['state'][]
    const reason = kind && kind !== 'running' ? o(state[kind]).reason : undefined
    const ports = list(o(c).ports)
      .map((p) => o(p).containerPort)
      .filter((p): p is number => Number.isInteger(p))
    return { name, ports, state: kind ?? 'unknown', reason: typeof reason === 'string' ? reason : null }
  })
  return { kind: 'pod', phase: typeof status.phase === 'string' ? status.phase : 'Unknown', containers }
}

/** Why the engine cannot be read in this pod (it is absent, or not running), or why kubectl could not say; undefined: it runs. */
export function podTrouble(read: PodRead, pod: PodReach): { kind: 'missing' | 'unobserved'; observed: string; next: string } | undefined {
  switch (read.kind) {
    case 'pod': {
      const running = read.containers.filter((c) => c.state === 'running')
      if (read.phase === 'Running' && running.length > 0) return undefined
      const states = read.containers.map((c) => `${c.name} ${c.state}${c.reason ? ` (${c.reason})` : ''}`).join(', ')
      return {
        kind: 'missing',
        observed: `pod ${pod.name} is ${read.phase}${states ? `, its containers: ${states}` : ''}: no container runs the engine`,
        next: kubectlNext('container-down', pod),
      }
    }
    case 'no-pod':
      return { kind: 'missing', observed: `no pod ${pod.name}: ${read.said}`, next: kubectlNext('no-pod', pod) }
    case 'forbidden':
      return { kind: 'unobserved', observed: `kubectl may not read pod ${pod.name}: ${read.said}`, next: kubectlNext('forbidden', pod) }
    case 'no-kubectl':
      return { kind: 'unobserved', observed: `kubectl could not be run here: ${read.said}`, next: kubectlNext('no-kubectl', pod) }
    case 'unreachable':
      return { kind: 'unobserved', observed: `kubectl could not reach the cluster: ${read.said}`, next: kubectlNext('unreachable', pod) }
    case 'unreadable':
      return {
        kind: 'unobserved',
        observed: read.said,
        next: `run kubectl get pod ${pod.name.split('/').at(-1)} -o json by hand: armproof reads the pod's status and declared ports from it`,
      }
  }
}

/**
 * The lookup's read did not run in the pod at all (it printed none of its marks): kubectl exec
 * failed, or the container has no POSIX sh (a distroless image). Nothing in the pod was observed.
 */
export function inPodTrouble(
  r: HostResult,
  pod: PodReach,
  ran: boolean,
): { kind: 'unobserved'; observed: string; next: string } | undefined {
  if (ran || r.exitCode === 0) return undefined
  const said = lastLine(r.stderr || r.stdout) || `exit ${r.exitCode}`
  const kind = kubectlFailure(`${r.stderr}\n${r.stdout}`, r.exitCode)
  return {
    kind: 'unobserved',
    observed: `the engine's processes could not be read in pod ${pod.name} (kubectl exec … -- sh -c exited ${r.exitCode}): ${said}`,
    next: kind
      ? kubectlNext(kind, pod)
      : "the reads run in the engine's container with kubectl exec -- sh -c: it needs sh, awk, ls and pidof (a distroless image has none); give the container a shell, or run armproof on the node with --runtime process",
  }
}

/** The ports the pod declares for its running containers. */
export function declaredPorts(read: PodRead): number[] {
  if (read.kind !== 'pod') return []
  return [...new Set(read.containers.filter((c) => c.state === 'running').flatMap((c) => c.ports))].sort((a, b) => a - b)
}
