// Python's repr() for the values the engines print: what `logger.info("non-default args: %s", d)`
// and `f"{server_args=}"` write. Strings quote as Python does (single quotes unless the text holds
// one and no double quote), floats as Python's shortest repr (0.9, 1e-05, 1e+16), True/False/None.

/** A dataclass instance: repr'd as `Name(field=value, …)`. */
export class PyObject {
  readonly className: string
  readonly fields: ReadonlyArray<readonly [string, PyValue]>
  constructor(className: string, fields: ReadonlyArray<readonly [string, PyValue]>) {
    this.className = className
    this.fields = fields
  }
}

/** A value as Python holds it: a float stays a float even when integral (`PyFloat(2)` → `2.0`). */
export class PyFloat {
  readonly value: number
  constructor(value: number) {
    this.value = value
  }
}

export type PyValue = null | boolean | number | string | PyFloat | PyObject | readonly PyValue[] | { readonly [key: string]: PyValue }

export function pyStr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'"
  let out = quote
  for (const ch of text) {
    const code = ch.codePointAt(0)!
    if (ch === '\\') out += '\\\\'
    else if (ch === quote) out += `\\${quote}`
    else if (ch === '\n') out += '\\n'
    else if (ch === '\r') out += '\\r'
    else if (ch === '\t') out += '\\t'
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`
    else if (code >= 0x80 && code < 0xa0) out += `\\x${code.toString(16)}`
    else out += ch
  }
  return out + quote
}

/** Python's float repr: the shortest round-trip digits, fixed for exponents -4..15, else `d.ddde±XX`. */
export function pyFloatRepr(n: number): string {
  if (Number.isNaN(n)) return 'nan'
  if (n === Infinity) return 'inf'
  if (n === -Infinity) return '-inf'
  if (n === 0) return Object.is(n, -0) ? '-0.0' : '0.0'
  const [mantissa, expText] = n.toExponential().split('e') as [string, string]
  const exp = Number(expText)
  const negative = mantissa.startsWith('-')
  const digits = mantissa.replace('-', '').replace('.', '')
  const sign = negative ? '-' : ''
  if (exp >= -4 && exp < 16) {
    if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`
    const whole = digits.padEnd(exp + 1, '0')
    const int = whole.slice(0, exp + 1)
    const frac = whole.slice(exp + 1)
    return `${sign}${int}.${frac || '0'}`
  }
  const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits
  return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`
}

export function pyRepr(value: PyValue): string {
  if (value === null) return 'None'
  if (value === true) return 'True'
  if (value === false) return 'False'
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : pyFloatRepr(value)
  if (typeof value === 'string') return pyStr(value)
  if (value instanceof PyFloat) return pyFloatRepr(value.value)
  if (value instanceof PyObject) return `${value.className}(${value.fields.map(([k, v]) => `${k}=${pyRepr(v)}`).join(', ')})`
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`
  return `{${Object.entries(value)
    .map(([k, v]) => `${pyStr(k)}: ${pyRepr(v as PyValue)}`)
    .join(', ')}}`
}

/** Python's str(): what `f"{x}"` and `str(v)` print (a str unquoted, everything else as repr). */
export function pyStrOf(value: PyValue): string {
  return typeof value === 'string' ? value : pyRepr(value)
}
