// The boot ledger: the engine prints what it resolved for each flag, behind log prefixes
// (timestamps, levels, source locations). Pure.

export interface ResolvedLine {
  /** 1-based line number in the ledger output. */
  line: number
  /** The line as printed, without ANSI colour codes. */
  text: string
  value: string
  /** The value was chosen by the engine (`[auto]`). */
  auto: boolean
  /** What bound the value (`bound by X`); null for `bound by None` or when not said. */
  boundBy: string | null
}

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/**
 * Every resolved line for `flag`, oldest first. `podman logs` keeps the logs of earlier boots of
 * the same container, so the last line is the running engine's.
 */
export function findResolved(ledger: string, flag: string): ResolvedLine[] {
  const re = new RegExp(`(?:^|[\\s\\]:])${escapeRegExp(flag)}(?:=|\\s+)("[^"]*"|'[^']*'|[^\\s,;]+)(\\s+\\[auto\\])?`)
  const found: ResolvedLine[] = []
  const lines = ledger.split(/\r?\n/)
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!.replace(ANSI, '')
    const m = re.exec(text)
    if (!m) continue
    const bound = /\bbound by\s+([^\s,;]+)/.exec(text.slice(m.index))
    const boundBy = bound ? bound[1]!.replace(/[.)]+$/, '') : null
    found.push({
      line: i + 1,
      text: text.trim(),
      value: m[1]!.replace(/^["']|["']$/g, ''),
      auto: m[2] !== undefined,
      boundBy: boundBy === null || boundBy === 'None' || boundBy === 'none' || boundBy === 'null' ? null : boundBy,
    })
  }
  return found
}
