// Inserts one entry into a page's `## Knob log` section by offset, so every byte outside the
// entry stays as it was: the page's own line ending, its trailing-newline state, mixed endings.

interface Line {
  text: string
  /** Offset just past the line's ending (equals the text end for a last line without one). */
  next: number
  hasEol: boolean
}

function splitLines(text: string): Line[] {
  const lines: Line[] = []
  let start = 0
  while (start < text.length) {
    const nl = text.indexOf('\n', start)
    if (nl === -1) {
      lines.push({ text: text.slice(start), next: text.length, hasEol: false })
      break
    }
    const end = nl > start && text[nl - 1] === '\r' ? nl - 1 : nl
    lines.push({ text: text.slice(start, end), next: nl + 1, hasEol: true })
    start = nl + 1
  }
  return lines
}

/** The page's line ending: CRLF when most of its lines end so, else LF. */
export function lineEnding(text: string): '\r\n' | '\n' {
  const crlf = text.match(/\r\n/g)?.length ?? 0
  const lf = (text.match(/\n/g)?.length ?? 0) - crlf
  return crlf > lf ? '\r\n' : '\n'
}

const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/
const LIST_ITEM = /^ {0,3}(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)/
const FENCE = /^ {0,3}(`{3,}|~{3,})/
const isBlank = (s: string) => s.trim() === ''

export const KNOB_LOG_HEADING = '## Knob log'

/** The page's shape makes any insertion dishonest (e.g. a code fence that never closes); nothing is written. */
export class PageShapeError extends Error {
  readonly line: number
  constructor(line: number, message: string) {
    super(message)
    this.line = line
  }
}

/** Per line: its heading level (0 for none), and whether it is a list item, outside code fences and front matter. */
function classify(lines: readonly Line[]): { level: number; item: boolean }[] & { openFence?: number } {
  const out = lines.map(() => ({ level: 0, item: false }))
  let i = 0
  if (lines[0]?.text.replace(/^\uFEFF/, '').trimEnd() === '---') {
    const close = lines.findIndex((l, j) => j > 0 && (l.text.trimEnd() === '---' || l.text.trimEnd() === '...'))
    if (close > 0) i = close + 1
  }
  let fence: string | null = null
  let fenceAt = -1
  for (; i < lines.length; i++) {
    const text = lines[i]!.text
    const f = FENCE.exec(text)
    if (fence !== null) {
      if (f && f[1]![0] === fence[0] && f[1]!.length >= fence.length && text.trim() === f[1]) fence = null
      continue
    }
    if (f) {
      fence = f[1]!
      fenceAt = i
      continue
    }
    const h = HEADING.exec(text)
    if (h) out[i]!.level = h[1]!.length
    else out[i]!.item = LIST_ITEM.test(text)
  }
  return fence !== null ? Object.assign(out, { openFence: fenceAt }) : out
}

/** Columns of leading white space (a tab to the next multiple of 4). */
function indentOf(text: string): number {
  let n = 0
  for (const c of text) {
    if (c === ' ') n++
    else if (c === '\t') n += 4 - (n % 4)
    else break
  }
  return n
}

/** Where a list item's content starts (the column its continuation paragraphs are indented to). */
function contentIndent(text: string): number {
  const m = /^( {0,3}(?:[-*+]|\d{1,9}[.)]))([ \t]{1,4})?/.exec(text)
  if (!m) return 2
  return indentOf(m[1]!) + (m[2] ? Math.max(1, indentOf(`${m[1]}${m[2]}`) - indentOf(m[1]!)) : 1)
}

const isKnobLog = (text: string) => {
  const h = HEADING.exec(text)
  return h !== null && h[1] === '##' && (h[2] ?? '').trim().toLowerCase() === 'knob log'
}

/** The page with the entry added under `## Knob log` (after its last list item), or with the heading appended. */
export function insertEntry(page: string, entry: readonly string[]): string {
  const eol = lineEnding(page)
  const lines = splitLines(page)
  const kinds = classify(lines)
  const body = entry.join(eol)
  const h = lines.findIndex((l, i) => kinds[i]!.level === 2 && isKnobLog(l.text))
  if (kinds.openFence !== undefined) {
    // A fence that never closes runs to the end of the page: whatever is written after it is code.
    let sectionEnd = lines.length
    if (h !== -1) for (let i = h + 1; i < lines.length; i++) if (kinds[i]!.level > 0) { sectionEnd = i; break }
    if (h === -1 || kinds.openFence < sectionEnd) {
      throw new PageShapeError(kinds.openFence + 1, `has a code fence opened at line ${kinds.openFence + 1} that never closes; an entry written after it would show as code, not as a Knob log entry`)
    }
  }
  if (h === -1) {
    if (page === '') return `${KNOB_LOG_HEADING}${eol}${eol}${body}${eol}`
    const last = lines[lines.length - 1]!
    if (!last.hasEol) return `${page}${eol}${eol}${KNOB_LOG_HEADING}${eol}${eol}${body}`
    const gap = isBlank(last.text) ? '' : eol
    return `${page}${gap}${KNOB_LOG_HEADING}${eol}${eol}${body}${eol}`
  }
  let end = lines.length
  for (let i = h + 1; i < lines.length; i++) {
    if (kinds[i]!.level > 0) {
      end = i
      break
    }
  }
  let lastItem = -1
  for (let i = h + 1; i < end; i++) if (kinds[i]!.item) lastItem = i
  let anchor: number
  let blankBefore: boolean
  if (lastItem !== -1) {
    anchor = lastItem
    // The item's continuation: following non-blank lines that are neither a new item nor a heading
    // (lazy lines), then, past blank lines, every line indented to the item's content (its own
    // paragraphs, code, nested lists). The entry goes after all of it, never inside the item.
    const indent = contentIndent(lines[lastItem]!.text)
    for (let j = lastItem + 1; j < end; j++) {
      const text = lines[j]!.text
      if (isBlank(text)) continue
      if (indentOf(text) >= indent) anchor = j
      else if (j === anchor + 1 && !kinds[j]!.item && kinds[j]!.level === 0) anchor = j // a lazy continuation line
      else break
    }
    blankBefore = false
  } else {
    anchor = h
    for (let i = h + 1; i < end; i++) if (!isBlank(lines[i]!.text)) anchor = i
    blankBefore = true
  }
  const at = lines[anchor]!
  const following = lines[anchor + 1]
  const blankAfter = following !== undefined && !isBlank(following.text) && lastItem === -1
  if (!at.hasEol) return `${page}${eol}${blankBefore ? eol : ''}${body}`
  const inserted = `${blankBefore ? eol : ''}${body}${eol}${blankAfter ? eol : ''}`
  return page.slice(0, at.next) + inserted + page.slice(at.next)
}
