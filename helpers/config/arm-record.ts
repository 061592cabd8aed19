// What the one-flag law compares (step `one-flag`, helpers/steps/one-flag/): an engine as it ran
// after a deploy: its whole resolved command line, its binary or image, its served model. One
// record per green run, carried in the report (the step's evidence) and beside the run's entry on
// the vault page (a line a human reads, its digest in the entry's marker), so the next arm of the
// service is compared with it. Pure: the reads are the step's, the page is writeback's.
import { createHash } from 'node:crypto'

export interface ArmRecord {
  /**
   * Every flag as the engine's parser resolves it (name → value; '' for a switch given bare), the
   * env twins the profile names as `$NAME`. A secret-looking flag's value is `[redacted]`: never
   * recorded, so never compared either.
   */
  flags: Record<string, string>
  /** The command line's positional words after the program's own (argv[0]), in order. */
  args: string[]
  /** /proc/<pid>/exe as the runtime shows it: its path, size in bytes and mtime (seconds since the epoch). */
  binary: { path: string; size: number; mtime: number } | null
  /** The image the runtime reports for the engine's container (its id, `sha256:…`); null for a bare process. */
  image: string | null
  /** The served model id the probes resolved. */
  model: string | null
}

/** What replaces a secret-looking flag's value. */
export const REDACTED = '[redacted]'

/** The record as canonical JSON (flags in name order): what its digest is of. */
function canonical(r: ArmRecord): string {
  const flags = Object.keys(r.flags)
    .sort()
    .map((k) => [k, r.flags[k]!])
  return JSON.stringify({ flags, args: r.args, binary: r.binary, image: r.image, model: r.model })
}

/** 16 hex digits of the sha256 of the record: the vault entry's marker carries it. */
export function recordDigest(r: ArmRecord): string {
  return createHash('sha256').update(canonical(r)).digest('hex').slice(0, 16)
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)
const str = (v: unknown): v is string => typeof v === 'string' && v.length <= 4096

/** An untrusted value (a report's evidence) as a record, or null where it is none. */
export function asArmRecord(v: unknown): ArmRecord | null {
  if (!isObject(v) || !isObject(v.flags) || !Array.isArray(v.args)) return null
  const flags: Record<string, string> = {}
  for (const [k, x] of Object.entries(v.flags)) {
    if (!FLAG_NAME.test(k) || !str(x)) return null
    flags[k] = x
  }
  if (!v.args.every(str)) return null
  const b = v.binary
  const binary =
    b === null
      ? null
      : isObject(b) && str(b.path) && Number.isSafeInteger(b.size) && Number.isSafeInteger(b.mtime)
        ? { path: b.path, size: b.size as number, mtime: b.mtime as number }
        : undefined
  if (binary === undefined) return null
  if (!(v.image === null || str(v.image)) || !(v.model === null || str(v.model))) return null
  return { flags, args: v.args as string[], binary, image: v.image as string | null, model: v.model as string | null }
}

// --- the page's line: `  engine: model `x` · image `sha256:…` · binary `/usr/bin/x` 123 bytes, modified <iso> · command line `a --b=1 $C=2``

/** A flag's name as a record keeps it: `-x`, `--x-y`, `$ENV_NAME`. */
const FLAG_NAME = /^(?:--?[A-Za-z0-9][A-Za-z0-9_.-]*|\$[A-Za-z_][A-Za-z0-9_]*)$/
const PLAIN = /^[A-Za-z0-9_.,:/@+%=^[\]-]+$/

