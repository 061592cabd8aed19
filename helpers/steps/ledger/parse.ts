// The boot ledger: the engine prints what it resolved for each flag, one line per flag, behind a
// log prefix (timestamp, level, source location). Only such a line counts: its message begins
// with the flag and its resolved value and names no other flag. A serve script's echo of its
// command line (`+ exec radiance serve … --flag V`) names the flag with the value *asked for*,
// not the one resolved, and is never taken for a resolved line. Pure.

export interface ResolvedLine {
  /** 1-based line number in the ledger output. */
  line: number
  /** The line as printed, without ANSI colour codes. */
  text: string
  value: string
  /** The value was chosen by the engine (`[auto]`). */
  auto: boolean
  /** What bound the value (`bound by X`); null for `bound by None` or when not said. */
  boundBy: string | null
}

/** Longer lines are never resolved lines. */
const MAX_LINE = 16 * 1024

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g

/**
 * One piece of a log prefix, as loggers, podman, journald and Kubernetes print them. A prefix is
 * any run of these; the message starts where the run ends.
 */
const PREFIX_PART = new RegExp(
  [
    // 2026-11-30T02:11:03.120Z, 2026-11-30 02:11:03,120 +00:00, 2026/11/30 02:11:03
    String.raw`\d{4}[-/]\d{2}[-/]\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?)?(?:Z|[+-]\d{2}:?\d{2}(?: [A-Z]{2,5})?)?`,
    // 11-30 (vLLM's month-day), 02:11:03.120
    String.raw`\d{2}-\d{2}`,
    String.raw`\d{2}:\d{2}:\d{2}(?:[.,]\d+)?`,
    // Nov 30 (syslog, journald)
    String.raw`(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) {1,2}\d{1,2}`,
    // levels, alone or as Python's LEVEL:logger: / LEVEL:
    String.raw`(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|CRITICAL|FATAL|[DIWEF])(?::[\w.]+)?:?`,
    // a dotted logger name: radiance.ledger (a bare word without a dot is prose, not a prefix)
    String.raw`[A-Za-z_]\w*(?:\.\w+)+:?`,
    // [ledger.py:41], (APIServer pid=12), <6>
    String.raw`\[[^\]\n]*\]:?`,
    String.raw`\([^)\n]*\):?`,
    String.raw`<\d{1,3}>`,
    // journald / syslog: host tag[pid]:  or  tag[pid]:
    String.raw`(?:[\w.-]+ )?[\w./-]+\[\d+\]:`,
    // Kubernetes CRI: stdout F
    String.raw`(?:stdout|stderr) [FP]`,
    // separators
    String.raw`[-|:>]`,
  ]
    .map((p) => `(?:${p})`)
    .join('|'),
)
// Parts are separated by whitespace, or follow each other directly after a closing `:` `]` `)` `>`.
const PREFIX = new RegExp(`^\\s*(?:(?:${PREFIX_PART.source})(?:\\s+|(?<=[:\\])>])))*`)
/** A token that names a flag: `--word`, at the start or after whitespace (or `[`/`(` of an echo). */
const FLAG_TOKEN = /(?:^|[\s[(,])--[A-Za-z][\w-]*/g

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** The message of a log line: the line without its log prefix (and colour codes). */
export function logMessage(line: string): string {
  const text = line.replace(ANSI, '')
  const m = PREFIX.exec(text)
  return text.slice(m ? m[0].length : 0)
}

/**
 * Every resolved line for `flag`, oldest first. `podman logs` keeps the logs of earlier boots of
 * the same container, so the last line is the running engine's.
 */
export function findResolved(ledger: string, flag: string): ResolvedLine[] {
  const head = new RegExp(`^${escapeRegExp(flag)}(?:=|\\s+)("[^"]*"|'[^']*'|[^\\s,;]+)(\\s+\\[auto\\])?(?=$|[\\s,;])`)
  const found: ResolvedLine[] = []
  const lines = ledger.split(/\r?\n/)
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!
    // A resolved line is short; a huge line (hostile or binary output) is not read through the prefix grammar.
    if (raw.length > MAX_LINE || !raw.includes(flag)) continue
    const text = raw.replace(ANSI, '')
    const message = logMessage(text)
    const m = head.exec(message)
    if (!m) continue
    // A line naming several flags is a command line (or a help text), not what one flag resolved to.
    const rest = message.slice(m[0].length)
    if (rest.match(FLAG_TOKEN)) continue
    const bound = /\bbound by\s+([^\s,;]+)/.exec(rest)
    const boundBy = bound ? bound[1]!.replace(/[.)]+$/, '') : null
    found.push({
      line: i + 1,
      text: text.trim(),
      value: m[1]!.replace(/^["']|["']$/g, ''),
      auto: m[2] !== undefined,
      boundBy: boundBy === null || boundBy === 'None' || boundBy === 'none' || boundBy === 'null' ? null : boundBy,
    })
  }
  return found
}

/** Lines that name `flag` but are not resolved lines (e.g. a command-line echo), for the message when none resolved it. */
export function unresolvedMentions(ledger: string, flag: string, max = 3): string[] {
  const re = new RegExp(`(?:^|[\\s\\[(,=])${escapeRegExp(flag)}(?=$|[\\s=,;\\])])`)
  const out: string[] = []
  for (const raw of ledger.split(/\r?\n/)) {
    if (!raw.includes(flag)) continue
    const text = raw.replace(ANSI, '').trim()
    if (re.test(text)) out.push(text)
    if (out.length >= max) break
  }
  return out
}
