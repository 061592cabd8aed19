// argparse's help layout (HelpFormatter on a 80-column fallback terminal: width 78, help at
// column 24) for the Python engines: one entry per action, `(default: …)` appended as
// ArgumentDefaultsHelpFormatter does, entries sorted by option strings as vLLM's SortedHelpFormatter.
import { optionStrings } from './argparse.ts'
import type { OptionSpec } from './argparse.ts'
import { pyStrOf } from './pyrepr.ts'

const WIDTH = 78
const MAX_HELP_POSITION = 24

function metavar(spec: OptionSpec): string {
  if (spec.type?.kind === 'choice') return `{${spec.type.choices.join(',')}}`
  return spec.dest.toUpperCase()
}

export function invocation(spec: OptionSpec): string {
  if (spec.action !== 'store') return optionStrings(spec).join(', ')
  const m = metavar(spec)
  const args = spec.nargs === '+' ? `${m} [${m} ...]` : m
  return spec.strings.map((s) => `${s} ${args}`).join(', ')
}

export function wrap(text: string, width: number): string[] {
  const lines: string[] = []
  for (const paragraph of text.split('\n')) {
    let line = ''
    for (const word of paragraph.split(/\s+/).filter(Boolean)) {
      if (line && line.length + 1 + word.length > width) {
        lines.push(line)
        line = word
      } else line = line ? `${line} ${word}` : word
    }
    lines.push(line)
  }
  return lines
}

/** The entries of one section, `withDefaults` as ArgumentDefaultsHelpFormatter. */
export function formatActions(specs: readonly OptionSpec[], withDefaults: boolean, sorted: boolean): string[] {
  const defaults = (spec: OptionSpec): boolean => withDefaults && spec.dest !== 'help'
  const list = sorted ? [...specs].sort((a, b) => (optionStrings(a).join('\u0000') < optionStrings(b).join('\u0000') ? -1 : 1)) : specs
  const longest = Math.max(0, ...list.map((s) => invocation(s).length + 2))
  const helpPosition = Math.min(longest + 2, MAX_HELP_POSITION)
  const helpWidth = Math.max(WIDTH - helpPosition, 11)
  const out: string[] = []
  for (const spec of list) {
    const head = `  ${invocation(spec)}`
    const help = defaults(spec) ? `${spec.help} (default: ${pyStrOf(spec.default)})` : spec.help
    const body = wrap(help, helpWidth)
    if (head.length <= helpPosition - 2)
      out.push(head.padEnd(helpPosition) + body[0], ...body.slice(1).map((l) => ' '.repeat(helpPosition) + l))
    else out.push(head, ...body.map((l) => ' '.repeat(helpPosition) + l))
  }
  return out
}

/** argparse's `format_help` joins its sections with one blank line and ends with one newline. */
export function joinSections(sections: ReadonlyArray<readonly string[]>): string {
  return `${sections
    .filter((s) => s.length > 0)
    .map((s) => s.join('\n'))
    .join('\n\n')
    .replace(/\n{3,}/g, '\n\n')
    .replace(/^\n+|\n+$/g, '')}\n`
}
