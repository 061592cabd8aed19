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
/** A setext underline: under a paragraph, `===` makes it a level-1 heading, `---` a level-2 one. */
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/
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

/** An HTML block that hides what is inside it (CommonMark's types 1 and 2): a comment, or raw <pre>/<script>/<style>/<textarea>. */
const HTML_OPEN: ReadonlyArray<{ start: RegExp; end: RegExp; what: string }> = [
  { start: /^ {0,3}<!--/, end: /-->/, what: 'an HTML comment' },
  { start: /^ {0,3}<(pre|script|style|textarea)(?:[\s>]|$)/i, end: /<\/(pre|script|style|textarea)>/i, what: 'a raw HTML block' },
]

/** What runs to the end of the page when it never closes: the line it opened at, and what it is. */
export interface OpenBlock {
  line: number
  what: string
}

/**
 * Per line: its heading level (0 for none; a setext heading's on its first line, with its title),
 * and whether it is a list item, outside code fences, HTML comments and raw HTML blocks, and front
 * matter: a heading inside any of them is no heading.
 */
function classify(lines: readonly Line[]): { level: number; item: boolean; title?: string }[] & { open?: OpenBlock } {
  const out: { level: number; item: boolean; title?: string }[] = lines.map(() => ({ level: 0, item: false }))
  /** The first line of the paragraph the last line belongs to (a setext underline makes it a heading); null when the last line was none. */
  let para: number | null = null
  /** The last line was a list item or its lazy continuation: a plain line after it continues the item, and `---` under it is a rule. */
  let inItem = false
  let i = 0
  if (lines[0]?.text.replace(/^\uFEFF/, '').trimEnd() === '---') {
    const close = lines.findIndex((l, j) => j > 0 && (l.text.trimEnd() === '---' || l.text.trimEnd() === '...'))
    if (close > 0) i = close + 1
  }
  let fence: string | null = null
  let html: { end: RegExp } | null = null
  let open: OpenBlock | undefined
  for (; i < lines.length; i++) {
    const text = lines[i]!.text
    if (html !== null) {
      if (html.end.test(text)) [html, open] = [null, undefined]
      continue
    }
    const wasPara: number | null = para
    para = null
    if (isBlank(text)) {
      inItem = false
      continue
    }
    const f = FENCE.exec(text)
    if (fence !== null) {
      if (f && f[1]![0] === fence[0] && f[1]!.length >= fence.length && text.trim() === f[1]) [fence, open] = [null, undefined]
      continue
    }
    if (f) {
      fence = f[1]!
      open = { line: i, what: 'a code fence' }
      continue
    }
    const block = HTML_OPEN.find((b) => b.start.test(text))
    if (block) {
      // The block ends on the line holding its end (the start line too, past the opening).
      const rest = text.slice(text.search(block.start) + 4)
      if (!block.end.test(rest)) [html, open] = [{ end: block.end }, { line: i, what: block.what }]
      continue
    }
    const s = SETEXT.exec(text)
    if (s && wasPara !== null) {
      out[wasPara]!.level = s[1]![0] === '=' ? 1 : 2
      out[wasPara]!.title = lines
        .slice(wasPara, i)
        .map((l) => l.text.trim())
        .join(' ')
      continue
    }
    const h = HEADING.exec(text)
    if (h) {
      out[i]!.level = h[1]!.length
      out[i]!.title = h[2] ?? ''
      inItem = false
    } else if (LIST_ITEM.test(text)) {
      out[i]!.item = true
      inItem = true
    } else if (!inItem && indentOf(text) < 4) {
      para = wasPara ?? i
    }
  }
  return open !== undefined ? Object.assign(out, { open }) : out
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

const isKnobLog = (kind: { level: number; title?: string }) => kind.level === 2 && (kind.title ?? '').trim().toLowerCase() === 'knob log'

/** The page with the entry added under `## Knob log` (after its last list item), or with the heading appended. */
export function insertEntry(page: string, entry: readonly string[]): string {
  const eol = lineEnding(page)
  const lines = splitLines(page)
  const kinds = classify(lines)
  const body = entry.join(eol)
  const h = lines.findIndex((_, i) => isKnobLog(kinds[i]!))
  if (kinds.open !== undefined) {
    // A fence or an HTML block that never closes runs to the end of the page: whatever is written after it is code, or hidden.
    let sectionEnd = lines.length
    if (h !== -1)
      for (let i = h + 1; i < lines.length; i++)
        if (kinds[i]!.level > 0) {
          sectionEnd = i
          break
        }
    const { line, what } = kinds.open
    if (h === -1 || line < sectionEnd) {
      throw new PageShapeError(
        line + 1,
        `has ${what} opened at line ${line + 1} that never closes; an entry written after it would show as ${what === 'a code fence' ? 'code' : 'part of it, or not at all'}, not as a Knob log entry`,
      )
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
      else if (j === anchor + 1 && !kinds[j]!.item && kinds[j]!.level === 0)
        anchor = j // a lazy continuation line
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
