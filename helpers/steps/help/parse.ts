// The pinned build's `--help` (argparse style): does a flag exist, which choices and which
// default does it list. Pure.

export interface HelpEntry {
  /** The option's lines as printed. */
  block: string
  /** Choices listed as `{a,b,c}` (or "choices: a, b"); null when the option lists none. */
  choices: string[] | null
  /** The default as printed (`(default: x)`, `Default: x`, `[default: x]`); null when not printed. */
  default: string | null
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/**
 * The option entry that defines `flag`: a line starting (after indentation and optional short
 * aliases) with the flag. A flag named only in another option's prose does not count.
 */
export function findHelpEntry(help: string, flag: string): HelpEntry | undefined {
  const lines = help.split(/\r?\n/)
  const defines = new RegExp(`^(\\s*)(?:-[A-Za-z0-9], |--[A-Za-z0-9-]+(?: [^,]*)?, )*${escapeRegExp(flag)}(?![A-Za-z0-9_-])`)
  const optionStart = /^\s*-{1,2}[A-Za-z0-9]/
  for (let i = 0; i < lines.length; i++) {
    const m = defines.exec(lines[i]!)
    if (!m) continue
    const indent = m[1]!.length
    const block = [lines[i]!]
    for (let j = i + 1; j < lines.length; j++) {
      const next = lines[j]!
      if (next.trim() === '') break
      const nextIndent = next.length - next.trimStart().length
      if (nextIndent <= indent) break
      if (optionStart.test(next) && nextIndent === indent) break
      block.push(next)
    }
    const text = block.join('\n')
    const afterFlag = lines[i]!.slice(m[0].length)
    const braces = /^[\s=]*\{([^}]*)\}/.exec(afterFlag)
    const listed = /\bchoices?:\s*([^\n)\]]+)/i.exec(text)
    const choices = braces
      ? braces[1]!.split(',').map((c) => c.trim()).filter(Boolean)
      : listed
        ? listed[1]!.split(/[,|]/).map((c) => c.trim().replace(/^['"]|['"]$/g, '')).filter(Boolean)
        : null
    const def = /[([]default:\s*([^)\]]*)[)\]]|^\s*Default:\s*(.+?)\s*$/im.exec(text)
    const rawDefault = def ? (def[1] ?? def[2] ?? '').trim().replace(/^['"]|['"]$/g, '') : null
    return { block: text, choices, default: rawDefault }
  }
  return undefined
}
