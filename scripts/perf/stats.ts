// Small numeric helpers for the perf script: every measure is repeated and reported as min/median.

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

export function min(xs: readonly number[]): number {
  return xs.length === 0 ? NaN : Math.min(...xs)
}

export function max(xs: readonly number[]): number {
  return xs.length === 0 ? NaN : Math.max(...xs)
}

export interface Spread {
  min: number
  median: number
  max: number
  n: number
}

export function spread(xs: readonly number[]): Spread {
  return { min: min(xs), median: median(xs), max: max(xs), n: xs.length }
}

export function fixed(x: number, digits = 2): string {
  return Number.isFinite(x) ? x.toFixed(digits) : String(x)
}

export function seconds(ms: number, digits = 2): string {
  return `${fixed(ms / 1000, digits)} s`
}

/** "0.68× (min 0.66×)": the median first, as the table reports it. */
export function ratioText(s: Spread, digits = 2): string {
  return `${fixed(s.median, digits)}× (min ${fixed(s.min, digits)}×)`
}
