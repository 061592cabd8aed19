// A reader of what Python's repr() prints, for the lines engines log their resolved values in:
// vLLM's `non-default args: {'max_num_seqs': 8, 'enable_prefix_caching': True}` (a dict),
// SGLang's `server_args=ServerArgs(model_path='…', chunked_prefill_size=8192, …)` (a dataclass),
// vLLM's engine config line `model='…', dtype=torch.bfloat16, observability_config=…(…), …`
// (VllmConfig.__str__: `key=value` pairs). A real parser: quotes and their escapes, nesting of
// () [] {}, and a value that is no literal (`torch.bfloat16`, `<Enum.X: 1>`) read as the text it
// is, up to the next comma of its level. Pure; it never throws on what an engine prints.

export type Py =
  | { t: 'str'; v: string }
  /** A number as written: its text, so nothing is lost to a float. */
  | { t: 'num'; v: string }
  | { t: 'bool'; v: boolean }
  | { t: 'none' }
  | { t: 'list'; v: Py[] }
  | { t: 'dict'; v: Array<[Py, Py]> }
  | { t: 'call'; name: string; args: Array<[string, Py]> }
  /** Anything else, as written. */
  | { t: 'bare'; v: string }

const CLOSE: Record<string, string> = { '(': ')', '[': ']', '{': '}' }

class Reader {
  i = 0
  readonly s: string
  constructor(s: string) {
    this.s = s
  }

  space(): void {
    while (this.i < this.s.length && /\s/.test(this.s[this.i]!)) this.i++
  }

