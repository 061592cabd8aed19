// Number tokens of a page: sample values (Go's ParseFloat rules), text-format timestamps
// (integer milliseconds) and OpenMetrics/exemplar timestamps (decimal seconds).

/** Exact powers of ten: an integer below 2^53 times or divided by one of these is correctly rounded (Clinger's fast path). */
export const POW10 = [
  1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
]

const SPECIAL_VALUES = new Map<string, number>([
  ['nan', NaN],
  ['inf', Infinity],
  ['+inf', Infinity],
  ['infinity', Infinity],
  ['+infinity', Infinity],
  ['-inf', -Infinity],
  ['-infinity', -Infinity],
])

/** Decimal float as Go's ParseFloat reads it, minus hex and `_`; NaN/±Inf (any case) only when `specials`. */
export function parseNumber(t: string, specials: boolean): number | undefined {
  let i = 0
  let c = t.charCodeAt(0)
  if (c === 43 || c === 45) c = t.charCodeAt(++i)
  let digits = 0
  while (c >= 48 && c <= 57) {
    digits++
    c = t.charCodeAt(++i)
  }
  if (c === 46) {
    c = t.charCodeAt(++i)
    while (c >= 48 && c <= 57) {
      digits++
      c = t.charCodeAt(++i)
    }
  }
  if (digits === 0) return specials ? SPECIAL_VALUES.get(t.toLowerCase()) : undefined
  if (c === 101 || c === 69) {
    c = t.charCodeAt(++i)
    if (c === 43 || c === 45) c = t.charCodeAt(++i)
    let exp = 0
    while (c >= 48 && c <= 57) {
      exp++
      c = t.charCodeAt(++i)
    }
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
