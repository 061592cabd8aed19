// Character-level scanner for one line of a Prometheus text (0.0.4) or OpenMetrics page.
// It works on index ranges of the whole page, so no per-line strings are built; it throws
// LineError on the first problem and the caller turns that into a PromParseError.
import type { Sample } from './types.ts'

/** A malformed line; thrown by the scanner, caught once per line by the parser. */
export class LineError {
  readonly message: string
  constructor(message: string) {
    this.message = message
  }
}

const SPACE = 32
const TAB = 9
const QUOTE = 34
const HASH = 35
const COMMA = 44
const EQUALS = 61
const BACKSLASH = 92
const LBRACE = 123
const RBRACE = 125

const NAME_START = 1
const NAME_CHAR = 2
const LABEL_START = 4
const LABEL_CHAR = 8
const CLASS = new Uint8Array(128)
for (let c = 0; c < 128; c++) {
  const alpha = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95
  const digit = c >= 48 && c <= 57
  CLASS[c] =
    (alpha ? NAME_START | NAME_CHAR | LABEL_START | LABEL_CHAR : 0) |
    (digit ? NAME_CHAR | LABEL_CHAR : 0) |
    (c === 58 ? NAME_START | NAME_CHAR : 0)
}
const is = (c: number, kind: number): boolean => c >= 0 && c < 128 && (CLASS[c]! & kind) !== 0

/** Exact powers of ten: an integer below 2^53 times or divided by one of these is correctly rounded (Clinger's fast path). */
const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22]

/** Label sets up to this long are checked for a repeated name by a scan; longer ones by a set. */
const SCAN_LABELS = 16

/** Distinct label values interned per page; past that, new values are still read, just not shared. */
const MAX_VALUES = 1 << 16

const SPECIAL_VALUES = new Map<string, number>([
  ['nan', NaN],
  ['inf', Infinity], ['+inf', Infinity], ['infinity', Infinity], ['+infinity', Infinity],
  ['-inf', -Infinity], ['-infinity', -Infinity],
])

/** Decimal float as Go's ParseFloat reads it, minus hex and `_`; NaN/±Inf (any case) only when `specials`. */
export function parseNumber(t: string, specials: boolean): number | undefined {
  let i = 0
  let c = t.charCodeAt(0)
  if (c === 43 || c === 45) c = t.charCodeAt(++i)
  let digits = 0
  while (c >= 48 && c <= 57) { digits++; c = t.charCodeAt(++i) }
  if (c === 46) {
    c = t.charCodeAt(++i)
    while (c >= 48 && c <= 57) { digits++; c = t.charCodeAt(++i) }
  }
  if (digits === 0) return specials ? SPECIAL_VALUES.get(t.toLowerCase()) : undefined
  if (c === 101 || c === 69) {
    c = t.charCodeAt(++i)
    if (c === 43 || c === 45) c = t.charCodeAt(++i)
    let exp = 0
    while (c >= 48 && c <= 57) { exp++; c = t.charCodeAt(++i) }
    if (exp === 0) return undefined
  }
  return i === t.length ? Number(t) : undefined
}

/** Text-format timestamp: integer milliseconds, optionally signed. */
export function parseIntegerMs(t: string): number | undefined {
  let i = t.charCodeAt(0) === 43 || t.charCodeAt(0) === 45 ? 1 : 0
  if (i === t.length) return undefined
  for (; i < t.length; i++) {
    const c = t.charCodeAt(i)
    if (c < 48 || c > 57) return undefined
  }
  return Number(t)
}

/** OpenMetrics/exemplar timestamp: decimal seconds, shifted to ms on the string so `1.789` gives exactly 1789. */
export function parseSecondsAsMs(t: string): number | undefined {
  if (parseNumber(t, false) === undefined) return undefined
  const dot = t.indexOf('.')
  if (dot === -1 || t.includes('e') || t.includes('E')) return Number(t) * 1000
  const frac = t.slice(dot + 1)
  return Number(t.slice(0, dot) + frac.slice(0, 3).padEnd(3, '0') + (frac.length > 3 ? `.${frac.slice(3)}` : ''))
}

/** Label values: `\"`, `\\` and `\n` are escapes; any other `\x` stays as written. */
function unescapeLabel(raw: string): string {
  let out = ''
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i]!
    if (ch !== '\\' || i + 1 >= raw.length) { out += ch; continue }
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
    if (ch === '\\' && next === 'n') { out += '\n'; i++ }
    else if (ch === '\\' && (next === '\\' || (om && next === '"'))) { out += next; i++ }
    else out += ch
  }
  return out
}

function setLabel(out: Record<string, string>, name: string, value: string): void {
  // A plain assignment to `__proto__` would set the prototype and lose the label.
  if (name === '__proto__') Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true })
  else out[name] = value
}

/** The shared label set of every sample without labels. */
export const NO_LABELS: Readonly<Record<string, string>> = Object.freeze({})

