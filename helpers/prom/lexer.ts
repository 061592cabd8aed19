// Character-level scanner for one line of a Prometheus text (0.0.4) or OpenMetrics page.
// It works on index ranges of the whole page, so no per-line strings are built; it throws
// LineError on the first problem and the caller turns that into a PromParseError.
import {
  BACKSLASH,
  COMMA,
  EQUALS,
  HASH,
  LABEL_CHAR,
  LABEL_START,
  LBRACE,
  NAME_CHAR,
  NAME_START,
  NO_LABELS,
  QUOTE,
  RBRACE,
  SPACE,
  TAB,
  is,
  setLabel,
} from './chars.ts'
import { LabelSets, WIDE, type Expected } from './label-sets.ts'
import { POW10, parseIntegerMs, parseNumber, parseSecondsAsMs } from './numbers.ts'
import { LABELS_NONE, LABELS_OBJECT, LABELS_WIDE } from './sample-log.ts'
import type { Sample } from './types.ts'
import { WideLabels, lazyLabels } from './wide-labels.ts'

export { NO_LABELS } from './chars.ts'

/** A malformed line; thrown by the scanner, caught once per line by the parser. */
export class LineError {
  readonly message: string
  constructor(message: string) {
    this.message = message
  }
}

/** Label sets up to this long are checked for a repeated name by a scan; longer ones by a set. */
const SCAN_LABELS = 16

/** What sampleRest() does with a valid line: validate it only, record its numbers, or build its Sample. */
export const CHECK = 0
export const RECORD = 1
export const BUILD = 2

/** Stands for a wide set's label object until the sample exists (then lazyLabels() takes its place). */
const LAZY: Readonly<Record<string, string>> = Object.freeze({})

/** Label values: `\"`, `\\` and `\n` are escapes; any other `\x` stays as written. */
function unescapeLabel(raw: string): string {
  let out = ''
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i]!
    if (ch !== '\\' || i + 1 >= raw.length) {
      out += ch
      continue
    }
    const next = raw[++i]!
    out += next === 'n' ? '\n' : next === '\\' || next === '"' ? next : `\\${next}`
  }
  return out
}

/** HELP text: `\\` and `\n` are escapes; OpenMetrics adds `\"`. Anything else stays as written. */
export function unescapeHelp(raw: string, om: boolean): string {
  if (!raw.includes('\\')) return raw
  let out = ''
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i]!
    const next = raw[i + 1]
    if (ch === '\\' && next === 'n') {
      out += '\n'
      i++
    } else if (ch === '\\' && (next === '\\' || (om && next === '"'))) {
      out += next
      i++
    } else out += ch
  }
  return out
}

/** A position inside one line [start, end) of the page. `om` selects OpenMetrics spacing rules. */
export class Cursor {
  readonly s: string
  readonly om: boolean
  /** Only pages that contain U+FFFD (invalid UTF-8 after decoding) pay for that check. */
  readonly checkReplacement: boolean
  start = 0
  p = 0
  end = 0
  // Names repeat from one line to the next (all buckets of a series): comparing against the
  // previous lines' strings saves most scanning and allocation.
  /** The last few metric names, most recent first ('' for none yet): families interleave _bucket/_count/_sum. */
  private readonly recentMetrics: string[] = ['', '', '', '']
  /** Every metric name read so far, so each has one string. */
  private readonly metricNames = new Map<string, string>()
  /** Label sets in their common spelling (label-sets.ts), and those of more than MAX_DEPTH labels. */
  readonly sets: LabelSets
  private readonly wide = new WideLabels()
  // The LineRecord of the sample line read last (sampleRest()).
  value = 0
  rawFrom = 0
  rawTo = 0
  stamp = NaN
  labelKind = LABELS_NONE
  labelObject = NO_LABELS
  /** Where the last wide set read opens, for its lazy label object. */
  wideOpen = 0
  /** `names[k]`: label k of the label set labels() reads. */
  private readonly names: string[] = []
  /** The value token, when fastValue() had to cut it out for Number(). */
  private valueText = ''
  /** Label names 0..k of the current label set, once it is longer than SCAN_LABELS (see repeated()). */
  private readonly seenNames = new Set<string>()

  constructor(s: string, om: boolean) {
    this.s = s
    this.om = om
    this.checkReplacement = s.includes('\uFFFD')
    this.sets = new LabelSets(this.checkReplacement)
  }

  reset(start: number, end: number): void {
    this.start = start
    this.p = start
    this.end = end
  }

  peek(): number {
    return this.p < this.end ? this.s.charCodeAt(this.p) : -1
  }

  fail(what: string, at = this.p): never {
    throw new LineError(`${what} (column ${at - this.start + 1})`)
  }

