// The targets file of a fleet run (`pnpm verify --targets FILE`): YAML (JSON is YAML too) with
// `defaults:` and `targets:`, each entry's keys the long option names of `pnpm verify` without
// dashes. Read with YAML's failsafe schema: every scalar stays the text the operator wrote
// (`value: 0.10` is "0.10", never the number 0.1). Hostile files are refused, not obeyed: a size
// cap, an alias cap (no "billion laughs"), no tags, unique keys (one rule for every file a person
// hands armproof: ../schema/yaml-file.ts); every problem of every entry is collected at once.
// Nothing here contacts anything.
import * as yaml from 'yaml'
import { OPTIONS, type OptionSpec } from '../config/options.ts'
import { showValue } from '../config/shell.ts'
import { command } from '../config/invocation.ts'
import { parseYamlFile, readBounded as readBoundedFile } from '../schema/yaml-file.ts'

/** A targets file larger than this is not a targets file (a fleet of thousands fits in far less). */
export const MAX_TARGETS_FILE_BYTES = 1024 * 1024
/** More targets than this in one file is refused: shard the fleet over runners instead. */
export const MAX_TARGETS = 1000

/** Options that belong to the whole run (one report, one JUnit file, the fleet's own knobs): never per target. */
export const RUN_LEVEL = new Set(['targets', 'concurrency', 'shard', 'run-id', 'report', 'junit', 'summary', 'mode', 'json'])

/** One entry as the file gives it: option name → its text (`true`/`false` for a switch). */
export type Entry = ReadonlyMap<string, string>

/** Where an entry and each of its keys sit in the file (1-based lines), for `file:line` in every problem. */
export interface EntryLines {
  at: number
  keys: ReadonlyMap<string, number>
}

export interface TargetsFile {
  defaults: Entry
  targets: Entry[]
  lines: { defaults: EntryLines; targets: EntryLines[] }
}

export interface FileProblem {
  /** `defaults`, `targets[3]`, or the file. */
  where: string
  message: string
  /** The line of the file it is about (1-based), when one is. */
  line?: number
  /** The key it is about, as the file spells it (`base-url`, `defaults`, `targets`), when one is. */
  key?: string
  /** An entry's key it is about (so a loader's "is required" for a key the entry misspelt is not said twice). */
  meant?: string
}

/** The targets file's text, bounded (../schema/yaml-file.ts); a problem when it cannot be read whole. */
export function readBounded(path: string): { text: string } | { problem: string } {
  return readBoundedFile(path, MAX_TARGETS_FILE_BYTES, {
    directory: 'give the targets file',
    tooLarge: 'a targets file lists option values, shard a larger fleet over several files',
  })
}

const KNOWN = new Map<string, OptionSpec>(OPTIONS.map((o) => [o.flag, o]))

/** Closest known key by edit distance (≤ 2), for "did you mean". */
function nearest(key: string): string | undefined {
  let best: { name: string; d: number } | undefined
  for (const name of KNOWN.keys()) {
    if (RUN_LEVEL.has(name)) continue
    const d = distance(key, name)
    if (d <= 2 && (!best || d < best.d)) best = { name, d }
  }
  return best?.name
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const here = row[j]!
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1))
      prev = here
    }
  }
  return row[b.length]!
}

/** One mapping of the file (defaults or a target) checked key by key. */
function entryOf(value: unknown, where: string, lines: EntryLines, problems: FileProblem[]): Map<string, string> {
  const out = new Map<string, string>()
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    problems.push({
      where,
      line: lines.at,
      message: `${where} must be a mapping of option names to values, e.g. { svc: radiance-7, base-url: "http://gpu-7:8000" }`,
    })
    return out
  }
  for (const [key, raw] of Object.entries(value as Record<string, unknown>)) {
    const say = (message: string, meant?: string) =>
      problems.push({ where, line: lines.keys.get(key) ?? lines.at, key, message: `${where}: ${message}`, ...(meant ? { meant } : {}) })
    if (key === 'api-key' || /^(api[-_]?key|token|bearer|password|secret)$/i.test(key)) {
      // The value is never shown: it is most likely the key itself.
      say(
        `${showValue(key)}: an API key never sits in the targets file (it is read by CI logs, diffs and backups); give api-key-file: PATH, or VERIFY_API_KEY in env or .env`,
      )
      continue
    }
    if (key.startsWith('-')) {
      say(`${showValue(key)}: keys are option names without dashes, e.g. base-url`)
      continue
    }
    const spec = KNOWN.get(key)
    if (!spec) {
      const hint = nearest(key)
      say(
        `unknown key ${showValue(key)}${hint ? `; did you mean ${hint}?` : ''} (keys are the long option names of ${command('verify')} --help, without dashes)`,
        hint,
      )
      continue
    }
    if (RUN_LEVEL.has(key)) {
      say(`${key} is for the whole run, not one target: pass --${key} on the command line`)
      continue
    }
    if (typeof raw !== 'string') {
      say(`${key} must be a single value, not a ${Array.isArray(raw) ? 'list' : 'mapping'}`)
      continue
    }
    if (spec.kind === 'boolean' && raw !== 'true' && raw !== 'false') {
      say(`${key} is a switch: true or false, not ${showValue(raw, 40)}`)
      continue
    }
    out.set(key, raw)
  }
  return out
}

