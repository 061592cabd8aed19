// The engine is found from the endpoint: the process proven is the one that serves the base URL.
// In order: the process named `--process` that holds the listening socket of the URL's port
// (after a fork, the family's root); else the runtime's own step (./runtime.ts: the engine in the
// container of `{svc}` under podman or docker, the one listening on a port its pod declares under
// kubernetes, none for a bare process); else the pid `--pid-cmd` prints; else the one process
// `pidof --process` finds. Under kubernetes the pod is read first (it must run), and every /proc
// read runs in it through `kubectl exec`. Several engines under
// one name on one host are a normal layout: the one serving the port is proven, the others are
// named with their ports. Used by step argv, by first contact (./unserved.ts) and by the meter's
// re-check after its watch (./recheck.ts), so all three find the engine the same way.
import type { HostSpec } from '../config/load.ts'
import { fillTemplate, type HostClient, type HostResult, type HostRun } from '../seams/host.ts'
import { sharedReadsOn } from '../seams/host-gather.ts'
import { SURVEYS } from './survey-many.ts'
import { processTree, startTimeSeconds } from './proc.ts'
import { urlIsThisHost } from './same-host.ts'
import { runsScript } from './named.ts'
import {
  containerScript,
  detailsScript,
  parseContainer,
  parseDetails,
  ranScript,
  surveyOf,
  surveyScript,
  type ProcRead,
  type Survey,
} from './survey.ts'
import {
  containerTool,
  declaredPorts,
  engineContainer,
  inContainer,
  inPod,
  inPodTrouble,
  parsePod,
  podTrouble,
  procRead,
  procRun,
  readPod,
  type PodContainerChoice,
  type RuntimeReach,
} from './runtime.ts'
import {
  argvPort,
  bearsName,
  describeHolders,
  describeOthers,
  foreignHolders,
  holdersOf,
  isForwarder,
  othersOf,
  portListeners,
  socketPorts,
  type OtherEngine,
  type PortHolder,
} from './describe.ts'

export type FoundBy = 'listener' | 'container' | 'pid-cmd' | 'pidof'

/** What to look for, and where (`runtime` unset: podman; `pod`: a kubernetes target's pod). */
export interface EngineQuery extends RuntimeReach {
  process: string
  svc: string
  unit: string | null
  /** The base URL's port and host name; null without a base URL. */
  port: number | null
  urlHost: string | null
  /** `--pid-cmd`, a template with `{svc}`, `{unit}`, `{port}`; null: not given. */
  pidCmd: string | null
  host: HostSpec
  timeoutMs: number
}

interface Seen {
  /** What `pidof --process` found. */
  named: string[]
  others: OtherEngine[]
  portHolders: PortHolder[]
  /** The host commands run, as run (for `where`). */
  commands: string[]
}

export interface EngineFound extends Seen {
  kind: 'found'
  pid: string
  foundBy: FoundBy
  /** How it was found, one clause: "holds the listening socket of port 8000 (0.0.0.0)". */
  how: string
  argv: string[]
  startTimeSeconds: number | null
  /** Seconds, 1 / CLK_TCK. */
  startTimeResolution: number
  listenerTied: boolean
  /**
   * Found by its name or as a container's process while other processes (not its own children,
   * nor, for a container, the runtime's port forwarder) hold the base URL's port on the host
   * inspected: the endpoint answers from them (a proxy in front, or another engine). Only the
   * page's process_start_time_seconds can then tie the endpoint to this pid (step argv).
   */
  servedByOthers: PortHolder[]
  /** Under kubernetes, the container of a pod of several its reads ran in (`kubectl exec -c`), and why. */
  container?: PodContainerChoice
}

export interface EngineNotFound extends Seen {
  /** missing: no engine by any way; ambiguous: several, none proven the one serving the URL; unobserved: the runtime could not be read (kubectl refused). */
  kind: 'missing' | 'ambiguous' | 'unobserved'
  observed: string
  next: string
  pids: string[]
}

export interface EngineTrouble {
  kind: 'trouble'
  result: HostResult
}

export type EngineLookup = EngineFound | EngineNotFound | EngineTrouble

/** Where to look when no engine runs: the runtime's own listing. */
function notRunningCheck(q: EngineQuery, tool: 'podman' | 'docker' | null): string {
  if (q.pod) return `check the pod (kubectl describe pod ${q.pod.pod}) and its container's command`
  const unit = q.unit !== null ? `systemctl status ${q.unit}, ` : ''
  return `check the service (${unit}${tool ?? 'ps -ef'}${tool ? ' ps' : ''})`
}

