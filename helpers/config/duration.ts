// Durations as operators write them: "15m", "90s", "1h30m", "500ms", or bare seconds ("30").

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }

/** Milliseconds, or undefined when the text is not a duration. */
export function parseDuration(text: string): number | undefined {
  const t = text.trim()
  if (/^\d+(\.\d+)?$/.test(t)) return Math.round(Number(t) * 1000)
  if (!/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(t)) return undefined
  let total = 0
  for (const m of t.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) total += Number(m[1]) * UNIT_MS[m[2]!]!
  return Math.round(total)
}

/** "4m 05s", "12.3s", "850ms": short, for progress lines and reports. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)}s`
  // Rounded to whole seconds first: 17m 59.6s is 18m 00s, never "17m 60s".
  const total = Math.round(ms / 1000)
  return `${Math.floor(total / 60)}m ${String(total % 60).padStart(2, '0')}s`
}

/** A duration as formatDuration shows it ("850ms", "1.2s", "12s", "4m 05s") back to milliseconds; undefined for any other text. */
export function parseShownDuration(text: string): number | undefined {
  const m = /^(?:(\d+)ms|(\d+(?:\.\d)?)s|(\d+)m (\d{2})s)$/.exec(text)
  if (!m) return undefined
  if (m[1] !== undefined) return Number(m[1])
  if (m[2] !== undefined) return Math.round(Number(m[2]) * 1000)
  return Number(m[3]) * 60_000 + Number(m[4]) * 1000
}