/** A position inside one line [start, end) of the page. `om` selects OpenMetrics spacing rules. */
export class Cursor {
  readonly s: string
  readonly om: boolean
  /** Only pages that contain U+FFFD (invalid UTF-8 after decoding) pay for that check. */
  readonly checkReplacement: boolean
  start = 0
  p = 0
  end = 0
  // Names and label values repeat from one line to the next (all buckets of a series): reusing the
  // previous line's strings saves most allocations, and comparing against them most scanning.
  /** The last few metric names, most recent first ('' for none yet): families interleave _bucket/_count/_sum. */
  private readonly recentMetrics: string[] = ['', '', '', '']
  /** Every metric name read so far, so each has one string. */
  private readonly metricNames = new Map<string, string>()
  /** `names[k]`/`values[k]`: label k of the last label set read (values only when unescaped). */
  private readonly names: string[] = []
  private readonly values: string[] = []
  /**
   * Label values of stored samples (up to MAX_VALUES), one string each, and for each the value
   * that followed it in the same label last time: the next bucket bound, the next engine.
   */
  private readonly valueIntern = new Map<string, string>()
  private readonly nextValue = new Map<string, string>()
  /** The value token, when fastValue() had to cut it out for Number(). */
  private valueText = ''
  /** Label names 0..k of the current label set, once it is longer than SCAN_LABELS (see repeated()). */
  private readonly seenNames = new Set<string>()

