// The lines an engine prints its resolved values in (the profile's log sources), read from its boot
// log: only the latest boot (from the last line matching the profile's `log.boot`), each line's
// prefix taken off by the profile's grammar (after a runtime's own: a timestamp of `logs -t`,
// journald's `host tag[pid]:`, a CRI `stdout F`), the source's marker matched at the message's
// start, and the rest read in its shape with a real parser (./pyrepr.ts for Python reprs). The
// latest line of each source that gives the knob's key is the one read. Pure.
import type { Engine, SourceSpec } from '../../profiles/types.ts'
import { pyAt, pyText, readPyCall, readPyDict, readPyKeywords, type Py } from './pyrepr.ts'

/** What one source says of the knob: its value, or why it says nothing. */
export interface SourceReading {
  source: SourceSpec
  /** The knob's key in that source (`max_num_seqs`, `total_slots`). */
  key: string
  /**
   * value: it gives one (`raw`, as str() prints it; null for None/null); no-key: its line or
   * answer has no such key; silent: the engine did not print or serve it (no line in the latest
   * boot, an optional endpoint not served); unreadable: it did, but it does not read in its shape.
   */
  state: 'value' | 'no-key' | 'silent' | 'unreadable'
  raw?: string | null
  /** The engine says it chose the value itself (`[auto]`, llama.cpp's `n_parallel is set to auto`). */
  auto?: boolean
  /** The line read (1-based in the log), as printed; or the endpoint's answer, cut. */
  text?: string
  line?: number
  /** An endpoint's URL asked (GET), or why it could not be read. */
  where?: string
  problem?: string
  /** An endpoint answered under an older build's path (SGLang's /get_server_info). */
  olderPath?: string
}

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g
/** Longer lines are never a resolved line (a hostile or binary log). vLLM's engine config line is a few KiB. */
const MAX_LINE = 64 * 1024
/** What a runtime puts before the engine's own line: `podman logs -t`'s timestamp, a CRI line's stream tag, journald's host and tag. */
const OUTER =
  /^(?:\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})\s+(?:(?:stdout|stderr) [FP] )?|[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \S+ [\w./-]+\[\d+\]: )/

/** The message of one log line under `engine`'s prefix grammar; undefined when it is not one of the engine's log records. */
export function messageOf(line: string, prefix: RegExp | null): string | undefined {
  const text = line.replace(ANSI, '')
  const outer = OUTER.exec(text)
  const inner = outer ? text.slice(outer[0].length) : text
  if (prefix === null) return inner.replace(/^\s+/, '')
  for (const candidate of outer ? [text, inner] : [text]) {
    const m = prefix.exec(candidate)
    if (m && m[0].length > 0) return candidate.slice(m[0].length)
  }
  // A grammar whose every part is optional (llama.cpp's, under --no-log-prefix) matches nothing at
  // all: the message is then what follows the runtime's own prefix.
  const bare = outer ? inner : text
  return prefix.exec(bare) ? bare : undefined
}

/** llama.cpp's `name = value` assignments in a message (`using n_parallel = 4 and kv_unified = true`). */
export function readAssignments(text: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const m of text.matchAll(/(?:^|[\s,(])([A-Za-z_]\w*)\s*=\s*([^\s,)]+)/g)) out.set(m[1]!, m[2]!)
  return out
}

const anchored = (re: string): RegExp => new RegExp(`^(?:${re})`)

/** The rest of a message after the source's marker, read in its shape: the knob's value, or why none. */
function readRest(source: SourceSpec, rest: string, key: string): Pick<SourceReading, 'state' | 'raw' | 'problem'> {
  if (source.shape === 'assignments') {
    const v = readAssignments(rest).get(key)
    return v === undefined ? { state: 'no-key' } : { state: 'value', raw: v }
  }
  const parsed: Py | undefined =
    source.shape === 'python-dict'
      ? readPyDict(rest)
      : source.shape === 'python-call'
        ? readPyCall(rest, source.call ?? '')
        : readPyKeywords(rest)
  if (!parsed)
    return {
      state: 'unreadable',
      problem: `does not read as ${source.shape === 'python-dict' ? 'a Python dict' : source.shape === 'python-call' ? `a ${source.call}(…) repr` : 'key=value pairs'}`,
    }
  const v = pyAt(parsed, key)
  if (v === undefined) return { state: 'no-key' }
  return { state: 'value', raw: v.t === 'none' ? null : pyText(v) }
}

