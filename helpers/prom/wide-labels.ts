// A label set of more than MAX_DEPTH labels in the common spelling: the shape of a hostile page
// (one line of 100,000 labels, about 1 MB). It is checked in one pass that builds no string per
// label: repeated names are found through a hash table of name positions in the page. Its label
// object is built only when a caller reads `labels`: an object of 100,000 keys is a slow
// dictionary, and the meter step, which reads a handful of series by name, never asks for it.
import { BACKSLASH, COMMA, EQUALS, LABEL_CHAR, LABEL_START, QUOTE, RBRACE, is, setLabel } from './chars.ts'

const REPLACEMENT = 0xfffd

export class WideLabels {
  private starts = new Int32Array(0)
  private lengths = new Int32Array(0)
  private hashes = new Int32Array(0)
  private bits = 0
  private count = 0

  /** The position after the set's '}' (the set at `open` valid, no name twice); -1 otherwise, left to the full reader. */
  read(s: string, open: number, end: number): number {
    this.reset(10)
    let p = open + 1
    for (;;) {
      const a = p
      let c = p < end ? s.charCodeAt(p) : -1
      if (!is(c, LABEL_START)) return -1
      let h = c
      for (;;) {
        c = ++p < end ? s.charCodeAt(p) : -1
        if (!is(c, LABEL_CHAR)) break
        h = (Math.imul(h, 31) + c) | 0
      }
      if (c !== EQUALS || !this.add(s, a, p - a, h)) return -1
      if (++p >= end || s.charCodeAt(p) !== QUOTE) return -1
      p++
      c = -1
      while (p < end && (c = s.charCodeAt(p)) !== QUOTE && c !== BACKSLASH && c !== REPLACEMENT) p++
      if (p >= end || c !== QUOTE) return -1
      c = ++p < end ? s.charCodeAt(p) : -1
      if (c === RBRACE) return p + 1
      if (c !== COMMA) return -1
      p++
    }
  }

  private reset(bits: number): void {
    this.bits = bits
    this.count = 0
    this.starts = new Int32Array(1 << bits)
    this.lengths = new Int32Array(1 << bits)
    this.hashes = new Int32Array(1 << bits)
  }

  /** Records the name at [a, a + len); false when the set already has it. */
  private add(s: string, a: number, len: number, h: number): boolean {
    const mask = (1 << this.bits) - 1
    let i = Math.imul(h, 0x9e3779b1) >>> (32 - this.bits)
    for (; this.starts[i] !== 0; i = (i + 1) & mask) {
      if (this.hashes[i] !== h || this.lengths[i] !== len) continue
      const b = this.starts[i]! - 1
      let j = 0
      while (j < len && s.charCodeAt(a + j) === s.charCodeAt(b + j)) j++
      if (j === len) return false
    }
    this.starts[i] = a + 1
    this.lengths[i] = len
    this.hashes[i] = h
    if (++this.count * 2 > mask) this.grow()
    return true
  }

  private grow(): void {
    const { starts, lengths, hashes } = this
    this.reset(this.bits + 1)
    const mask = (1 << this.bits) - 1
    for (let j = 0; j < starts.length; j++) {
      if (starts[j] === 0) continue
      let i = Math.imul(hashes[j]!, 0x9e3779b1) >>> (32 - this.bits)
      while (this.starts[i] !== 0) i = (i + 1) & mask
      this.starts[i] = starts[j]!
      this.lengths[i] = lengths[j]!
      this.hashes[i] = hashes[j]!
      this.count++
    }
  }
}

/** The label object of a set read() accepted, '{' at `open`: built on first read of `labels`, then kept. */
export function lazyLabels(sample: { labels: Readonly<Record<string, string>> }, s: string, open: number): void {
  Object.defineProperty(sample, 'labels', {
    get(this: typeof sample) {
      const labels = build(s, open)
      Object.defineProperty(this, 'labels', { value: labels, writable: true, enumerable: true, configurable: true })
      return labels
    },
    enumerable: true,
    configurable: true,
  })
}

function build(s: string, open: number): Readonly<Record<string, string>> {
  const out: Record<string, string> = {}
  // A set read() accepted has no escapes: each value ends at the next quote.
  for (let p = open + 1; s.charCodeAt(p - 1) !== RBRACE; ) {
    const eq = s.indexOf('=', p)
    const close = s.indexOf('"', eq + 2)
    setLabel(out, s.slice(p, eq), s.slice(eq + 2, close))
    p = close + 2
  }
  return Object.freeze(out)
}