  /** A string literal at `i` (with r/b/u prefixes), or undefined when there is none. */
  string(): string | undefined {
    const m = /^([rRbBuU]{0,2})(['"])/.exec(this.s.slice(this.i, this.i + 3))
    if (!m) return undefined
    const raw = /[rR]/.test(m[1]!)
    const quote = m[2]!
    let j = this.i + m[0].length
    let out = ''
    while (j < this.s.length && this.s[j] !== quote) {
      const c = this.s[j]!
      if (c === '\\' && j + 1 < this.s.length) {
        const n = this.s[j + 1]!
        if (raw) {
          out += c + n
          j += 2
          continue
        }
        const simple: Record<string, string> = {
          n: '\n',
          r: '\r',
          t: '\t',
          '\\': '\\',
          "'": "'",
          '"': '"',
          '0': '\0',
          a: '\x07',
          b: '\b',
          f: '\f',
          v: '\v',
        }
        if (n in simple) {
          out += simple[n]
          j += 2
          continue
        }
        const hex = n === 'x' ? 2 : n === 'u' ? 4 : n === 'U' ? 8 : 0
        const digits = this.s.slice(j + 2, j + 2 + hex)
        if (hex > 0 && new RegExp(`^[0-9a-fA-F]{${hex}}$`).test(digits)) {
          out += String.fromCodePoint(Number.parseInt(digits, 16))
          j += 2 + hex
          continue
        }
        out += c + n
        j += 2
        continue
      }
      out += c
      j++
    }
    if (j >= this.s.length) return undefined
    this.i = j + 1
    return out
  }

  /** The text from `i` up to the next `,` (or closing bracket) of this level, quotes and nesting skipped. */
  bareText(): string {
    const start = this.i
    const stack: string[] = []
    while (this.i < this.s.length) {
      const c = this.s[this.i]!
      if (c === "'" || c === '"') {
        const before = this.i
        if (this.string() === undefined) this.i = before + 1
        continue
      }
      if (c in CLOSE) stack.push(CLOSE[c]!)
      else if (stack.length && c === stack.at(-1)) stack.pop()
      else if (!stack.length && (c === ',' || c === ')' || c === ']' || c === '}')) break
      this.i++
    }
    return this.s.slice(start, this.i).trim()
  }

  /** Items separated by commas until `close`; a trailing comma is fine. */
  items<T>(close: string, item: () => T): T[] | undefined {
    const out: T[] = []
    for (;;) {
      this.space()
      if (this.s[this.i] === close) {
        this.i++
        return out
      }
      if (this.i >= this.s.length) return undefined
      out.push(item())
      this.space()
      if (this.s[this.i] === ',') this.i++
      else if (this.s[this.i] !== close) return undefined
    }
  }

  value(): Py {
    this.space()
    const start = this.i
    const s = this.string()
    if (s !== undefined) return { t: 'str', v: s }
    const c = this.s[this.i]
    if (c === '[' || c === '(') {
      this.i++
      const items = this.items(c === '[' ? ']' : ')', () => this.value())
      if (items) return { t: 'list', v: items }
      this.i = start
      return { t: 'bare', v: this.bareText() }
    }
    if (c === '{') {
      this.i++
      const pairs = this.items('}', (): [Py, Py] => {
        const k = this.value()
        this.space()
        if (this.s[this.i] === ':') this.i++
        return [k, this.value()]
      })
      if (pairs) return { t: 'dict', v: pairs }
      this.i = start
      return { t: 'bare', v: this.bareText() }
    }
    const call = /^([A-Za-z_][\w.]*)\(/.exec(this.s.slice(this.i, this.i + 200))
    if (call) {
      this.i += call[0].length
      const args = this.keywords(')')
      if (args) return { t: 'call', name: call[1]!, args }
      this.i = start
      return { t: 'bare', v: this.bareText() }
    }
    const word = this.bareText()
    if (word === 'True' || word === 'False') return { t: 'bool', v: word === 'True' }
    if (word === 'None') return { t: 'none' }
    if (/^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/.test(word)) return { t: 'num', v: word }
    return { t: 'bare', v: word }
  }

  /** `name=value, …` until `close` (or the end when `close` is null). */
  keywords(close: string | null): Array<[string, Py]> | undefined {
    const out: Array<[string, Py]> = []
    for (;;) {
      this.space()
      if (close !== null && this.s[this.i] === close) {
        this.i++
        return out
      }
      if (this.i >= this.s.length) return close === null ? out : undefined
      const m = /^([A-Za-z_]\w*)\s*=(?!=)/.exec(this.s.slice(this.i, this.i + 200))
      if (!m) return undefined
      this.i += m[0].length
      out.push([m[1]!, this.value()])
      this.space()
      if (this.s[this.i] === ',') this.i++
      else if (close !== null ? this.s[this.i] !== close : this.i < this.s.length) return undefined
    }
  }
}

/** A Python dict repr (`{'a': 1, …}`) at the start of `text`; undefined when it is not one. */
export function readPyDict(text: string): Py | undefined {
  const r = new Reader(text)
  r.space()
  if (r.s[r.i] !== '{') return undefined
  const v = r.value()
  return v.t === 'dict' ? v : undefined
}

/** A dataclass repr (`Name(a=1, …)`) of class `name` at the start of `text`. */
export function readPyCall(text: string, name: string): Py | undefined {
  const r = new Reader(text)
  r.space()
  const v = r.value()
  return v.t === 'call' && v.name === name ? v : undefined
}

/** `key=value, key=value` to the end of `text` (VllmConfig.__str__), as a call's arguments; undefined when it is not that. */
export function readPyKeywords(text: string): Py | undefined {
  const r = new Reader(text)
  const args = r.keywords(null)
  return args ? { t: 'call', name: '', args } : undefined
}

/** The value at a dotted path (`a.b`) through dicts (by string key) and calls (by argument). */
export function pyAt(v: Py, path: string): Py | undefined {
  let at: Py | undefined = v
  for (const key of path.split('.')) {
    if (!at) return undefined
    if (at.t === 'dict') at = at.v.find(([k]) => k.t === 'str' && k.v === key)?.[1]
    else if (at.t === 'call') at = at.args.find(([k]) => k === key)?.[1]
    else return undefined
  }
  return at
}

/** A value as text the way str() prints it: a string bare, True/False/None, a number as written. */
export function pyText(v: Py): string {
  switch (v.t) {
    case 'str':
      return v.v
    case 'num':
    case 'bare':
      return v.v
    case 'bool':
      return v.v ? 'True' : 'False'
    case 'none':
      return 'None'
    case 'list':
      return `[${v.v.map(pyText).join(', ')}]`
    case 'dict':
      return `{${v.v.map(([k, x]) => `${pyText(k)}: ${pyText(x)}`).join(', ')}}`
    case 'call':
      return `${v.name}(${v.args.map(([k, x]) => `${k}=${pyText(x)}`).join(', ')})`
  }
}