/** The index of the line the latest boot starts at: the last whose message matches `boot`; -1 when none does (or the profile has no boot line). */
function latestBootLine(lines: readonly string[], engine: Engine, prefix: RegExp | null): number {
  if (engine.log.boot === null) return -1
  const boot = anchored(engine.log.boot)
  for (let i = lines.length - 1; i >= 0; i--) {
    const l = lines[i]!
    if (l.length > MAX_LINE) continue
    const m = messageOf(l, prefix)
    if (m !== undefined && boot.test(m)) return i
  }
  return -1
}

/** Where the latest boot starts (0 when no line marks one: every line is read). */
const latestBoot = (lines: readonly string[], engine: Engine, prefix: RegExp | null): number =>
  Math.max(0, latestBootLine(lines, engine, prefix))

/** What each of `sources` (log sources of the profile, with the knob's key in each) says in `ledger`, its latest boot. */
export function readLogSources(
  ledger: string,
  engine: Engine,
  sources: ReadonlyArray<{ source: SourceSpec; key: string }>,
): SourceReading[] {
  const lines = ledger.split(/\r?\n/)
  const prefix = engine.log.prefix === null ? null : anchored(engine.log.prefix)
  const from = latestBoot(lines, engine, prefix)
  const markers = sources.map(({ source }) => anchored(source.marker ?? ''))
  const found: Array<SourceReading | undefined> = sources.map(() => undefined)
  for (let i = from; i < lines.length; i++) {
    const line = lines[i]!
    if (line.length > MAX_LINE) continue
    const message = messageOf(line, prefix)
    if (message === undefined) continue
    for (const [j, { source, key }] of sources.entries()) {
      const m = markers[j]!.exec(message)
      if (!m) continue
      const rest = message.slice(m[0].length)
      const reading: SourceReading = {
        source,
        key,
        ...readRest(source, rest, key),
        ...(source.auto ? { auto: true } : {}),
        text: line.replace(ANSI, '').trim(),
        line: i + 1,
      }
      // A marker several lines share (llama.cpp's `llama_context: `): the latest line that gives the key is the one read.
      if (reading.state !== 'no-key' || found[j] === undefined || found[j]!.state === 'no-key') found[j] = reading
    }
  }
  return sources.map(({ source, key }, j) => found[j] ?? { source, key, state: 'silent' })
}

/** The time a runtime put before a line (`podman logs -t`, `docker logs -t`, a CRI log): epoch seconds; undefined when it has none. */
function outerTime(line: string): number | undefined {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2}))\s/.exec(line.replace(ANSI, ''))
  if (!m) return undefined
  const ms = Date.parse(m[1]!.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'))
  return Number.isFinite(ms) ? ms / 1000 : undefined
}

/** How much earlier than the pid's start (read from /proc, whole-second boot time) a boot line may be stamped and still be its. */
const BOOT_SLACK_S = 2

/**
 * Where the log stamps its lines with times and the latest boot's first line is stamped before the
 * pid argv read started, that boot is an earlier process's: this one's is not in the log (yet, or
 * the command reads another's). Said in words; undefined when it is this pid's, or nothing tells.
 */
export function bootBeforePid(ledger: string, engine: Engine, pid: string, pidStart: number | null): string | undefined {
  if (pidStart === null) return undefined
  const lines = ledger.split(/\r?\n/)
  const i = latestBootLine(lines, engine, engine.log.prefix === null ? null : anchored(engine.log.prefix))
  const at = i < 0 ? undefined : outerTime(lines[i]!)
  if (at === undefined || at >= pidStart - BOOT_SLACK_S) return undefined
  return `the log's latest boot began at ${new Date(at * 1000).toISOString()} (line ${i + 1}), before pid ${pid} started at ${new Date(pidStart * 1000).toISOString()}: it is an earlier process's boot, and this process's is not in the log`
}
