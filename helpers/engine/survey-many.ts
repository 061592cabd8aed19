// The survey of ./survey.ts for many targets of one host at once: one call reads the listening
// sockets, their holders, the processes of every name asked (./named.ts) and the stat line and command line
// of each process any target needs, and each target is then handed exactly what its own survey
// would have printed at that moment (`surveyView`: the same sections, the same lines, filtered as
// its script filters them). A fleet of engines on one host costs one survey per moment instead
// of one per target (each read of /proc/net/tcp and of every process's fds costs tens of
// milliseconds of the host's CPU). Used where the host seam gathers reads (HostClient.gather).
import { quote } from '../config/shell.ts'
import type { Gather, HostResult } from '../seams/host-result.ts'
import { parseListeners, parseOwners, type Listener } from './proc.ts'
import { namedLine } from './named.ts'
import { MARK, parseSurvey, pidsOf, portHex, readProcs, readSurveys, sections, socketReads, type ProcRead, type Survey } from './survey.ts'

/** What one target's survey asks: its process name and its base URL's port. */
export interface SurveyKey {
  process: string
  port: number | null
}

/** The survey script for every key at once (see ./survey.ts `surveyScript`, which it extends). */
export function manySurveyScript(keys: readonly SurveyKey[]): string {
  const names = [...new Set(keys.map((k) => k.process))]
  const hexes = [...new Set(keys.flatMap((k) => (k.port === null ? [] : [portHex(k.port)])))]
  return [
    ...socketReads(names.map((n, i) => namedLine(`F${i}`, n, quote)).join('\n'), names.map((_, i) => `$F${i}`).join(' '), hexes),
    ...names.map((_, i) => `echo '${MARK}pidof ${i}'; echo $F${i}`),
    // As the one-target survey: a cmdline that cannot be read fails the script (so --sudo auto
    // retries it under sudo -n); its error is also kept with its pid, for that target's view.
    'exec 3>&1',
    'for p in $P; do',
    `  echo "${MARK}stat $p"; cat /proc/$p/stat 2>/dev/null`,
    `  echo "${MARK}cmdline $p"; e=$(cat /proc/$p/cmdline 2>&1 >&3) || r=1; echo`,
    `  [ -n "$e" ] && { printf '%s\\n' "$e" >&2; printf '${MARK}unreadable %s\\n%s\\n' "$p" "$e"; }`,
    'done',
    `exit \${r:-0}`,
  ].join('\n')
}

const fields = (line: string): string[] => line.trim().split(/\s+/)
const lines = (text: string): string[] => text.split('\n').filter((l) => l !== '')

interface ListenLine {
  line: string
  inode: string
  listener: Listener | undefined
}
interface OwnerLine {
  line: string
  pid: string
  inode: string
  /** Its place among the owner lines, to keep their order. */
  at: number
}

/** What the named processes of one `pidof` answer hold, shared by every target asking for that name. */
interface Held {
  owners: OwnerLine[]
  inodes: Set<string>
  listen: ListenLine[]
  listeners: Listener[]
  ownerMap: Map<string, string[]>
}

/** The output of `manySurveyScript`, read once for every target's part. */
interface ManyRead {
  one(name: string, arg?: string): string
  has(name: string, arg: string): boolean
  btime: number | null
  clkTck: number | null
  listen: ListenLine[]
  /** Listening inodes by the port as /proc prints it (`:1F90`). */
  byPort: Map<string, string[]>
  owners: OwnerLine[]
  ownersByInode: Map<string, OwnerLine[]>
  procs: Map<string, ProcRead>
  held: Map<string, Held>
}

function readMany(stdout: string): ManyRead {
  const parts = sections(stdout)
  const byKey = new Map<string, string>()
  for (const s of parts) if (!byKey.has(`${s.name} ${s.arg}`)) byKey.set(`${s.name} ${s.arg}`, s.text)
  const one = (name: string, arg = '') => byKey.get(`${name} ${arg}`) ?? ''
  const listen = lines(one('listen')).flatMap((line) => {
    const f = fields(line)
    return f.length > 9 ? [{ line, inode: f[9]!, port: f[1]!.slice(-5), listener: parseListeners(line)[0] }] : []
  })
  const byPort = new Map<string, string[]>()
  for (const l of listen) byPort.set(l.port, [...(byPort.get(l.port) ?? []), l.inode])
  const owners = lines(one('owners')).flatMap((line, at) => {
    const f = fields(line)
    return f.length >= 2 ? [{ line, pid: f[0]!, inode: f[1]!, at }] : []
  })
  const ownersByInode = new Map<string, OwnerLine[]>()
  for (const o of owners) ownersByInode.set(o.inode, [...(ownersByInode.get(o.inode) ?? []), o])
  // The same numbers parseSurvey reads from a survey's own text.
  const own = parseSurvey(`${MARK}btime\n${one('btime')}${MARK}clk_tck\n${one('clk_tck')}`)
  return {
    one,
    has: (name, arg) => byKey.has(`${name} ${arg}`),
    btime: own.btime,
    clkTck: own.clkTck,
    listen,
    byPort,
    owners,
    ownersByInode,
    procs: readProcs(parts),
    held: new Map(),
  }
}

