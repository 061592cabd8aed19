// The engine processes a survey saw, described: which bear the engine's name, the ports each
// listens on (or names on its argv), who holds the base URL's port; and those as words for
// messages. Pure, over ./survey.ts' reads; ./find.ts decides with them.
import { RADIANCE_PARSER } from '../argparse/rules.ts'
import { resolveFlag } from '../argparse/resolve.ts'
import { processTree, type Listener } from './proc.ts'
import { reaches } from './same-host.ts'
import type { Survey } from './survey.ts'
import { commOf, runsScript } from './named.ts'

/** Another engine of the same name on the host, and the ports it listens on (or, not listening yet, names on its argv). */
export interface OtherEngine {
  pid: string
  ports: number[]
  portsFrom: 'sockets' | 'argv' | 'none'
}

/** A holder of a listening socket of the URL's port: a pid and its name, or a socket whose holder this user cannot see. */
export interface PortHolder {
  pid: string | null
  name: string | null
  address: string
}

const basename = (p: string): string => p.slice(p.lastIndexOf('/') + 1)

/** A process bears the engine's name as the survey reads it (./named.ts): its argv[0]'s basename, its task name, or the script an interpreter runs. */
export function bearsName(survey: Survey, pid: string, name: string): boolean {
  if (survey.named.includes(pid)) return true
  const p = survey.procs.get(pid)
  return (
    (p?.argv[0] !== undefined && basename(p.argv[0]) === name) ||
    p?.stat?.comm === commOf(name) ||
    (p !== undefined && runsScript(p.argv, name))
  )
}

/** A process's name for messages: its argv[0]'s basename (node's task name is "MainThread"), else its task name. */
function nameOf(survey: Survey, pid: string): string | null {
  const p = survey.procs.get(pid)
  return (p?.argv[0] !== undefined ? basename(p.argv[0]) : undefined) || p?.stat?.comm || null
}

/** The port an engine names on its argv (`--port`, as its parser reads it), if any. */
export function argvPort(argv: readonly string[]): number | undefined {
  const v = resolveFlag(argv, '--port', RADIANCE_PARSER, null).value
  return v !== undefined && /^\d{1,5}$/.test(v) ? Number(v) : undefined
}

/** The ports a process listens on in the host's network namespace. */
export function socketPorts(survey: Survey, pid: string): number[] {
  const ports = survey.listeners.filter((l) => survey.owners.get(l.inode)?.includes(pid)).map((l) => l.port)
  return [...new Set(ports)].sort((a, b) => a - b)
}

/** The pids in `pid`'s subtree among the processes the survey read (its children after a fork). */
export function family(survey: Survey, pid: string): Set<string> {
  const stats = new Map([...survey.procs].flatMap(([p, r]) => (r.stat ? [[p, r.stat] as const] : [])))
  return new Set(processTree(pid, stats))
}

/** The engines named `name` the survey saw, but `chosen` and its children, each with its ports. */
export function othersOf(survey: Survey, name: string, chosen: string | null): OtherEngine[] {
  const mine = chosen === null ? new Set<string>() : family(survey, chosen)
  const pids = [...new Set([...survey.named, ...survey.procs.keys()])].filter((p) => !mine.has(p) && bearsName(survey, p, name))
  return pids
    .sort((a, b) => Number(a) - Number(b))
    .map((pid) => {
      const ports = socketPorts(survey, pid)
      if (ports.length > 0) return { pid, ports, portsFrom: 'sockets' as const }
      const port = argvPort(survey.procs.get(pid)?.argv ?? [])
      return port !== undefined ? { pid, ports: [port], portsFrom: 'argv' as const } : { pid, ports: [], portsFrom: 'none' as const }
    })
}

/** The listening sockets of the URL's port that its host can reach. */
export function portListeners(survey: Survey, q: { port: number | null; urlHost: string | null }): Listener[] {
  return q.port === null ? [] : survey.listeners.filter((l) => l.port === q.port && reaches(l, q.urlHost))
}

export function holdersOf(survey: Survey, listeners: readonly Listener[]): PortHolder[] {
  const out: PortHolder[] = []
  for (const l of listeners) {
    const pids = survey.owners.get(l.inode) ?? []
    if (pids.length === 0) out.push({ pid: null, name: null, address: l.address })
    for (const pid of pids) if (!out.some((h) => h.pid === pid)) out.push({ pid, name: nameOf(survey, pid), address: l.address })
  }
  return out
}

/**
 * The holders of the URL's port outside `pid`'s family (a child it forked may hold its socket),
 * where the URL names the host inspected: another process serves the endpoint. Holders this
 * user cannot see are not counted (what they are cannot be told).
 */
export function foreignHolders(survey: Survey, holders: readonly PortHolder[], pid: string): PortHolder[] {
  const mine = family(survey, pid)
  return holders.filter((h) => h.pid !== null && !mine.has(h.pid))
}

/**
 * The processes a container runtime publishes a container's port with on the host: docker's
 * userland proxy, rootless podman's rootlessport (slirp4netns) or pasta. Holding the port, they
 * stand for the container, not for another server.
 */
const FORWARDERS: ReadonlySet<string> = new Set([
  'docker-proxy',
  'rootlessport',
  'rootlessport-child',
  'pasta',
  'pasta.avx2',
  'slirp4netns',
])

/** Whether a port's holder is a container runtime's port forwarder (by its name). */
export function isForwarder(h: PortHolder): boolean {
  return h.name !== null && FORWARDERS.has(h.name)
}

/** "pid 12 (nginx) on 0.0.0.0", for messages. */
export function describeHolders(holders: readonly PortHolder[]): string {
  return holders
    .map((h) =>
      h.pid === null ? `a process this user cannot see (on ${h.address})` : `pid ${h.pid}${h.name ? ` (${h.name})` : ''} on ${h.address}`,
    )
    .join(', ')
}

/** "pid 12 on port 8001, pid 13 on port 8002 (from its argv; not listening yet)", for messages. */
export function describeOthers(others: readonly OtherEngine[]): string {
  return others
    .map((o) =>
      o.portsFrom === 'none'
        ? `pid ${o.pid} (no port known)`
        : `pid ${o.pid} on port ${o.ports.join(', ')}${o.portsFrom === 'argv' ? ' (its --port; not listening yet)' : ''}`,
    )
    .join(', ')
}