/** The base URL's port (the scheme's when it names none) and host; nulls without a URL. */
export function endpointOf(baseUrl: string | null): { port: number | null; urlHost: string | null } {
  if (baseUrl === null) return { port: null, urlHost: null }
  const u = new URL(baseUrl)
  return { port: u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80, urlHost: u.hostname }
}

function run(host: HostClient, q: EngineQuery, script: string, asDeployUser = false): Promise<HostResult> {
  return asDeployUser ? host.run({ script, asDeployUser, timeoutMs: q.timeoutMs }) : procRead(host, q, script)
}

/** The lookup's first read, the survey of the host (or of the pod; one call when the listener or pidof decides). */
export function surveyRead(q: Pick<EngineQuery, 'process' | 'port' | 'timeoutMs' | 'pod'>): HostRun {
  return procRun(q, surveyScript(q.process, q.port))
}

/**
 * The survey: shared with the other targets of the host where reads are shared (a live fleet,
 * ./survey-many.ts), else its own. A pod's processes are seen from inside it alone: never shared.
 * `signal`: the caller no longer wants it (the host seam's cancel).
 */
export function readSurvey(
  host: HostClient,
  q: Pick<EngineQuery, 'process' | 'port' | 'timeoutMs' | 'pod'>,
  signal?: AbortSignal,
): Promise<HostResult> {
  return host.gather && sharedReadsOn() && !q.pod
    ? host.gather(SURVEYS, { process: q.process, port: q.port }, q.timeoutMs, signal)
    : host.run(surveyRead(q), signal)
}

/** The processes of `pids` whose parent is not among them: a fork's children keep their parent's name and command line. */
function familyRoots(survey: Survey, pids: readonly string[]): string[] {
  return pids.filter((p) => !pids.includes(survey.procs.get(p)?.stat?.ppid ?? ''))
}

/** How the one process of the name was found, for `how`: pidof's words, or the interpreter and the script it runs. */
function namedBy(survey: Survey, pid: string, name: string): string {
  const argv = survey.procs.get(pid)?.argv ?? []
  if (runsScript(argv, name)) return `named ${name} (${argv[0]} running its script ${argv[1]})`
  const argv0 = argv[0]?.slice(argv[0].lastIndexOf('/') + 1)
  return argv0 === undefined || argv0 === name ? `pidof ${name} finds` : `named ${name} (its task name; its argv[0] is ${argv[0]})`
}

