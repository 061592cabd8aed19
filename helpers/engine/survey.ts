// The host reads that find the engine process, each a small script with its own parser, so a
// caller (or a later batch of a target's reads) can put them in one host call. Every value put
// into a script is quoted; every section of the output is marked, and parsed by ./proc.ts.
//
// - survey: the boot time and clock tick, the listening TCP sockets of the host's network
//   namespace, which process holds each (fd links `socket:[inode]`), the processes named <name>
//   (`pidof`'s, and an interpreter running a script of that name: ./named.ts), and the stat line
//   and command line of each of those processes: one call answers "who serves port P" and "which
//   engines of that name run here".
// - container: `podman inspect` (or `docker inspect`) of the service (as the deploy user) and the
//   stat lines of the container's process tree, to find the engine in it.
// - details: the stat line and command line of given pids (one found another way).
import { quote } from '../config/shell.ts'
import type { HostResult } from '../seams/host-result.ts'
import { namedLine } from './named.ts'
import { parseCmdline, parseListeners, parseOwners, parseStat, parseStats, type Listener, type ProcStat } from './proc.ts'

export const MARK = '@@armproof '

/** One process as the survey read it. */
export interface ProcRead {
  stat: ProcStat | undefined
  /** Its argv; empty when the command line could not be read (exited, hidden). */
  argv: string[]
}

export interface Survey {
  btime: number | null
  clkTck: number | null
  listeners: Listener[]
  /** Listening-socket inode → the pids holding it (only those this user may see). */
  owners: Map<string, string[]>
  /** The processes named `<name>`: what `pidof` found, and the scripts of that name an interpreter runs (./named.ts). */
  named: string[]
  procs: Map<string, ProcRead>
}

/** Whether a script of this module ran at all (printed its first mark), whatever it then found. */
export function ranScript(stdout: string): boolean {
  return stdout.includes(MARK)
}

/** The sections of a marked output: `@@armproof <name> [arg]` lines, each followed by its text. */
export function sections(stdout: string): Array<{ name: string; arg: string; text: string }> {
  const out: Array<{ name: string; arg: string; text: string }> = []
  let at = stdout.indexOf(MARK)
  while (at >= 0) {
    const eol = stdout.indexOf('\n', at)
    const head = stdout
      .slice(at + MARK.length, eol < 0 ? undefined : eol)
      .trim()
      .split(/\s+/)
    const next = eol < 0 ? -1 : stdout.indexOf(`\n${MARK}`, eol - 1)
    const body = eol < 0 ? '' : stdout.slice(eol + 1, next < 0 ? undefined : next + 1)
    out.push({ name: head[0] ?? '', arg: head[1] ?? '', text: body })
    at = next < 0 ? -1 : next + 1
  }
  return out
}

/** The per-process part of a survey and of `detailsScript`: stat and cmdline of each pid in `$P`. */
const PROC_LOOP = [
  'for p in $P; do',
  // The stat line is one line: read by the shell itself, with no process of its own (a process
  // that just exited prints nothing, as cat printed nothing).
  `  echo "${MARK}stat $p"; { IFS= read -r l < /proc/$p/stat && printf '%s\\n' "$l"; } 2>/dev/null`,
  // A cmdline that cannot be read (permission denied under hidepid) fails the script, so the host
  // seam's `--sudo auto` retries it under sudo -n; a process that just exited is simply absent.
  `  echo "${MARK}cmdline $p"; cat /proc/$p/cmdline || r=1; echo`,
  'done',
  `exit \${r:-0}`,
].join('\n')

/** The port as /proc/net/tcp{,6} prints it: a colon and four upper-case hex digits ('' for none). */
export const portHex = (port: number | null): string => (port === null ? '' : `:${port.toString(16).toUpperCase().padStart(4, '0')}`)

/**
 * The awk function that keeps the listening sockets (state 0A) of one /proc/net/tcp{,6} file, and
 * stops reading at its first connection. The kernel prints its listening table first and its
 * connections after it (net/ipv4/tcp_ipv4.c: the listening hash, then the established hash), and
 * printing the rest walks the whole established hash and every connection of the host: on a host
 * that serves thousands, lines armproof would only skip. A line in state 03 (SYN_RECV) does not
 * stop it: kernels before 4.4 printed a listener's pending requests right after it. Nor does a
 * line that does not parse.
 */
