// A service's vault page, as writeback finds it and verify reads it back: the Markdown page whose
// front matter says `service: <svc>`, else a page named `<svc>.md` that claims no other service
// (hidden entries, node_modules and symlinks skipped); and the armproof entries on it, by their
// marker (`<!-- armproof:<svc>:<knob>:<finishedAt>[:<endpoint>][:record=<digest>] -->`). The
// rules once, for helpers/writeback (which writes the page) and helpers/config/baseline.ts (which
// reads the newest entry's record for the one-flag law).
import { readdirSync, readFileSync, type Dirent } from 'node:fs'
import { join, sep } from 'node:path'

const MARKDOWN = /\.(md|markdown)$/i

/** The YAML front matter lines (between a first-line `---` and the next `---`), or null. */
export function frontMatter(text: string): string[] | null {
  const lines = (text.startsWith('\uFEFF') ? text.slice(1) : text).split(/\r?\n/)
  if (lines[0]?.trimEnd() !== '---') return null
  for (let i = 1; i < lines.length; i++) {
    const l = lines[i]!.trimEnd()
    if (l === '---' || l === '...') return lines.slice(1, i)
  }
  return null
}

/** The top-level `service:` value of the front matter (quotes and a trailing comment removed), or null. */
export function declaredService(text: string): string | null {
  for (const line of frontMatter(text) ?? []) {
    const m = /^service[ \t]*:[ \t]*(.*?)[ \t]*$/.exec(line)
    if (!m) continue
    const v = m[1]!
    const quoted = /^"([^"]*)"(?:[ \t]+#.*)?$/.exec(v) ?? /^'([^']*)'(?:[ \t]+#.*)?$/.exec(v)
    return quoted ? quoted[1]! : v.replace(/[ \t]+#.*$/, '')
  }
  return null
}

/** Markdown files under `root`, sorted; hidden entries, `node_modules` and symlinks are skipped. */
export function markdownFiles(root: string): string[] {
  const out: string[] = []
  const walk = (dir: string): void => {
    let entries: Dirent[]
    try {
      entries = readdirSync(dir, { withFileTypes: true })
    } catch {
      return
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const e of entries) {
      if (e.name.startsWith('.') || e.name === 'node_modules') continue
      const p = join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.isFile() && MARKDOWN.test(e.name)) out.push(p)
    }
  }
  walk(root)
  return out
}

/** The pages that may be the service's: those claiming it in front matter, those named `<svc>.md` claiming none, and how many were looked at. */
export function servicePages(vault: string, svc: string): { claimed: string[]; named: string[]; files: number } {
  const files = markdownFiles(vault)
  const claimed: string[] = []
  const named: string[] = []
  for (const f of files) {
    let text: string
    try {
      text = readFileSync(f, 'utf8')
    } catch {
      continue
    }
    const declared = declaredService(text)
    if (declared === svc) claimed.push(f)
    else if (declared === null && f.slice(f.lastIndexOf(sep) + 1) === `${svc}.md`) named.push(f)
  }
  return { claimed, named, files: files.length }
}

/** One part of an entry's marker: safe inside an HTML comment and stable across writes. */
export const markerPart = (value: string): string => value.replace(/[^A-Za-z0-9_.:+-]/g, '_').replace(/-{2,}/g, '-')

/** An armproof entry's marker, read back. */
export interface EntryMarker {
  svc: string
  knob: string
  finishedAt: string
  /** The endpoint part (`markerPart` of the base URL), when the entry names one. */
  endpoint: string | null
  /** The digest of the one-flag record written beside the entry, when it has one. */
  record: string | null
}

const MARKER =
  /<!-- armproof:([A-Za-z0-9_.+-]+):([A-Za-z0-9_.+-]+):(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d))(?::([A-Za-z0-9_.:+-]*?))??(?::record=([0-9a-f]{16}))? -->/

/** The marker on this line, if it holds one. */
export function readMarker(line: string): EntryMarker | null {
  const m = MARKER.exec(line)
  if (!m) return null
  return { svc: m[1]!, knob: m[2]!, finishedAt: m[3]!, endpoint: m[4] ?? null, record: m[5] ?? null }
}

/** One armproof entry of a page: its marker, and the lines indented under it (its rollback, its engine record, an effect). */
export interface PageEntry {
  marker: EntryMarker
  /** 1-based line of the entry's first line. */
  line: number
  under: string[]
}

/** Every armproof entry of the page, in page order. */
export function pageEntries(text: string): PageEntry[] {
  const lines = text.split(/\r?\n/)
  const out: PageEntry[] = []
  for (let i = 0; i < lines.length; i++) {
    const marker = /^ {0,3}[-*+] /.test(lines[i]!) ? readMarker(lines[i]!) : null
    if (!marker) continue
    const under: string[] = []
    for (let j = i + 1; j < lines.length && /^( {2,}|\t)\S/.test(lines[j]!); j++) under.push(lines[j]!.trim())
    out.push({ marker, line: i + 1, under })
  }
  return out
}

/** The prefix of an entry's engine line (the one-flag record, helpers/config/arm-record.ts `recordText`). */
export const ENGINE_LINE = 'engine: '
