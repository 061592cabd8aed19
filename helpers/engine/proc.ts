// What Linux's /proc says about sockets and processes, read from its text. Pure: the host reads
// are in ./survey.ts; these functions only parse what came back (tests feed them fake /proc text).

/** One listening TCP socket, from a line of /proc/net/tcp or /proc/net/tcp6. */
export interface Listener {
  /** The local address as text: `0.0.0.0`, `127.0.0.1`, `::`, `::1`, `::ffff:127.0.0.1`, … */
  address: string
  port: number
  inode: string
  family: 4 | 6
}

/** The kernel's TCP state code for LISTEN (include/net/tcp_states.h: TCP_LISTEN = 10). */
const LISTEN = '0A'

/** A 32-bit word of /proc/net/tcp{,6}: printed in host byte order, i.e. little-endian on every Linux armproof meets. */
function wordBytes(hex8: string): number[] {
  const n = Number.parseInt(hex8, 16)
  return [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff]
}

/** `0100007F` → 127.0.0.1; 32 hex digits → an IPv6 address, v4-mapped ones as `::ffff:a.b.c.d`. */
export function decodeAddress(hex: string): string | undefined {
  if (/^[0-9A-Fa-f]{8}$/.test(hex)) return wordBytes(hex).join('.')
  if (!/^[0-9A-Fa-f]{32}$/.test(hex)) return undefined
  const bytes = [0, 1, 2, 3].flatMap((i) => wordBytes(hex.slice(i * 8, i * 8 + 8)))
  const groups = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => (bytes[i * 2]! << 8) | bytes[i * 2 + 1]!)
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) return `::ffff:${bytes.slice(12).join('.')}`
  // The longest run of zero groups (two or more) becomes `::`, as inet_ntop writes it.
  let best = { at: -1, len: 0 }
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < 8 && groups[j] === 0) j++
    if (j - i > best.len) best = { at: i, len: j - i }
    i = j
  }
  const text = (gs: number[]) => gs.map((g) => g.toString(16)).join(':')
  if (best.len < 2) return text(groups)
  return `${text(groups.slice(0, best.at))}::${text(groups.slice(best.at + best.len))}`
}

/**
 * The listening sockets among lines of /proc/net/tcp and /proc/net/tcp6 (header lines, other
 * states and lines that do not parse are left out): `sl local rem st … uid timeout inode`.
 */
export function parseListeners(text: string): Listener[] {
  const out: Listener[] = []
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/)
    if (f.length < 10 || !/^\d+:$/.test(f[0]!) || f[3] !== LISTEN) continue
    const m = /^([0-9A-Fa-f]{8}|[0-9A-Fa-f]{32}):([0-9A-Fa-f]{4})$/.exec(f[1]!)
    if (!m || !/^\d+$/.test(f[9]!) || f[9] === '0') continue
    const address = decodeAddress(m[1]!)
    if (address === undefined) continue
    out.push({ address, port: Number.parseInt(m[2]!, 16), inode: f[9]!, family: m[1]!.length === 8 ? 4 : 6 })
  }
  return out
}

/** `pid inode` lines (which process holds which listening socket) → inode → the pids holding it. */
export function parseOwners(text: string): Map<string, string[]> {
  const owners = new Map<string, string[]>()
  for (const line of text.split('\n')) {
    const m = /^\s*(\d+)\s+(\d+)\s*$/.exec(line)
    if (!m) continue
    const pids = owners.get(m[2]!) ?? []
    if (!pids.includes(m[1]!)) pids.push(m[1]!)
    owners.set(m[2]!, pids)
  }
  return owners
}

/** The fields of /proc/<pid>/stat armproof reads. */
export interface ProcStat {
  pid: string
  /** The task name (`comm`, at most 15 characters; it may hold spaces and parentheses). */
  comm: string
  ppid: string
  /** Field 22: when the process started, in clock ticks after boot. */
  startTicks: number
}

/**
 * One /proc/<pid>/stat line. The name sits in parentheses and may itself hold `) (`, so the fields
 * after it are counted from the LAST `)`, as prometheus_client and procps do.
 */
export function parseStat(line: string): ProcStat | undefined {
  const open = line.indexOf('(')
  const close = line.lastIndexOf(')')
  if (open < 0 || close < open) return undefined
  const pid = line.slice(0, open).trim()
  const rest = line
    .slice(close + 1)
    .trim()
    .split(/\s+/)
  // rest[0] is field 3 (state): field n is rest[n - 3].
  const ppid = rest[1]
  const start = rest[19]
  if (!/^\d+$/.test(pid) || ppid === undefined || !/^\d+$/.test(ppid) || start === undefined || !/^\d+$/.test(start)) return undefined
  return { pid, comm: line.slice(open + 1, close), ppid, startTicks: Number(start) }
}

/** Every stat line of a `cat /proc/[0-9]*\/stat`, by pid. */
export function parseStats(text: string): Map<string, ProcStat> {
  const stats = new Map<string, ProcStat>()
  for (const line of text.split('\n')) {
    const s = parseStat(line)
    if (s) stats.set(s.pid, s)
  }
  return stats
}

/**
 * The process's start time in seconds since the epoch, as prometheus_client computes
 * `process_start_time_seconds`: field 22 in clock ticks, divided by CLK_TCK, plus `btime` of
 * /proc/stat. Its resolution is one clock tick (1 / CLK_TCK seconds).
 */
export function startTimeSeconds(startTicks: number, btime: number, clkTck: number): number {
  return btime + startTicks / clkTck
}

/** `/proc/<pid>/cmdline` (NUL-separated) → argv. */
export function parseCmdline(raw: string): string[] {
  const parts = raw.split('\0')
  if (parts.at(-1) === '') parts.pop()
  return parts
}

/** The descendants of `root` (itself first), from every process's parent. */
export function processTree(root: string, stats: ReadonlyMap<string, ProcStat>): string[] {
  const children = new Map<string, string[]>()
  for (const s of stats.values()) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s.pid])
  const tree: string[] = []
  const queue = [root]
  while (queue.length > 0) {
    const pid = queue.shift()!
    if (tree.includes(pid)) continue
    tree.push(pid)
    queue.push(...(children.get(pid) ?? []).sort((a, b) => Number(a) - Number(b)))
  }
  return tree
}
