// The program an engine process runs, read from its own /proc, so that its --help is asked of
// that very build and never of whatever is first on PATH (`{engine}` in --help-cmd, the default
// under --runtime process): /proc/<pid>/exe, and for an interpreter running a script
// (./named.ts) that interpreter and the script from its command line. The interpreter is named
// as its command line names it where that path is the running binary (a venv's python3 finds
// the venv's packages only through its own path, never through /usr/bin/python3.11 it links to);
// a binary replaced on disk since the process started (readlink says `(deleted)`) is asked as
// /proc/<pid>/exe itself, which is still the running build.
import { quote } from '../config/shell.ts'
import type { HostClient, HostResult } from '../seams/host.ts'
import { isInterpreter } from './named.ts'
import { procRead, type RuntimeReach } from './runtime.ts'
import { MARK, sections } from './survey.ts'

/** What the engine process runs, and the words that start that program again. */
export interface EngineBinary {
  pid: string
  /** The program and, for an interpreter, its script: what `{engine}` stands for. */
  words: string[]
  /** /proc/<pid>/exe as readlink prints it, without ` (deleted)`. */
  exe: string
  /** The binary was replaced on disk since the process started: asked as /proc/<pid>/exe. */
  replaced: boolean
  /** The script the interpreter runs (absolute); null: the binary is the engine itself. */
  script: string | null
  /** One clause for messages: "/usr/bin/python3 running /opt/venv/bin/vllm, as pid 12 runs it (/proc/12/exe: …)". */
  said: string
}

export type BinaryRead =
  | { kind: 'read'; binary: EngineBinary; result: HostResult }
  | { kind: 'unread'; problem: string; result: HostResult }

const DELETED = ' (deleted)'
const isAbsolute = (p: string): boolean => p.startsWith('/')
const join = (dir: string, p: string): string => (isAbsolute(p) ? p : `${dir.replace(/\/+$/, '')}/${p.replace(/^\.\//, '')}`)

/** The read: /proc/<pid>/exe (its failure fails the script, so `--sudo auto` retries it), its cwd, and where argv[0] leads. */
export function binaryScript(pid: string, argv: readonly string[]): string {
  if (!/^\d+$/.test(pid)) throw new Error(`binaryScript: not a pid: ${JSON.stringify(pid)}`)
  const argv0 = argv[0] ?? ''
  // argv[0] with a slash is a path (relative ones to the process's cwd); without one it was found on a PATH armproof cannot see.
  const resolve = !argv0.includes('/')
    ? []
    : [
        `echo '${MARK}argv0'; ${isAbsolute(argv0) ? `readlink -f -- ${quote(argv0)}` : `(cd /proc/$P/cwd && readlink -f -- ${quote(argv0)})`} 2>/dev/null`,
      ]
  return [
    `P=${pid}`,
    `echo '${MARK}exe'; readlink /proc/$P/exe || r=1`,
    `echo '${MARK}cwd'; readlink /proc/$P/cwd 2>/dev/null`,
    ...resolve,
    `exit \${r:-0}`,
  ].join('\n')
}

/** What `binaryScript` printed, read against the command line it was made for. */
export function parseBinary(pid: string, argv: readonly string[], stdout: string): EngineBinary | string {
  const parts = sections(stdout)
  const one = (name: string): string => (parts.find((s) => s.name === name)?.text ?? '').split('\n')[0]!.trim()
  const link = one('exe')
  if (!isAbsolute(link)) return `readlink /proc/${pid}/exe printed ${link ? JSON.stringify(link) : 'nothing'}`
  const replaced = link.endsWith(DELETED)
  const exe = replaced ? link.slice(0, -DELETED.length) : link
  const cwd = one('cwd')
  const running = replaced ? `/proc/${pid}/exe` : exe
  const at = `as pid ${pid} runs it (/proc/${pid}/exe: ${link})`
  const scriptArg = argv[1]
  if (!isInterpreter(exe) || scriptArg === undefined || scriptArg === '' || scriptArg.startsWith('-'))
    return { pid, words: [running], exe, replaced, script: null, said: `${running}, ${at}` }
  if (!isAbsolute(scriptArg) && !isAbsolute(cwd))
    return `pid ${pid} runs the script ${scriptArg}, a relative path, and its working folder (/proc/${pid}/cwd) could not be read`
  const script = join(cwd, scriptArg)
  const argv0 = argv[0] ?? ''
  // The interpreter as the command line names it, where that path leads to the running binary.
  const named = argv0.includes('/') && !replaced && one('argv0') === exe ? join(cwd, argv0) : running
  return { pid, words: [named, script], exe, replaced, script, said: `${named} running ${script}, ${at}` }
}

/** Reads what the engine process `pid` (whose command line is `argv`) runs, where the lookup reads /proc. */
export async function readBinary(host: HostClient, q: RuntimeReach, pid: string, argv: readonly string[]): Promise<BinaryRead> {
  const result = await procRead(host, q, binaryScript(pid, argv))
  if (result.failure) return { kind: 'unread', problem: result.failure, result }
  const read = parseBinary(pid, argv, result.stdout)
  if (typeof read === 'string') return { kind: 'unread', problem: read, result }
  return { kind: 'read', binary: read, result }
}
