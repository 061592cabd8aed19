// Character classes and the few label-object helpers the scanner's parts share.

export const SPACE = 32
export const TAB = 9
export const QUOTE = 34
export const HASH = 35
export const COMMA = 44
export const EQUALS = 61
export const BACKSLASH = 92
export const LBRACE = 123
export const RBRACE = 125

export const NAME_START = 1
export const NAME_CHAR = 2
export const LABEL_START = 4
export const LABEL_CHAR = 8
const CLASS = new Uint8Array(128)
for (let c = 0; c < 128; c++) {
  const alpha = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95
  const digit = c >= 48 && c <= 57
  CLASS[c] =
    (alpha ? NAME_START | NAME_CHAR | LABEL_START | LABEL_CHAR : 0) |
    (digit ? NAME_CHAR | LABEL_CHAR : 0) |
    (c === 58 ? NAME_START | NAME_CHAR : 0)
}
export const is = (c: number, kind: number): boolean => c >= 0 && c < 128 && (CLASS[c]! & kind) !== 0

export function setLabel(out: Record<string, string>, name: string, value: string): void {
  // A plain assignment to `__proto__` would set the prototype and lose the label.
  if (name === '__proto__') Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true })
  else out[name] = value
}

/** The shared label set of every sample without labels. */
export const NO_LABELS: Readonly<Record<string, string>> = Object.freeze({})