export const TCP_AWK = String.raw`function tcp(file,  x, n, a, i) {
  while ((getline x < file) > 0) {
    if (++i == 1) continue
    n = split(x, a)
    if (n <= 9) continue
    if (a[4] == "0A") { L[++nl] = x; LI[nl] = a[10]; li[a[10]] = 1; if (index(h, " " substr(a[2], length(a[2]) - 4) " ")) q[a[10]] = 1 }
    else if (a[4] != "03") break
  }
  close(file)
}`

/**
 * One awk for every survey's reads of the host (it reads /proc/stat and /proc/net/tcp{,6} itself,
 * with getline, so a kernel without tcp6 costs nothing more; stdin is `ls -l /proc/[0-9]*\/fd`):
 * the btime value and the clk_tck section (`c`, getconf's answer), then of the listening sockets (state 0A)
 * those kept: the holders (`pid inode`) of the processes found by name (`f`, their pids between
 * spaces) and of the sockets on a port asked (`h`, ports as /proc prints them between spaces), the
 * listen lines of those sockets and the owners lines, then `=` and the processes to detail (the
 * named ones and the port's holders, in numeric order, once each). One process where the survey
 * took ten awk, a sort and their shells; what it prints is what those printed.
 */
const SOCKETS_AWK = String.raw`${TCP_AWK}
BEGIN {
  split(f, a); for (j in a) fs[a[j]] = 1
  while ((getline x < "/proc/stat") > 0) { split(x, a); if (a[1] == "btime") print a[2] }
  close("/proc/stat")
  printf "%s", "${MARK}clk_tck\n"; if (c != "") print c
  tcp("/proc/net/tcp"); tcp("/proc/net/tcp6")
}
/^\/proc\/[0-9]+\/fd:$/ { split($0, a, "/"); p = a[3]; next }
p != "" {
  s = $NF
  if (substr(s, 1, 8) != "socket:[" || substr(s, length(s)) != "]") next
  i = substr(s, 9, length(s) - 9)
  if ((i in li) && ((p in fs) || (i in q))) { K[++nk] = p " " i; ki[i] = 1; if (i in q) H[p] = 1 }
}
END {
  printf "%s", "${MARK}listen\n"
  for (j = 1; j <= nl; j++) if ((LI[j] in q) || (LI[j] in ki)) print L[j]
  printf "%s", "${MARK}owners\n"
  for (j = 1; j <= nk; j++) print K[j]
  for (x in fs) if (x != "") H[x] = 1
  n = 0; for (x in H) { for (j = n; j > 0 && P[j] + 0 > x + 0; j--) P[j + 1] = P[j]; P[j + 1] = x; n++ }
  printf "="; for (j = 1; j <= n; j++) printf " %s", P[j]
}`

/**
 * Every survey's reads up to the processes to detail: prints the btime, clk_tck, listen and owners
 * sections (see SOCKETS_AWK) and leaves the pids to detail in P. `pidof` is the line(s) that set
 * the pids found by name, `named` their shell words (`$F`), `hexes` the ports asked as /proc prints them.
 */
export function socketReads(pidof: string, named: string, hexes: readonly string[]): string[] {
  return [
    // The first line says what the script is (the btime mark), before anything is read.
    `echo '${MARK}btime'`,
    pidof,
    `S=$(ls -l /proc/[0-9]*/fd 2>/dev/null | awk -v f=" ${named} " -v h=${quote(` ${hexes.map((x) => `${x} `).join('')}`)} -v c="$(getconf CLK_TCK 2>/dev/null)" '${SOCKETS_AWK}')`,
    // The awk ends with `=` and the pids; without it (no awk at all), nothing is detailed.
    `case $S in *=*) P=\${S##*=}; S=\${S%=*} ;; *) P= ;; esac`,
    `printf '%s' "$S"`,
  ]
}

export function surveyScript(processName: string, port: number | null): string {
  const hex = portHex(port)
  return [
    ...socketReads(namedLine('F', processName, quote), '$F', hex === '' ? [] : [hex]),
    `echo '${MARK}pidof'; echo $F`,
    PROC_LOOP,
  ].join('\n')
}

/** The stat line and command line of `pids` (validated digits only). */
export function detailsScript(pids: readonly string[]): string {
  const safe = pids.filter((p) => /^\d+$/.test(p))
  return [`P=${quote(safe.join(' '))}`, PROC_LOOP].join('\n')
}

