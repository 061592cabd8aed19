// Numbers as a person reads them, in one place: the table, the summary, the pictures, the reasons.

/** A number for a person: latencies in ms or s, others with three significant digits. */
export function amount(v: number | null, unit: string): string {
  if (v === null || !Number.isFinite(v)) return '–'
  if (unit === 's' || unit.startsWith('s/')) {
    const time =
      Math.abs(v) < 0.001 && v !== 0
        ? `${Number((v * 1e6).toPrecision(3))}µs`
        : Math.abs(v) < 1
          ? `${Number((v * 1000).toPrecision(3))}ms`
          : `${Number(v.toPrecision(3))}s`
    return unit === 's' ? time : `${time}${unit.slice(1)}`
  }
  const text = v === 0 ? '0' : Math.abs(v) >= 1000 ? Math.round(v).toLocaleString('en-US') : String(Number(v.toPrecision(3)))
  return `${text}${unit.startsWith('/') ? ` ${unit}` : unit}`
}

/** A relative shift: +12%, -3.5%; `from 0` when the baseline was zero. */
export function pct(x: number | null, fromZero = false): string {
  if (fromZero || (x !== null && !Number.isFinite(x))) return x !== null && x < 0 ? 'to 0' : 'from 0'
  if (x === null) return '–'
  return `${x >= 0 ? '+' : ''}${(x * 100).toFixed(Math.abs(x) < 0.1 ? 1 : 0)}%`
}

/** A p-value: four decimals, or its exponent when smaller. */
export function pValue(p: number): string {
  return p < 1e-12 ? '<1e-12' : p < 1e-4 ? p.toExponential(1) : p.toFixed(4)
}
