// POSIX shell quoting and word splitting: every value armproof puts into a command line that a
// shell (local or remote) will read goes through `quote`.

/** Quotes one word for a POSIX shell so it is passed literally, whatever it holds. */
export function quote(word: string): string {
  if (word === '') return "''"
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word
  return `'${word.replaceAll("'", `'\\''`)}'`
}

export function quoteAll(words: readonly string[]): string {
  return words.map(quote).join(' ')
}

export class ShellWordsError extends Error {
  readonly code = 'ARMPROOF_SHELL_WORDS'
}

/**
 * Splits a string into words as a POSIX shell would (quotes and backslashes), without
 * expanding anything. Used for `--ssh-opts`. Refuses `$`, backticks and unquoted operators,
 * which a shell would expand or act on.
 */
export function splitWords(text: string): string[] {
  const words: string[] = []
  let word = ''
  let inWord = false
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    if (c === "'") {
      const end = text.indexOf("'", i + 1)
      if (end < 0) throw new ShellWordsError('unterminated single quote')
      word += text.slice(i + 1, end)
      inWord = true
      i = end + 1
    } else if (c === '"') {
      i++
      inWord = true
      for (;;) {
        if (i >= text.length) throw new ShellWordsError('unterminated double quote')
        const d = text[i]!
        if (d === '"') break
        if (d === '$' || d === '`') throw new ShellWordsError(`"${d}" would be expanded by a shell; write the value literally`)
        if (d === '\\' && i + 1 < text.length && '"\\$`'.includes(text[i + 1]!)) {
          word += text[i + 1]
          i += 2
          continue
        }
        word += d
        i++
      }
      i++
    } else if (c === '\\') {
      if (i + 1 >= text.length) throw new ShellWordsError('trailing backslash')
      word += text[i + 1]
      inWord = true
      i += 2
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word)
      word = ''
      inWord = false
      i++
    } else if ('$`;&|<>(){}'.includes(c)) {
      throw new ShellWordsError(`"${c}" is a shell operator or expansion; quote it if it is meant literally`)
    } else {
      word += c
      inWord = true
      i++
    }
  }
  if (inWord) words.push(word)
  return words
}

/**
 * A service name, in one place (the options, the report's schema, the recording's): a container or
 * unit name of [A-Za-z0-9_.-] not starting with "-", and never `.` or `..`: it is a path step of
 * the default fixtures folder (`fixtures/<svc>/<knob>`), and `..` would record beside `fixtures/`.
 */
export const SVC_NAME = {
  re: /^(?!\.{1,2}$)(?!-)[A-Za-z0-9_.-]+$/,
  says: 'a service name of [A-Za-z0-9_.-], not starting with "-", not . or ..',
} as const

/** Shows an untrusted value in one line of a message: control characters escaped, long values cut. */
export function showValue(value: string, max = 80): string {
  const shown = JSON.stringify(value.length > max ? `${value.slice(0, max)}…` : value)
  return shown.replace(/[\u007f-\u009f\u2028\u2029]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