  /** Spaces and tabs, whatever the format. */
  skipBlanks(): void {
    while (this.p < this.end) {
      const c = this.s.charCodeAt(this.p)
      if (c !== SPACE && c !== TAB) return
      this.p++
    }
  }

  /** Optional whitespace: any run in the text format, none in OpenMetrics. */
  skipWs(): void {
    if (!this.om) this.skipBlanks()
  }

  expect(c: number, what: string): void {
    if (this.peek() !== c) this.fail(this.p >= this.end ? `line ends where ${what} was expected` : `expected ${what}`)
    this.p++
  }

  /** Field separator: exactly one space in OpenMetrics, spaces/tabs in text. False at the end of the line. */
  sep(): boolean {
    if (this.p >= this.end) return false
    if (this.om) {
      this.expect(SPACE, 'a single space')
      return true
    }
    this.skipBlanks()
    return this.p < this.end
  }

  /** A metric name at the cursor ('' if none starts there): one of the last few if it repeats one. */
  metricName(): string {
    const s = this.s
    const a = this.p
    const recent = this.recentMetrics
    for (let i = 0; i < recent.length; i++) {
      const known = recent[i]!
      if (known !== '' && !is(s.charCodeAt(a + known.length), NAME_CHAR) && s.slice(a, a + known.length) === known) {
        if (i > 0) {
          recent[i] = recent[0]!
          recent[0] = known
        }
        this.p += known.length
        return known
      }
    }
    if (!is(this.peek(), NAME_START)) return ''
    while (++this.p < this.end && is(s.charCodeAt(this.p), NAME_CHAR));
    const name = s.slice(a, this.p)
    let known = this.metricNames.get(name)
    if (known === undefined) this.metricNames.set(name, (known = name))
    recent[3] = recent[2]!
    recent[2] = recent[1]!
    recent[1] = recent[0]!
    return (recent[0] = known)
  }

  /** Label name number `k` of the current label set. */
  labelName(k: number): string {
    const a = this.p
    if (!is(this.peek(), LABEL_START)) return ''
    while (++this.p < this.end && is(this.s.charCodeAt(this.p), LABEL_CHAR));
    return (this.names[k] = this.s.slice(a, this.p))
  }

  /**
   * Whether `name` is one of names[0..k) of the current label set. Called for k = 0, 1, 2, … in
   * order: a scan while the set is short, then a hash set built once at SCAN_LABELS and grown by
   * one name per call, so a line's labels cost linear time however many there are.
   */
  private repeated(name: string, k: number): boolean {
    const names = this.names
    if (k < SCAN_LABELS) {
      for (let j = 0; j < k; j++) if (names[j] === name) return true
      return false
    }
    const seen = this.seenNames
    if (k === SCAN_LABELS) {
      seen.clear()
      for (let j = 0; j < k; j++) seen.add(names[j]!)
    }
    if (seen.has(name)) return true
    seen.add(name)
    return false
  }

  /** Up to the next separator (space; or tab in the text format) or the end of the line. */
  token(): string {
    const a = this.p
    while (this.p < this.end) {
      const c = this.s.charCodeAt(this.p)
      if (c === SPACE || (c === TAB && !this.om)) break
      this.p++
    }
    return this.s.slice(a, this.p)
  }

  /** A label value, after the opening quote; leaves the cursor after the closing one. */
  labelValue(): string {
    const s = this.s
    const a = this.p
    let p = a
    let escaped = false
    while (p < this.end) {
      const c = s.charCodeAt(p)
      if (c === QUOTE) break
      if (c === BACKSLASH) {
        escaped = true
        p += 2
      } else p++
    }
    if (p >= this.end) this.fail('unterminated label value', a - 1)
    this.p = p + 1
    const raw = s.slice(a, p)
    if (this.checkReplacement && raw.includes('\uFFFD')) this.fail('label value is not valid UTF-8 (holds U+FFFD)', a)
    return escaped ? unescapeLabel(raw) : raw
  }

  /**
   * At the '{' of a sample's label set; says in `labelKind` how it was read. The common spelling
   * (`{a="x",b="y"}`: no blanks, no escapes, no trailing comma) is read by label-sets.ts, or by
   * wide-labels.ts past MAX_DEPTH labels; anything else, including every error, by labels(),
   * which starts over at the '{'. Returns the label object in BUILD mode (LAZY for a wide set:
   * the caller makes it lazy), else NO_LABELS or the full reader's object.
   */
  sampleLabels(mode: number, ex: Expected): Readonly<Record<string, string>> {
    let q = this.sets.read(this.s, this.p, this.end, ex)
    if (q >= 0) {
      this.p = q
      this.labelKind = ex.count
      return mode === BUILD ? this.sets.labelsOf(ex.pairs, 0, ex.count) : NO_LABELS
    }
    if (q === WIDE && (q = this.wide.read(this.s, this.p, this.end)) >= 0) {
      this.labelKind = LABELS_WIDE
      this.wideOpen = this.p
      this.p = q
      return mode === BUILD ? LAZY : NO_LABELS
    }
    const labels = this.labels(false, mode !== CHECK)
    this.labelKind = labels === NO_LABELS ? LABELS_NONE : LABELS_OBJECT
    this.labelObject = labels
    return labels
  }