export function readProcs(parts: ReturnType<typeof sections>): Map<string, ProcRead> {
  const procs = new Map<string, ProcRead>()
  for (const s of parts) {
    if (!/^\d+$/.test(s.arg) || (s.name !== 'stat' && s.name !== 'cmdline')) continue
    const p = procs.get(s.arg) ?? { stat: undefined, argv: [] }
    if (s.name === 'stat') p.stat = parseStat(s.text.split('\n')[0] ?? '')
    // The loop adds one newline after the command line, which itself ends in NUL.
    else p.argv = parseCmdline(s.text.endsWith('\n') ? s.text.slice(0, -1) : s.text)
    procs.set(s.arg, p)
  }
  return procs
}

/** A survey already read, handed with its result (a target's part of a shared survey, ./survey-many.ts): not read again from its text. */
export const readSurveys = new WeakMap<HostResult, Survey>()

/** The survey a host read gave: as read already where it was (`readSurveys`), else from its text. */
export function surveyOf(result: HostResult): Survey {
  return readSurveys.get(result) ?? parseSurvey(result.stdout)
}

/** The pids of a `pidof` section, each once, in its order. */
export function pidsOf(text: string): string[] {
  return [...new Set(text.split(/\s+/).filter((p) => /^\d+$/.test(p)))]
}

export function parseSurvey(stdout: string): Survey {
  const parts = sections(stdout)
  const one = (name: string) => parts.find((s) => s.name === name)?.text ?? ''
  const num = (text: string) => (/^\d+$/.test(text.trim()) ? Number(text.trim()) : null)
  const clk = num(one('clk_tck'))
  return {
    btime: num(one('btime')),
    clkTck: clk !== null && clk > 0 ? clk : null,
    listeners: parseListeners(one('listen')),
    owners: parseOwners(one('owners')),
    named: pidsOf(one('pidof')),
    procs: readProcs(parts),
  }
}

export function parseDetails(stdout: string): Map<string, ProcRead> {
  return readProcs(sections(stdout))
}

/** What `podman inspect --format '{{.State.Pid}}' <svc>` (or docker's) said, and the stat lines of that container's process tree. */
export interface ContainerRead {
  /** The container's main pid; 0 when it exists but is not running; null when there is no such container (or no podman / docker). */
  pid: string | null
  /** podman's (docker's) own words when it found no container. */
  said: string
  stats: Map<string, ProcStat>
}

export function containerScript(svc: string, tool: 'podman' | 'docker' = 'podman'): string {
  // Only the container's own process tree is printed (its main pid, then its descendants, breadth first).
  const tree =
    'awk -v root="$c" \'{ line[$1] = $0; s = $0; sub(/.*\\) /, "", s); split(s, f, " "); kids[f[2]] = kids[f[2]] " " $1 } END { n = 1; q[1] = root; i = 1; while (i <= n) { p = q[i++]; if (p in seen) continue; seen[p] = 1; if (p in line) print line[p]; m = split(kids[p], k, " "); for (j = 1; j <= m; j++) q[++n] = k[j] } }\''
  return [
    // docker names images and containers alike: only a container is asked for (podman's words stay as recorded).
    `echo '${MARK}container'; c=$(${tool === 'docker' ? 'docker inspect --type=container' : 'podman inspect'} --format '{{.State.Pid}}' ${quote(svc)} 2>&1); r=$?; printf '%s\\n' "$c"; echo "${MARK}exit $r"`,
    `echo '${MARK}stats'`,
    `case "$c" in ''|*[!0-9]*|0) ;; *) cat /proc/[0-9]*/stat 2>/dev/null | ${tree} ;; esac`,
    'exit 0',
  ].join('\n')
}

export function parseContainer(stdout: string): ContainerRead {
  const parts = sections(stdout)
  const said = (parts.find((s) => s.name === 'container')?.text ?? '').trim()
  const exit = parts.find((s) => s.name === 'exit')?.arg
  const pid = exit === '0' && /^\d+$/.test(said) ? said : null
  return {
    pid,
    said: pid === null ? said.split('\n').slice(-2).join(' | ') : '',
    stats: parseStats(parts.find((s) => s.name === 'stats')?.text ?? ''),
  }
}
