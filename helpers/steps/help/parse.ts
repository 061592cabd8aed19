// The pinned build's `--help` (argparse style, or llama.cpp's own layout): does a flag exist,
// which choices and which default does it list, and every flag it lists. Pure.
import type { KnownFlag } from '../../argparse/rules.ts'

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
      ? braces[1]!
          .split(',')
          .map((c) => c.trim())
          .filter(Boolean)
      : listed
        ? listed[1]!
            .split(/[,|]/)
            .map((c) => c.trim().replace(/^['"]|['"]$/g, ''))
            .filter(Boolean)
        : null
    const def = /[([]default:\s*([^)\]]*)[)\]]|^\s*Default:\s*(.+?)\s*$/im.exec(text)
    const rawDefault = def ? (def[1] ?? def[2] ?? '').trim().replace(/^['"]|['"]$/g, '') : null
    return { block: text, choices, default: rawDefault }
  }
  return undefined
}

/**
 * Every option the help text lists, as argparse prints them: an entry line (indented, the option
 * strings joined by ", ", each with its metavar when it takes a value, then the help text after
 * two spaces), and the usage line's `[--flag METAVAR]` groups for options without an entry.
 */
export function listFlags(help: string): KnownFlag[] {
  const flags = new Map<string, boolean>()
  const lines = help.split(/\r?\n/)
  for (const line of lines) {
    if (!/^\s+-/.test(line)) continue
    const invocation = line.trim().split(/\s{2,}/)[0]!
    for (const part of invocation.split(', ')) {
      const m = /^(-{1,2}[A-Za-z0-9][A-Za-z0-9_.-]*)(?:[ =](.+))?$/.exec(part.trim())
      if (m && !flags.has(m[1]!)) flags.set(m[1]!, m[2] !== undefined)
    }
  }
  const usage = /^usage:[\s\S]*?(?:\n\s*\n|$)/.exec(help)?.[0] ?? ''
  for (const m of usage.matchAll(/\[(-{1,2}[A-Za-z0-9][A-Za-z0-9_.-]*)( [^\]|]+)?\]/g))
    if (!flags.has(m[1]!)) flags.set(m[1]!, m[2] !== undefined)
  return [...flags].map(([name, takesValue]) => ({ name, takesValue }))
}

/** One entry of llama.cpp's `--help` (common/arg.cpp): its names at column 0 with their value hint, the help text from column 40, `(env: X)` under it. */
interface LlamaEntry {
  names: Array<{ name: string; takesValue: boolean }>
  block: string
}

function llamaEntries(help: string): LlamaEntry[] {
  const out: LlamaEntry[] = []
  let current: LlamaEntry | undefined
  for (const line of help.split(/\r?\n/)) {
    if (/^-/.test(line)) {
      // `-np,   --parallel N   help…`: names joined by a comma and padding, each maybe with its value hint.
      const names: LlamaEntry['names'] = []
      let rest = line
      for (;;) {
        const m = /^(-{1,2}[A-Za-z0-9][A-Za-z0-9_-]*)((?: [^\s,]+)?)(,\s*)?/.exec(rest)
        if (!m) break
        names.push({ name: m[1]!, takesValue: m[2] !== '' })
        rest = rest.slice(m[0].length)
        if (!m[3]) break
      }
      current = { names, block: line }
      out.push(current)
    } else if (current && /^\s+\S/.test(line)) current.block += `\n${line}`
    else current = undefined
  }
  return out
}

/** llama.cpp's entry defining `flag` (by any of its names), with its printed default (`(default: -1, -1 = auto)` → `-1`). */
export function findLlamaHelpEntry(help: string, flag: string): HelpEntry | undefined {
  const entry = llamaEntries(help).find((e) => e.names.some((n) => n.name === flag))
  if (!entry) return undefined
  const def = /\(default: ([^,)]*)/.exec(entry.block)
  const braces = /\{([^}]*)\}/.exec(entry.block.split('\n')[0]!)
  return {
    block: entry.block,
    choices: braces
      ? braces[1]!
          .split(',')
          .map((c) => c.trim())
          .filter(Boolean)
      : null,
    default: def ? def[1]!.trim() : null,
  }
}

/** Every option llama.cpp's `--help` lists. */
export function listLlamaFlags(help: string): KnownFlag[] {
  const flags = new Map<string, boolean>()
  for (const e of llamaEntries(help))
    for (const n of e.names) if (!flags.has(n.name)) flags.set(n.name, n.takesValue || e.names.some((x) => x.takesValue))
  return [...flags].map(([name, takesValue]) => ({ name, takesValue }))
}