const NO_LINES: EntryLines = { at: 1, keys: new Map() }

/** The lines of a mapping node and of each of its keys. */
function linesOf(node: unknown, lineAt: (offset: number) => number): EntryLines {
  const at = (n: unknown) => (yaml.isNode(n) && n.range ? lineAt(n.range[0]) : 1)
  const keys = new Map<string, number>()
  if (yaml.isMap(node)) for (const pair of node.items) if (yaml.isScalar(pair.key)) keys.set(String(pair.key.value), at(pair.key))
  return { at: at(node), keys }
}

/**
 * Parses the targets file's text. With a usable shape (a mapping with a targets: list) it gives
 * the entries (each bad key left out) with every problem found in them, each at its line, so the
 * caller goes on to check each target's values: one answer for the whole file. Otherwise only
 * the problems.
 */
export function parseTargetsFile(text: string): { file: TargetsFile; problems: FileProblem[] } | { problems: FileProblem[] } {
  const problems: FileProblem[] = []
  const read = parseYamlFile(text)
  if ('problems' in read)
    return {
      problems: read.problems.map((p) => ({ where: 'file', message: p.message, ...(p.line !== undefined ? { line: p.line } : {}) })),
    }
  const { data, doc, lineAt } = read
  const root = doc.contents
  const nodeOf = (key: string): unknown => (yaml.isMap(root) ? root.get(key, true) : undefined)
  if (data === null || data === undefined || typeof data !== 'object' || Array.isArray(data)) {
    return { problems: [{ where: 'file', message: 'the file must be a mapping with targets: (a list) and, optionally, defaults:' }] }
  }
  const top = data as Record<string, unknown>
  const topLines = linesOf(root, lineAt)
  for (const key of Object.keys(top)) {
    if (key !== 'defaults' && key !== 'targets')
      problems.push({
        where: 'file',
        line: topLines.keys.get(key) ?? 1,
        key,
        message: `unknown top-level key ${showValue(key)}; a targets file has defaults: and targets:`,
      })
  }
  const defaultsLines = top.defaults === undefined ? NO_LINES : linesOf(nodeOf('defaults'), lineAt)
  const defaults =
    top.defaults === undefined || top.defaults === ''
      ? new Map<string, string>()
      : entryOf(top.defaults, 'defaults', defaultsLines, problems)
  const targets: Entry[] = []
  const targetLines: EntryLines[] = []
  if (!Array.isArray(top.targets) || top.targets.length === 0) {
    problems.push({
      where: 'file',
      line: topLines.keys.get('targets') ?? 1,
      key: 'targets',
      message: 'targets: must be a non-empty list, one mapping per target',
    })
    return { problems }
  }
  if (top.targets.length > MAX_TARGETS) {
    problems.push({
      where: 'file',
      line: topLines.keys.get('targets') ?? 1,
      key: 'targets',
      message: `targets: lists ${top.targets.length} targets; at most ${MAX_TARGETS} per file`,
    })
    return { problems }
  }
  const seq = nodeOf('targets')
  const items = yaml.isSeq(seq) ? seq.items : []
  for (const [i, t] of top.targets.entries()) {
    const lines = linesOf(items[i], lineAt)
    targetLines.push(lines)
    targets.push(entryOf(t, `targets[${i}]`, lines, problems))
  }
  return { file: { defaults, targets, lines: { defaults: defaultsLines, targets: targetLines } }, problems }
}

/**
 * The argv a target is validated with: `defaults:` first, then the command line, then the entry,
 * so the later wins (the loader takes an option's last value). `false` for a switch drops it
 * from the layers before.
 */
export function targetArgv(defaults: Entry, cli: readonly string[], entry: Entry): string[] {
  const layer = (e: Entry): string[] =>
    [...e].flatMap(([k, v]) => (KNOWN.get(k)?.kind === 'boolean' ? (v === 'true' ? [`--${k}`] : []) : [`--${k}=${v}`]))
  const offByEntry = new Set([...entry].filter(([k, v]) => KNOWN.get(k)?.kind === 'boolean' && v === 'false').map(([k]) => `--${k}`))
  return [...layer(defaults).filter((a) => !offByEntry.has(a)), ...cli.filter((a) => !offByEntry.has(a)), ...layer(entry)]
}