  /**
   * At '{'. Text format allows blanks around tokens, a trailing comma and `{,}`; OpenMetrics allows
   * none. A sample's label set (not `fresh`) is NO_LABELS when it is empty or not to be stored.
   */
  labels(fresh: boolean, store = true): Record<string, string> {
    this.p++
    this.skipWs()
    if (this.peek() === RBRACE) {
      this.p++
      return fresh ? {} : (NO_LABELS as Record<string, string>)
    }
    if (!this.om && this.peek() === COMMA) {
      this.p++
      this.skipWs()
      this.expect(RBRACE, "'}' after a lone ','")
      return fresh ? {} : (NO_LABELS as Record<string, string>)
    }
    const out: Record<string, string> = {}
    for (let k = 0; ; k++) {
      const name = this.labelName(k)
      if (name === '') this.fail(this.peek() === QUOTE ? 'quoted label names are not supported' : 'expected a label name')
      this.skipWs()
      this.expect(EQUALS, `'=' after label name "${name}"`)
      this.skipWs()
      this.expect(QUOTE, `'"' to open the value of label "${name}"`)
      const at = this.p
      const value = this.labelValue()
      if (this.repeated(name, k)) this.fail(`duplicate label "${name}"`, at)
      setLabel(out, name, value)
      this.skipWs()
      const c = this.peek()
      if (c === RBRACE) {
        this.p++
        return fresh ? out : store ? Object.freeze(out) : (NO_LABELS as Record<string, string>)
      }
      if (c !== COMMA) this.fail(`expected ',' or '}' after the value of label "${name}"`)
      this.p++
      this.skipWs()
      if (!this.om && this.peek() === RBRACE) {
        this.p++
        return fresh ? out : store ? Object.freeze(out) : (NO_LABELS as Record<string, string>)
      }
    }
  }

  /** At '#' after a sample: `# {labels} value [timestamp]`. */
  exemplar(): NonNullable<Sample['exemplar']> {
    this.p++
    if (this.om) this.expect(SPACE, "a single space after '#'")
    else if (this.peek() !== SPACE && this.peek() !== TAB) this.fail("expected whitespace after '#'")
    this.skipWs()
    if (this.peek() !== LBRACE) this.fail("expected '{' to open the exemplar labels")
    const labels = this.labels(true)
    if (this.om) this.expect(SPACE, 'a single space before the exemplar value')
    else this.skipBlanks()
    const at = this.p
    const raw = this.token()
    if (raw === '') this.fail('missing exemplar value')
    const value = parseNumber(raw, true)
    if (value === undefined) this.fail(`invalid exemplar value "${raw}"`, at)
    const ex: NonNullable<Sample['exemplar']> = { labels, value }
    if (this.sep()) {
      const tat = this.p
      const t = this.token()
      const ms = parseSecondsAsMs(t)
      if (ms === undefined) this.fail(t === '' ? 'missing exemplar timestamp after the space' : `invalid exemplar timestamp "${t}"`, tat)
      ex.timestampMs = ms
      if (this.sep()) this.fail('unexpected text after the exemplar')
    }
    return ex
  }

  /** A sample line's metric name, from the line's first character. */
  sampleName(): string {
    const name = this.metricName()
    if (name === '') {
      const c = this.peek()
      this.fail(
        c === LBRACE ? "missing metric name before '{'" : c === QUOTE ? 'quoted metric names are not supported' : 'invalid metric name',
      )
    }
    return name
  }