  constructor(s: string, om: boolean) {
    this.s = s
    this.om = om
    this.checkReplacement = s.includes('\uFFFD')
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
    if (this.om) { this.expect(SPACE, 'a single space'); return true }
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
    const last = this.names[k]
    if (last !== undefined && !is(this.s.charCodeAt(a + last.length), LABEL_CHAR) && this.s.slice(a, a + last.length) === last) {
      this.p += last.length
      return last
    }
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

  /** Value of label number `k`, after the opening quote; leaves the cursor after the closing one. */
  labelValue(k: number): string {
    const s = this.s
    const a = this.p
    const last = this.values[k]
    // Only unescaped values are cached, so an equal run of text followed by '"' is the same value.
    if (last !== undefined && s.charCodeAt(a + last.length) === QUOTE && s.slice(a, a + last.length) === last) {
      this.p = a + last.length + 1
      return last
    }
    let p = a
    let escaped = false
    while (p < this.end) {
      const c = s.charCodeAt(p)
      if (c === QUOTE) break
      if (c === BACKSLASH) { escaped = true; p += 2 } else p++
    }
    if (p >= this.end) this.fail('unterminated label value', a - 1)
    this.p = p + 1
    const raw = s.slice(a, p)
    if (this.checkReplacement && raw.includes('\uFFFD')) this.fail('label value is not valid UTF-8 (holds U+FFFD)', a)
    if (escaped) return unescapeLabel(raw)
    return (this.values[k] = raw)
  }

  /**
   * At the '{' of a sample's label set: its label object, or NO_LABELS when `store` is false (the
   * set is then only validated). The common shape (`{a="x",b="y"}`: no blanks, no escapes, no
   * trailing comma) is read by one tight loop that reuses the previous line's names and values
   * where they repeat; anything else, including every error, is left to labels(), which starts
   * over at the '{'.
   */
  sampleLabels(store: boolean): Readonly<Record<string, string>> {
    const s = this.s
    const end = this.end
    const names = this.names
    const values = this.values
    let p = this.p + 1
    let k = 0
    for (;;) {
      const a = p
      const ln = names[k]
      let name: string
      if (ln !== undefined && s.charCodeAt(a + ln.length) === EQUALS && s.slice(a, a + ln.length) === ln) {
        name = ln
        p = a + ln.length
      } else {
        let c = p < end ? s.charCodeAt(p) : -1
        if (!is(c, LABEL_START)) return this.labels(false, store)
        do c = ++p < end ? s.charCodeAt(p) : -1
        while (is(c, LABEL_CHAR))
        if (c !== EQUALS) return this.labels(false, store)
        name = names[k] = s.slice(a, p)
      }
      if (++p >= end || s.charCodeAt(p) !== QUOTE) return this.labels(false, store)
      const v = ++p
      const lv = values[k]
      if (lv !== undefined && v + lv.length < end && s.charCodeAt(v + lv.length) === QUOTE && s.slice(v, v + lv.length) === lv) {
        p = v + lv.length
      } else {
        // Not the previous line's value; often the one that followed it last time (the next bucket bound, the next engine).
        const next = store && lv !== undefined ? this.nextValue.get(lv) : undefined
        if (next !== undefined && v + next.length < end && s.charCodeAt(v + next.length) === QUOTE && s.slice(v, v + next.length) === next) {
          p = v + next.length
          values[k] = next
        } else {
          let c = -1
          while (p < end && (c = s.charCodeAt(p)) !== QUOTE && c !== BACKSLASH) p++
          if (c !== QUOTE) return this.labels(false, store)
          let value = s.slice(v, p)
          if (this.checkReplacement && value.includes('\uFFFD')) return this.labels(false, store)
          if (store) {
            const known = this.valueIntern.get(value)
            if (known !== undefined) value = known
            else if (this.valueIntern.size < MAX_VALUES) this.valueIntern.set(value, value)
            if (lv !== undefined && this.nextValue.size < MAX_VALUES) this.nextValue.set(lv, value)
          }
          values[k] = value
        }
      }
      if (this.repeated(name, k)) return this.labels(false, store)
      k++
      const c = ++p < end ? s.charCodeAt(p) : -1
      if (c === RBRACE) break
      if (c !== COMMA) return this.labels(false, store)
      p++
    }
    this.p = p + 1
    if (!store) return NO_LABELS
    const out: Record<string, string> = {}
    for (let j = 0; j < k; j++) setLabel(out, names[j]!, values[j]!)
    return out
  }

  /**
   * At '{'. Text format allows blanks around tokens, a trailing comma and `{,}`; OpenMetrics allows
   * none. A sample's label set (not `fresh`) is NO_LABELS when it is empty or not to be stored.
   */
  labels(fresh: boolean, store = true): Record<string, string> {
    this.p++
    this.skipWs()
    if (this.peek() === RBRACE) { this.p++; return fresh ? {} : (NO_LABELS as Record<string, string>) }
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
      const value = this.labelValue(k)
      if (this.repeated(name, k)) this.fail(`duplicate label "${name}"`, at)
      setLabel(out, name, value)
      this.skipWs()
      const c = this.peek()
      if (c === RBRACE) { this.p++; return fresh || store ? out : (NO_LABELS as Record<string, string>) }
      if (c !== COMMA) this.fail(`expected ',' or '}' after the value of label "${name}"`)
      this.p++
      this.skipWs()
      if (!this.om && this.peek() === RBRACE) { this.p++; return fresh || store ? out : (NO_LABELS as Record<string, string>) }
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
      this.fail(c === LBRACE ? "missing metric name before '{'" : c === QUOTE ? 'quoted metric names are not supported' : 'invalid metric name')
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
   * The rest of a sample line after its name: labels, value, timestamp, exemplar. With `store`
   * false the line is only validated and no Sample is built.
   */
  sampleRest(name: string, line: number, store: boolean): Sample | undefined {
    let labels = NO_LABELS
    const c = this.peek()
    if (c === LBRACE) labels = this.sampleLabels(store)
    else if (c === -1) this.fail('missing value')
    else if (c !== SPACE && (c !== TAB || this.om)) this.fail(`unexpected character ${JSON.stringify(this.s[this.p])} after metric name`)
    else if (!this.om) {
      this.skipBlanks()
      if (this.peek() === LBRACE) labels = this.sampleLabels(store)
    }
    if (this.om) {
      if (this.p >= this.end) this.fail('missing value')
      this.expect(SPACE, 'a single space before the value')
    } else this.skipBlanks()
    const at = this.p
    this.valueText = ''
    let value = this.fastValue()
    let raw: string
    if (value !== undefined) raw = this.valueText !== '' ? this.valueText : store ? this.s.slice(at, this.p) : ''
    else {
      raw = this.token()
      if (raw === '') this.fail('missing value')
      value = parseNumber(raw, true)
      if (value === undefined) this.fail(`invalid value "${raw}"`, at)
    }
    const sample: Sample | undefined = store ? { name, labels, value, raw, line } : undefined
    if (!this.sep()) return sample
    let after = 'value'
    if (this.peek() !== HASH) {
      after = 'timestamp'
      const tat = this.p
      const t = this.token()
      const ms = this.om ? parseSecondsAsMs(t) : parseIntegerMs(t)
      if (ms === undefined) {
        const expected = this.om ? 'decimal seconds' : 'integer milliseconds'
        this.fail(t === '' ? 'missing timestamp after the space' : `invalid timestamp "${t}" (expected ${expected})`, tat)
      }
      if (sample) sample.timestampMs = ms
      if (!this.sep()) return sample
      if (this.peek() !== HASH) this.fail('unexpected text after the timestamp')
    }
    // Exemplars are OpenMetrics only: Prometheus' text parser takes nothing after the value but a
    // timestamp, and refuses the whole page at the '#' (model/textparse/promparse.go).
    if (!this.om) this.fail(`an exemplar ("#" after the ${after}) is OpenMetrics only: Prometheus' text parser refuses the whole page (${after === 'value' ? 'expected timestamp or new record' : 'expected next entry after timestamp'}, got "#")`)
    const exemplar = this.exemplar()
    if (this.p < this.end) this.fail('unexpected text after the exemplar')
    if (sample) sample.exemplar = exemplar
    return sample
  }
}