/** A word of the line: plain as is, anything else as a JSON string with every character outside printable ASCII (and the backtick, `<`, `>`, `&`) escaped. */
function word(w: string): string {
  if (PLAIN.test(w) && !w.startsWith('-')) return w
  return JSON.stringify(w).replace(/[^\x20-\x7e]|[`<>&]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

const isoSeconds = (s: number): string => new Date(s * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z')

/** The record as the text after `engine: ` on the vault page (one line, no backtick inside a code span). */
export function recordText(r: ArmRecord): string {
  const flags = Object.keys(r.flags)
    .sort()
    .map((k) => (r.flags[k] === '' ? k : `${k}=${word(r.flags[k]!)}`))
  const line = [...r.args.map(word), ...flags].join(' ')
  return [
    `model ${r.model === null ? 'unread' : `\`${word(r.model)}\``}`,
    `image ${r.image === null ? 'none' : `\`${word(r.image)}\``}`,
    `binary ${r.binary === null ? 'unread' : `\`${word(r.binary.path)}\` ${r.binary.size} bytes, modified ${isoSeconds(r.binary.mtime)}`}`,
    `command line \`${line}\``,
  ].join(' · ')
}

/** The words of a code span as `word` wrote them, or null where it is not such a list. */
function words(text: string): string[] | null {
  const out: string[] = []
  let i = 0
  while (i < text.length) {
    if (text[i] === ' ') {
      i++
      continue
    }
    const eq = text.indexOf('="', i)
    const space = text.indexOf(' ', i)
    const quoteAt = text[i] === '"' ? i : eq >= 0 && (space < 0 || eq < space) ? eq + 1 : -1
    if (quoteAt < 0) {
      out.push(text.slice(i, space < 0 ? text.length : space))
      i = space < 0 ? text.length : space
      continue
    }
    // A JSON string: up to its closing quote (a backslash escapes the next character).
    let j = quoteAt + 1
    while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1
    if (j >= text.length) return null
    let value: string
    try {
      value = JSON.parse(text.slice(quoteAt, j + 1)) as string
    } catch {
      return null
    }
    out.push(quoteAt === i ? `\u0000${value}` : `${text.slice(i, quoteAt)}${value}`)
    i = j + 1
    if (i < text.length && text[i] !== ' ') return null
  }
  return out
}

const unword = (w: string): string => (w.startsWith('\u0000') ? w.slice(1) : w)

/** The record back from the text `recordText` wrote, or why it is not one. */
export function parseRecordText(text: string): ArmRecord | { problem: string } {
  const m =
    /^model (?:`([^`]*)`|unread) · image (?:`([^`]*)`|none) · binary (?:`([^`]*)` (\d+) bytes, modified (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)|unread) · command line `([^`]*)`$/.exec(
      text,
    )
  if (!m) return { problem: 'is not the line armproof writes (model · image · binary · command line)' }
  const one = (t: string | undefined): string | null | undefined => {
    if (t === undefined) return null
    const w = words(t)
    return w && w.length === 1 ? unword(w[0]!) : undefined
  }
  const model = one(m[1])
  const image = one(m[2])
  const path = one(m[3])
  if (model === undefined || image === undefined || path === undefined) return { problem: 'holds a value that does not read back' }
  const line = words(m[6]!)
  if (line === null) return { problem: 'its command line does not read back' }
  const args: string[] = []
  const flags: Record<string, string> = {}
  for (const w of line) {
    if (w.startsWith('\u0000') || !/^[-$]/.test(w)) {
      args.push(unword(w))
      continue
    }
    const eq = w.indexOf('=')
    const name = eq < 0 ? w : w.slice(0, eq)
    if (!FLAG_NAME.test(name)) return { problem: `its command line names ${JSON.stringify(name)}, not a flag` }
    flags[name] = eq < 0 ? '' : w.slice(eq + 1)
  }
  const binary = path === null ? null : { path, size: Number(m[4]), mtime: Date.parse(m[5]!) / 1000 }
  return { flags, args, binary, image, model }
}

// --- the comparison

/** One difference between two records: what differs, and its value in each. */
export interface RecordChange {
  what: string
  before: string
  now: string
}

const binaryText = (b: ArmRecord['binary']): string =>
  b === null ? 'unread' : `${b.path} (${b.size} bytes, modified ${isoSeconds(b.mtime)})`
const flagText = (name: string, v: string | undefined): string => (v === undefined ? 'absent' : v === '' ? name : `${name}=${v}`)

/**
 * Everything that differs between the baseline's record and this run's but the knob: `knob` names
 * its flag's every spelling (and negation) and its env twin (`$NAME`). A secret's value is never
 * in a record, so a changed key is not among the changes.
 */
export function recordChanges(before: ArmRecord, now: ArmRecord, knob: readonly string[]): RecordChange[] {
  const out: RecordChange[] = []
  if (before.model !== now.model) out.push({ what: 'served model', before: before.model ?? 'unread', now: now.model ?? 'unread' })
  if (before.image !== now.image)
    out.push({ what: 'image', before: before.image ?? 'none (not a container)', now: now.image ?? 'none (not a container)' })
  if (binaryText(before.binary) !== binaryText(now.binary))
    out.push({ what: 'binary', before: binaryText(before.binary), now: binaryText(now.binary) })
  if (before.args.join('\u0000') !== now.args.join('\u0000'))
    out.push({ what: 'positional arguments', before: before.args.join(' ') || 'none', now: now.args.join(' ') || 'none' })
  const names = [...new Set([...Object.keys(before.flags), ...Object.keys(now.flags)])].sort()
  for (const name of names) {
    if (knob.includes(name)) continue
    const a = before.flags[name]
    const b = now.flags[name]
    if (a !== b) out.push({ what: name, before: flagText(name, a), now: flagText(name, b) })
  }
  return out
}