const ownerMap = (owners: readonly OwnerLine[]): Map<string, string[]> => parseOwners(owners.map((o) => o.line).join('\n'))

function heldBy(read: ManyRead, named: readonly string[]): Held {
  const key = named.join(' ')
  let held = read.held.get(key)
  if (!held) {
    const owners = read.owners.filter((o) => named.includes(o.pid))
    const inodes = new Set(owners.map((o) => o.inode))
    const listen = read.listen.filter((l) => inodes.has(l.inode))
    held = { owners, inodes, listen, listeners: listen.flatMap((l) => (l.listener ? [l.listener] : [])), ownerMap: ownerMap(owners) }
    read.held.set(key, held)
  }
  return held
}

/**
 * `key`'s own survey, cut from what `manySurveyScript(keys)` printed (`read`): read already (the
 * lines its script keeps: the listening sockets of its port and of the processes its name finds,
 * their holders, those processes), and as the text its script prints, made when asked.
 */
function viewOf(read: ManyRead, keys: readonly SurveyKey[], key: SurveyKey): { survey: Survey; text: () => string; unreadable: string[] } {
  const names = [...new Set(keys.map((k) => k.process))]
  const hex = portHex(key.port)
  const onPort = new Set(hex === '' ? [] : (read.byPort.get(hex) ?? []))
  const named = pidsOf(read.one('pidof', String(names.indexOf(key.process))))
  const held = heldBy(read, named)
  const onPortOwners = [...onPort].flatMap((i) => read.ownersByInode.get(i) ?? [])
  // Shared with every target of that name when its port's sockets are all the named processes' own (a fleet of one process); else its own cut.
  const alone = [...onPort].some((i) => !held.inodes.has(i)) || onPortOwners.some((o) => !named.includes(o.pid))
  const kept = alone ? [...new Set([...held.owners, ...onPortOwners])].sort((a, b) => a.at - b.at) : held.owners
  const keep = alone ? new Set([...onPort, ...kept.map((o) => o.inode)]) : held.inodes
  const listen = alone ? read.listen.filter((l) => keep.has(l.inode)) : held.listen
  const holders = onPortOwners.map((o) => o.pid)
  const pids = [...new Set([...named, ...holders])].filter((p) => /^\d+$/.test(p)).sort((a, b) => Number(a) - Number(b))
  const survey: Survey = {
    btime: read.btime,
    clkTck: read.clkTck,
    listeners: alone ? listen.flatMap((l) => (l.listener ? [l.listener] : [])) : held.listeners,
    owners: alone ? ownerMap(kept) : held.ownerMap,
    named,
    procs: new Map(pids.map((p) => [p, read.procs.get(p) ?? { stat: undefined, argv: [] }])),
  }
  const text = () =>
    [
      `${MARK}btime\n${read.one('btime')}`,
      `${MARK}clk_tck\n${read.one('clk_tck')}`,
      `${MARK}listen\n${listen.map((l) => `${l.line}\n`).join('')}`,
      `${MARK}owners\n${kept.map((o) => `${o.line}\n`).join('')}`,
      `${MARK}pidof\n${named.join(' ')}\n`,
      ...pids.map((p) => `${MARK}stat ${p}\n${read.one('stat', p)}${MARK}cmdline ${p}\n${read.one('cmdline', p)}`),
    ].join('')
  const unreadable = pids.flatMap((p) => (read.has('unreadable', p) ? [read.one('unreadable', p)] : []))
  return { survey, text, unreadable }
}

/** What `key`'s own survey would have printed, cut from the output of `manySurveyScript(keys)`, and that read. */
export function surveyView(
  stdout: string,
  keys: readonly SurveyKey[],
  key: SurveyKey,
): { stdout: string; survey: Survey; unreadable: string[] } {
  const v = viewOf(readMany(stdout), keys, key)
  return { stdout: v.text(), survey: v.survey, unreadable: v.unreadable }
}

/** Every target of one shared survey is cut from the same result: it is read once. */
const readCache = new WeakMap<HostResult, ManyRead>()

/** The surveys of many targets of one host, gathered into one call by the host seam. */
export const SURVEYS: Gather<SurveyKey> = {
  kind: 'survey',
  privileged: true,
  keyOf: (k) => `${k.process}\n${k.port ?? ''}`,
  script: manySurveyScript,
  view(r: HostResult, keys, key): HostResult {
    if (r.failure) return r
    let read = readCache.get(r)
    if (!read) readCache.set(r, (read = readMany(r.stdout)))
    const v = viewOf(read, keys, key)
    // Its text is made only when something reads it (a key to redact from it, a message): the lookup reads the survey as read.
    let text: string | undefined
    const part: HostResult = { ...r, stderr: v.unreadable.join(''), exitCode: v.unreadable.length > 0 ? 1 : r.exitCode === null ? null : 0 }
    Object.defineProperty(part, 'stdout', { get: () => (text ??= v.text()), enumerable: true, configurable: true })
    readSurveys.set(part, v.survey)
    return part
  },
}