  /**
   * A decimal value token (`[+-]digits[.digits][e[+-]digits]`, as parseNumber() reads it) straight
   * from the char codes; undefined (cursor unmoved) for anything else, which the caller reads the
   * slow way. Up to 15 digits and a power of ten up to 22 the value is computed exactly (both
   * operands are exact doubles, so the one multiplication or division rounds correctly, as
   * Number() does); beyond that Number() reads the token, which is then left in `valueText`.
   */
  private fastValue(): number | undefined {
    const s = this.s
    const end = this.end
    const start = this.p
    let p = start
    let c = p < end ? s.charCodeAt(p) : -1
    const neg = c === 45
    if (neg || c === 43) c = ++p < end ? s.charCodeAt(p) : -1
    let m = 0
    let digits = 0
    let frac = 0
    while (c >= 48 && c <= 57) {
      m = m * 10 + (c - 48)
      digits++
      c = ++p < end ? s.charCodeAt(p) : -1
    }
    if (c === 46) {
      c = ++p < end ? s.charCodeAt(p) : -1
      while (c >= 48 && c <= 57) {
        m = m * 10 + (c - 48)
        digits++
        frac++
        c = ++p < end ? s.charCodeAt(p) : -1
      }
    }
    if (digits === 0) return undefined
    let exp = 0
    let expDigits = 0
    if (c === 101 || c === 69) {
      c = ++p < end ? s.charCodeAt(p) : -1
      const expNeg = c === 45
      if (expNeg || c === 43) c = ++p < end ? s.charCodeAt(p) : -1
      while (c >= 48 && c <= 57) {
        exp = exp * 10 + (c - 48)
        expDigits++
        c = ++p < end ? s.charCodeAt(p) : -1
      }
      if (expDigits === 0) return undefined
      if (expNeg) exp = -exp
    }
    if (c !== -1 && c !== SPACE && (c !== TAB || this.om)) return undefined
    this.p = p
    const e10 = exp - frac
    if (digits > 15 || expDigits > 4 || e10 > 22 || e10 < -22) {
      const text = (this.valueText = s.slice(start, p))
      return Number(text)
    }
    const v = e10 === 0 ? m : e10 > 0 ? m * POW10[e10]! : m / POW10[-e10]!
    return neg ? -v : v
  }

  /**
   * The rest of a sample line after its name: labels, value, timestamp, and in OpenMetrics an
   * exemplar. CHECK only validates the line; RECORD leaves its numbers in this cursor (a
   * LineRecord, which sample-log.ts keeps); BUILD returns the Sample.
   */
  sampleRest(name: string, line: number, mode: number, ex: Expected): Sample | undefined {
    let labels = NO_LABELS
    this.labelKind = LABELS_NONE
    const c = this.peek()
    if (c === LBRACE) labels = this.sampleLabels(mode, ex)
    else if (c === -1) this.fail('missing value')
    else if (c !== SPACE && (c !== TAB || this.om)) this.fail(`unexpected character ${JSON.stringify(this.s[this.p])} after metric name`)
    else if (!this.om) {
      this.skipBlanks()
      if (this.peek() === LBRACE) labels = this.sampleLabels(mode, ex)
    }
    if (this.om) {
      if (this.p >= this.end) this.fail('missing value')
      this.expect(SPACE, 'a single space before the value')
    } else this.skipBlanks()
    const at = this.p
    this.valueText = ''
    let value = this.fastValue()
    let raw = ''
    if (value !== undefined) {
      if (mode === BUILD) raw = this.valueText !== '' ? this.valueText : this.s.slice(at, this.p)
    } else {
      raw = this.token()
      if (raw === '') this.fail('missing value')
      value = parseNumber(raw, true)
      if (value === undefined) this.fail(`invalid value "${raw}"`, at)
    }
    this.value = value
    this.rawFrom = at
    this.rawTo = this.p
    this.stamp = NaN
    let sample: Sample | undefined
    if (mode === BUILD) {
      sample = { name, labels, value, raw, line }
      if (labels === LAZY) lazyLabels(sample, this.s, this.wideOpen)
    }
    if (!this.sep()) return sample
    if (this.peek() !== HASH) {
      const tat = this.p
      const t = this.token()
      const ms = this.om ? parseSecondsAsMs(t) : parseIntegerMs(t)
      if (ms === undefined) {
        const expected = this.om ? 'decimal seconds' : 'integer milliseconds'
        this.fail(t === '' ? 'missing timestamp after the space' : `invalid timestamp "${t}" (expected ${expected})`, tat)
      }
      this.stamp = ms
      if (sample) sample.timestampMs = ms
      if (!this.sep()) return sample
      if (this.peek() !== HASH) this.fail('unexpected text after the timestamp')
    }
    // Exemplars are OpenMetrics only: Prometheus' text parser takes nothing after the value but a
    // timestamp, and refuses the whole page at the '#' (model/textparse/promparse.go).
    if (!this.om) {
      const after = Number.isNaN(this.stamp) ? 'value' : 'timestamp'
      this.fail(
        `an exemplar ("#" after the ${after}) is OpenMetrics only: Prometheus' text parser refuses the whole page ("${after === 'value' ? 'expected timestamp or new record' : 'expected next entry after timestamp'}")`,
      )
    }
    const exemplar = this.exemplar()
    if (this.p < this.end) this.fail('unexpected text after the exemplar')
    if (sample) sample.exemplar = exemplar
    return sample
  }
}
