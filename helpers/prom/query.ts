// The selector language of the Prometheus source (helpers/steps/meter/prometheus-source.ts): `--prometheus-match`
// parsed and rendered again (never pasted into PromQL), label values quoted so a hostile value
// cannot change the query, and the queries of one poll.
export interface LabelMatcher {
  name: string
  op: '=' | '!=' | '=~' | '!~'
  value: string
}

/** The process collector's start time: which process a scrape read. */
export const PROCESS_START = 'process_start_time_seconds'

export const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
export const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/

/** A PromQL double-quoted string literal for any text: the value can never end the string early. */
export function promString(value: string): string {
  let out = '"'
  for (const ch of value) {
    const c = ch.codePointAt(0)!
    if (ch === '\\') out += '\\\\'
    else if (ch === '"') out += '\\"'
    else if (ch === '\n') out += '\\n'
    else if (ch === '\r') out += '\\r'
    else if (ch === '\t') out += '\\t'
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`
    else out += ch
  }
  return `${out}"`
}

export function renderMatchers(matchers: readonly LabelMatcher[]): string {
  return `{${matchers.map((m) => `${m.name}${m.op}${promString(m.value)}`).join(',')}}`
}

const ESCAPES: Readonly<Record<string, string>> = {
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  '"': '"',
  "'": "'",
}

/**
 * Parses a `--prometheus-match` selector: `{name op "value", …}`, label matchers only (no metric
 * name, no __name__: the meter source sets those). Returns the matchers or why not.
 */
export function parseMatch(text: string): { matchers: LabelMatcher[] } | { error: string } {
  const s = text.trim()
  if (!s.startsWith('{') || !s.endsWith('}'))
    return { error: 'a selector is label matchers in braces, e.g. {job="radiance",instance="gpu-7:8000"}' }
  let i = 1
  const end = s.length - 1
  const matchers: LabelMatcher[] = []
  const ws = (): void => {
    while (i < end && /\s/.test(s[i]!)) i++
  }
  while (true) {
    ws()
    if (i >= end) break
    const name = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(s.slice(i))?.[0]
    if (!name) return { error: `a label name expected at character ${i + 1}` }
    if (name === '__name__')
      return { error: 'the selector may not name the metric (__name__): armproof asks for the meter and traffic names itself' }
    i += name.length
    ws()
    const op = (['=~', '!~', '!=', '='] as const).find((o) => s.startsWith(o, i))
    if (!op) return { error: `an operator (=, !=, =~, !~) expected after ${name}` }
    i += op.length
    ws()
    const quote = s[i]
    if (quote !== '"' && quote !== "'" && quote !== '`') return { error: `a quoted value expected after ${name}${op}` }
    i++
    let value = ''
    while (true) {
      if (i >= end) return { error: `the value of ${name} is not closed` }
      const ch = s[i]!
      if (ch === quote) break
      if (ch === '\n' && quote !== '`') return { error: `the value of ${name} holds a raw newline` }
      if (ch === '\\' && quote !== '`') {
        const e = s[i + 1]
        const hex = e === 'x' ? /^[0-9a-fA-F]{2}/.exec(s.slice(i + 2, i + 4))?.[0] : undefined
        if (hex) {
          value += String.fromCharCode(parseInt(hex, 16))
          i += 4
          continue
        }
        if (e === undefined || ESCAPES[e] === undefined)
          return { error: `the value of ${name} has an escape armproof does not accept (\\${e ?? ''})` }
        value += ESCAPES[e]
        i += 2
        continue
      }
      value += ch
      i++
    }
    i++
    matchers.push({ name, op, value })
    ws()
    if (i < end && s[i] !== ',') return { error: `a comma expected after the value of ${name}` }
    if (i < end) i++
  }
  if (matchers.length === 0) return { error: "an empty selector would take every target's series: name at least one label, e.g. instance" }
  if (!matchers.some((m) => m.op === '=' && m.value !== ''))
    return { error: 'at least one matcher must be label="value" with a value, or the selector may take another target\'s series' }
  return { matchers }
}

/** The default `--prometheus-match`: `{instance="<host:port of --base-url>"}` (the scheme's default port spelled out). */
export function defaultMatch(baseUrl: string): LabelMatcher[] {
  const u = new URL(baseUrl)
  const port = u.port || (u.protocol === 'https:' ? '443' : '80')
  return [{ name: 'instance', op: '=', value: `${u.hostname}:${port}` }]
}

/** A text as a regular expression that matches exactly it (RE2, as PromQL's =~ reads it, and JavaScript alike). */
export const regexQuote = (name: string): string => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** The meter's name after its prefix (`radiance:engine_steps_held_total` → `engine_steps_held_total`). */
const baseName = (name: string): string => name.slice(name.lastIndexOf(':') + 1)

/**
 * What one poll asks, for a window of `windowS` seconds: the raw samples of the selector (a range
 * selector, never an instant query: an instant query sees a series only within the server's
 * --query.lookback-delta, which says nothing about what the target's scrapes carried), and the
 * metadata of the targets the matchers select (`targets`: a match_target selector).
 */
export function buildQueries(
  matchers: readonly LabelMatcher[],
  meterName: string,
  trafficNames: readonly string[],
  windowS: number,
): { selector: string; range: string; targets: string } {
  // `up`: the target's scrapes; process_start_time_seconds: which process each scrape read.
  const names = [`(?:[a-zA-Z_][a-zA-Z0-9_]*:)?${regexQuote(baseName(meterName))}`, ...trafficNames.map(regexQuote), 'up', PROCESS_START]
  const selector = renderMatchers([{ name: '__name__', op: '=~', value: names.join('|') }, ...matchers])
  return { selector, range: `${selector}[${Math.max(1, Math.ceil(windowS))}s]`, targets: renderMatchers(matchers) }
}