/** Looks the engine process up on the host (one host call when the listener or pidof decides). */
export async function findEngine(host: HostClient, q: EngineQuery): Promise<EngineLookup> {
  const commands: string[] = []
  // 0. Kubernetes: the pod, which must run before anything in it can be read.
  const pod = q.pod ? await readPod(host, { ...q, pod: q.pod }) : undefined
  const podRead = pod ? parsePod(pod) : undefined
  if (pod) {
    commands.push(pod.command)
    if (pod.failure) return { kind: 'trouble', result: pod }
    const trouble = podTrouble(podRead!, q.pod!)
    if (trouble) return { ...trouble, pids: [], named: [], others: [], portHolders: [], commands }
  }
  // A pod of several containers: every read in the one declaring the base URL's port, not kubectl's default (the first: a sidecar).
  const container = podRead ? engineContainer(podRead, q.port) : undefined
  q = inContainer(q, container)
  const surveyed = await readSurvey(host, q)
  if (surveyed.failure) return { kind: 'trouble', result: surveyed }
  commands.push(surveyed.command)
  const unread = q.pod ? inPodTrouble(surveyed, q.pod, ranScript(surveyed.stdout)) : undefined
  if (unread) return { ...unread, pids: [], named: [], others: [], portHolders: [], commands }
  const survey = surveyOf(surveyed)
  const listeners = portListeners(survey, q)
  const portHolders = holdersOf(survey, listeners)
  const base = (chosen: string | null): Seen => ({
    named: survey.named,
    others: othersOf(survey, q.process, chosen),
    portHolders,
    commands,
  })
  const resolution = survey.clkTck !== null ? 1 / survey.clkTck : 0.01
  const found = async (pid: string, foundBy: FoundBy, how: string): Promise<EngineFound | EngineTrouble> => {
    let proc: ProcRead | undefined = survey.procs.get(pid)
    if (!proc || proc.argv.length === 0) {
      const details = await run(host, q, detailsScript([pid]))
      commands.push(details.command)
      if (details.failure) return { kind: 'trouble', result: details }
      proc = parseDetails(details.stdout).get(pid)
    }
    const stat = proc?.stat
    const start =
      stat && survey.btime !== null && survey.clkTck !== null ? startTimeSeconds(stat.startTicks, survey.btime, survey.clkTck) : null
    const listenerTied = foundBy === 'listener' && urlIsThisHost(q.urlHost, q.host)
    const foreign = urlIsThisHost(q.urlHost, q.host) ? foreignHolders(survey, portHolders, pid) : []
    const servedByOthers = foundBy === 'pidof' ? foreign : foundBy === 'container' ? foreign.filter((h) => !isForwarder(h)) : []
    return {
      kind: 'found',
      pid,
      foundBy,
      how,
      argv: proc?.argv ?? [],
      startTimeSeconds: start,
      startTimeResolution: resolution,
      listenerTied,
      servedByOthers,
      ...(container ? { container } : {}),
      ...base(pid),
    }
  }

  // 1. The engine that holds the listening socket of the URL's port.
  const engines = [...new Set(portHolders.flatMap((h) => (h.pid !== null && bearsName(survey, h.pid, q.process) ? [h.pid] : [])))]
  if (engines.length > 0) {
    const ppid = (p: string) => survey.procs.get(p)?.stat?.ppid
    const roots = engines.filter((p) => !engines.includes(ppid(p) ?? ''))
    if (roots.length === 1) {
      const root = roots[0]!
      const bound = listeners.filter((l) => survey.owners.get(l.inode)?.includes(root)).map((l) => l.address)
      const shared =
        engines.length > 1
          ? `, shared after a fork with ${engines
              .filter((p) => p !== root)
              .map((p) => `pid ${p}`)
              .join(', ')}`
          : ''
      return found(root, 'listener', `holds the listening socket of port ${q.port} (${[...new Set(bound)].join(', ')})${shared}`)
    }
    return {
      kind: 'ambiguous',
      pids: roots,
      observed: `${roots.length} engines named ${q.process} listen on port ${q.port}: ${describeHolders(portHolders)}; which one answers a request is the kernel's choice`,
      next: `two engines share one port (SO_REUSEPORT, or each bound to its own address): point --base-url at an address only one of them serves, or stop the stray one (ps -o pid,lstart,args -p ${roots.join(',')})`,
      ...base(null),
    }
  }
  const servedBy =
    portHolders.length > 0
      ? `port ${q.port} is served by ${describeHolders(portHolders)}, not by a process named ${q.process}`
      : q.port !== null
        ? `no process here listens on port ${q.port}`
        : 'no base URL to find a listener from'

  // 2. The runtime's own step: the engine in the service's container, or listening on a port its pod declares.
  const tool = containerTool(q.runtime)
  if (tool !== null) {
    const inspected = await run(host, q, containerScript(q.svc, tool), true)
    commands.push(inspected.command)
    if (inspected.failure) return { kind: 'trouble', result: inspected }
    const container = parseContainer(inspected.stdout)
    if (container.pid === '0') {
      const start =
        q.unit !== null
          ? `systemctl start ${q.unit}, ${tool} ps -a`
          : `${tool} start ${q.svc}; ${tool} ps -a, ${tool} logs ${q.svc} say why it stopped`
      return {
        kind: 'missing',
        pids: [],
        observed: `container ${q.svc} exists but is not running (${tool} inspect: State.Pid 0); ${servedBy}`,
        next: `start it (${start}), wait for the engine to load, and run again`,
        ...base(null),
      }
    }
    if (container.pid !== null) {
      const tree = processTree(container.pid, container.stats)
      const engine = tree.find((p) => container.stats.get(p)?.comm === q.process.slice(0, 15) || bearsName(survey, p, q.process))
      if (engine === undefined) {
        const names = [...new Set(tree.map((p) => container.stats.get(p)?.comm).filter(Boolean))].slice(0, 8).join(', ')
        return {
          kind: 'missing',
          pids: tree,
          observed: `container ${q.svc} runs (pid ${container.pid}), but no process in it is named ${q.process} (it runs: ${names || 'nothing readable'}); ${servedBy}`,
          next: `set --process to the engine's process name in ${q.svc}`,
          ...base(null),
        }
      }
      return found(
        engine,
        'container',
        `is the engine of container ${q.svc} (${engine === container.pid ? 'its main process' : `under its main process ${container.pid}`}, ${tool} inspect); ${servedBy}`,
      )
    }
  }
  const declared = podRead ? declaredPorts(podRead).filter((p) => p !== q.port) : []
  if (declared.length > 0) {
    const onDeclared = survey.named.filter((p) => socketPorts(survey, p).some((port) => declared.includes(port)))
    const roots = onDeclared.filter((p) => !onDeclared.includes(survey.procs.get(p)?.stat?.ppid ?? ''))
    if (roots.length === 1) {
      const ports = socketPorts(survey, roots[0]!).filter((port) => declared.includes(port))
      return found(
        roots[0]!,
        'container',
        `listens on port ${ports.join(', ')}, which pod ${q.pod!.name} declares for its container (kubectl get pod); ${servedBy}`,
      )
    }
  }

  // 3. --pid-cmd.
  if (q.pidCmd !== null) {
    const filled = fillTemplate(q.pidCmd, {
      svc: q.svc,
      unit: q.unit,
      port: String(q.port ?? ''),
      ...(q.pod ? { pod: q.pod.pod, kube: q.pod.kube } : {}),
    })
    const r = await run(host, q, filled, true)
    commands.push(r.command)
    if (r.failure) return { kind: 'trouble', result: r }
    const pids = r.stdout.trim().split(/\s+/).filter(Boolean)
    if (r.exitCode !== 0 || pids.length !== 1 || !/^\d+$/.test(pids[0]!)) {
      return {
        kind: 'missing',
        pids: [],
        observed: `--pid-cmd printed ${JSON.stringify(r.stdout.trim().slice(0, 200))}${r.exitCode !== 0 ? ` (exit ${r.exitCode}${r.stderr.trim() ? `: ${r.stderr.trim().split('\n').at(-1)}` : ''})` : ''}, not one pid; ${servedBy}`,
        next: "make --pid-cmd print exactly the engine's pid (run it on the host by hand)",
        ...base(null),
      }
    }
    return found(pids[0]!, 'pid-cmd', `is the pid --pid-cmd prints; ${servedBy}`)
  }

  // 4. pidof, where exactly one runs (a fork's children keep the name: the family's root is the
  // engine); of several, the one whose command line names the port (still loading: not listening yet).
  const named = familyRoots(survey, survey.named)
  if (named.length === 1)
    return found(named[0]!, 'pidof', `is the only process ${namedBy(survey, named[0]!, q.process)}${inPod(q)}; ${servedBy}`)
  const loading =
    portListeners(survey, q).length === 0 && q.port !== null
      ? named.filter((p) => argvPort(survey.procs.get(p)?.argv ?? []) === q.port && socketPorts(survey, p).length === 0)
      : []
  if (loading.length === 1)
    return found(
      loading[0]!,
      'pidof',
      `is the only process named ${q.process} whose command line names port ${q.port} (it does not listen yet: loading?); ${servedBy}`,
    )
  if (survey.named.length === 0) {
    return {
      kind: 'missing',
      pids: [],
      observed: `engine not running: pidof ${q.process} found no process${inPod(q)}, ${tool !== null ? `no container answers for ${q.svc}` : q.pod ? `no process listens on a port the pod declares` : 'no --pid-cmd was given'}, and ${servedBy}`,
      next: `the engine is not running ${q.pod ? `in pod ${q.pod.name}` : 'on this host'}: ${notRunningCheck(q, tool)}, or set --process if it runs under another name${portHolders.some((h) => h.name) ? ` (port ${q.port} is served by ${portHolders.flatMap((h) => (h.name ? [h.name] : [])).join(', ')})` : ''}`,
      ...base(null),
    }
  }
  const others = othersOf(survey, q.process, null)
  if (loading.length > 1) {
    return {
      kind: 'ambiguous',
      pids: loading,
      observed: `${loading.length} processes named ${q.process} (pids ${loading.join(', ')}) name port ${q.port} on their command line and none listens on it yet: which one will serve it cannot be told`,
      next: `an old engine may still be draining beside a new one: wait until /health answers and run again, or stop the stray one (ps -o pid,lstart,args -p ${loading.join(',')})`,
      ...base(null),
    }
  }
  return {
    kind: 'ambiguous',
    pids: named,
    observed: `${named.length} processes named ${q.process} (${describeOthers(others)}), and ${servedBy}: which of them serves the base URL cannot be told`,
    next: `point --base-url at the engine's own port${others.some((o) => o.ports.length) ? ` (${[...new Set(others.flatMap((o) => o.ports))].join(' or ')})` : ''} so the one serving it is proven, or give --pid-cmd to name it`,
    ...base(null),
  }
}
