// A small unified-style line diff for --dry-run: one hunk around the changed lines (writeback
// only ever inserts one block), three lines of context, line endings not shown.

const CONTEXT = 3

function linesOf(text: string): string[] {
  const lines = text.split(/\r?\n/)
  if (lines[lines.length - 1] === '') lines.pop()
  return lines
}

export function unifiedDiff(before: string, after: string, label: string): string {
  const a = linesOf(before)
  const b = linesOf(after)
  let head = 0
  while (head < a.length && head < b.length && a[head] === b[head]) head++
  let tail = 0
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++
  if (head === a.length && head === b.length) return ''
  const from = Math.max(0, head - CONTEXT)
  const aEnd = a.length - tail
  const bEnd = b.length - tail
  const ctxEnd = Math.min(CONTEXT, tail)
  const lines = [
    ...a.slice(from, head).map((l) => ` ${l}`),
    ...a.slice(head, aEnd).map((l) => `-${l}`),
    ...b.slice(head, bEnd).map((l) => `+${l}`),
    ...a.slice(aEnd, aEnd + ctxEnd).map((l) => ` ${l}`),
  ]
  const aLen = aEnd - from + ctxEnd
  const bLen = bEnd - from + ctxEnd
  const range = (start: number, len: number) => `${len === 0 ? start : start + 1},${len}`
  return [`--- a/${label}`, `+++ b/${label}`, `@@ -${range(from, aLen)} +${range(from, bLen)} @@`, ...lines].join('\n')
}
