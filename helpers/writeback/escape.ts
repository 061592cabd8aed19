// Untrusted text written as data: on a terminal, control characters (newline, CR, ESC, NUL, C1),
// line separators and bidi or invisible format characters are shown as `\xNN` / `\uNNNN`; in a
// page entry, anything but a plain token is put in an inline code span, where Markdown builds no
// link, image, HTML tag, wiki link or autolink, with the same escapes and `` ` < > \ `` escaped too.

/** C0, DEL, C1, line/paragraph separators, and bidi/invisible format characters. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/gu

const hex = (c: string) => {
  const n = c.codePointAt(0)!
  return n <= 0xff ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`
}

/** The text with every unsafe character shown as an escape; printable text untouched. */
export function escapeControls(text: string): string {
  return text.replace(UNSAFE, hex)
}

/** Cut to `max` code points, with an ellipsis. */
function cut(text: string, max: number): string {
  const chars = [...text]
  return chars.length > max ? `${chars.slice(0, max).join('')}…` : text
}

/** A value quoted for a terminal line: `"…"`, one line, escapes shown. */
export function showText(value: string, max = 80): string {
  return escapeControls(JSON.stringify(cut(value, max)))
}

const MAX_TEXT = 120
/** Shown as is in a page: cannot start a link, image, tag, emphasis run, autolink or wiki link. */
const PLAIN = /^[A-Za-z0-9_+-][A-Za-z0-9_.+-]{0,63}$/

/** Text for the inside of an inline code span: no backtick to close it, no `<`, `>` to fake a marker. */
export function codeText(value: string): string {
  return cut(value, MAX_TEXT).replace(/\\/g, '\\\\').replace(UNSAFE, hex).replace(/[`<>]/g, hex)
}

/** An untrusted value for a page entry: a plain token as is, anything else as an inline code span. */
export function pageText(value: string): string {
  if (value === '') return '""'
  return PLAIN.test(value) && !/www\./i.test(value) ? value : `\`${codeText(value)}\``
}
