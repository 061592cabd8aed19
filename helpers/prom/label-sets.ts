// Label sets of sample lines in their common spelling (`{a="x",b="y"}`: no blanks, no escapes, no
// trailing comma), each distinct `name="value"` pair checked once per page: it is looked up by its
// exact text and gets a number, and a set is read as its pairs' numbers (sample-log.ts keeps them;
// labelsOf() makes the label object when a caller reads it). Which pair comes next is guessed from
// the previous line of the same sample name (the same pair, or the one that followed it there last
// time: the next bucket bound, the next engine), so most lines cost one string comparison per
// label and allocate nothing. Any other spelling, and every problem, is left to the full reader.
import { BACKSLASH, COMMA, EQUALS, LABEL_CHAR, LABEL_START, QUOTE, RBRACE, is, setLabel } from './chars.ts'

/** Labels per set read here; a set with more is a wide one (wide-labels.ts). */
export const MAX_DEPTH = 32
/** read()'s answer for a set of more than MAX_DEPTH labels. */
export const WIDE = -2
/** Distinct pairs kept per page (memory stays bounded on any page); a set with a new pair past that goes to the full reader. */
const MAX_PAIRS = 1 << 17

/** What the previous line of one sample name read: its pairs `pairs[0..count)`, and which of them were not the line before's. */
export class Expected {
  count = 0
  readonly pairs: number[] = []
  readonly moved: number[] = []
}

export class LabelSets {
  private readonly checkReplacement: boolean
  private readonly pairIds = new Map<string, number>()
  private readonly nameIds = new Map<string, number>()
  private readonly pairText: string[] = []
  private readonly pairName: number[] = []
  private readonly names: string[] = []
  private readonly values: string[] = []
  /** Per pair: the pair that followed it at the same place last time, or -1. */
  private readonly nextPair: number[] = []
  /** Name numbers of the set being read, for the repeated-name check. */
  private readonly lineNames = new Int32Array(MAX_DEPTH)

  constructor(checkReplacement: boolean) {
    this.checkReplacement = checkReplacement
  }

  /**
   * The label set whose '{' is at `open` in the line ending at `end`: the position after its '}',
   * its pairs left in `ex.pairs[0..ex.count)`; -1 when it is not in the common spelling or has a
   * problem (the caller reads it again its own way), WIDE when it has more than MAX_DEPTH labels.
   */
  read(s: string, open: number, end: number, ex: Expected): number {
    const { pairs, moved } = ex
    const expected = ex.count
    const text = this.pairText
    const lineNames = this.lineNames
    let p = open + 1
    let k = 0
    for (;;) {
      if (k === MAX_DEPTH) return WIDE
      let id = -1
      if (k < expected) {
        const last = pairs[k]!
        const next = this.nextPair[last]!
        // Where the pair changed last time (the bucket bound), the next one is the better guess.
        const first = moved[k] === 1 && next >= 0 ? next : last
        const t = text[first]!
        if (s.slice(p, p + t.length) === t) id = first
        else {
          const second = first === last ? next : last
          if (second >= 0) {
            const u = text[second]!
            if (s.slice(p, p + u.length) === u) id = second
          }
          if (id < 0 && (id = this.scanPair(s, p, end)) < 0) return -1
        }
        if (id !== last && id !== next) this.nextPair[last] = id
        moved[k] = id === last ? 0 : 1
      } else {
        if ((id = this.scanPair(s, p, end)) < 0) return -1
        moved[k] = 0
      }
      p += text[id]!.length
      // A name twice in one set: the full reader reports it.
      const name = this.pairName[id]!
      for (let j = 0; j < k; j++) if (lineNames[j] === name) return -1
      lineNames[k] = name
      pairs[k++] = id
      const c = p < end ? s.charCodeAt(p) : -1
      if (c === RBRACE) break
      if (c !== COMMA) return -1
      p++
    }
    ex.count = k
    return p + 1
  }

  /** The pair `name="value"` at `a`, by number; -1 unless it is spelled plainly and valid. */
  private scanPair(s: string, a: number, end: number): number {
    let p = a
    let c = p < end ? s.charCodeAt(p) : -1
    if (!is(c, LABEL_START)) return -1
    do c = ++p < end ? s.charCodeAt(p) : -1
    while (is(c, LABEL_CHAR))
    if (c !== EQUALS) return -1
    const eq = p
    if (++p >= end || s.charCodeAt(p) !== QUOTE) return -1
    const v = ++p
    c = -1
    while (p < end && (c = s.charCodeAt(p)) !== QUOTE && c !== BACKSLASH) p++
    if (p >= end || c !== QUOTE) return -1
    const text = s.slice(a, p + 1)
    const known = this.pairIds.get(text)
    if (known !== undefined) return known
    if (this.pairText.length >= MAX_PAIRS) return -1
    const value = s.slice(v, p)
    if (this.checkReplacement && value.includes('\uFFFD')) return -1
    const name = s.slice(a, eq)
    let nameId = this.nameIds.get(name)
    if (nameId === undefined) {
      this.nameIds.set(name, (nameId = this.names.length))
      this.names.push(name)
    }
    const id = this.pairText.length
    this.pairIds.set(text, id)
    this.pairText.push(text)
    this.pairName.push(nameId)
    this.values.push(value)
    this.nextPair.push(-1)
    return id
  }

  /** The frozen label object of the set `pairs[from..from + count)`, in the order its labels were written. */
  labelsOf(pairs: ArrayLike<number>, from: number, count: number): Readonly<Record<string, string>> {
    const out: Record<string, string> = {}
    for (let j = from; j < from + count; j++) setLabel(out, this.names[this.pairName[pairs[j]!]!]!, this.values[pairs[j]!]!)
    return Object.freeze(out)
  }
}
