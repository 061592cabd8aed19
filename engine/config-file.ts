// radiance's `--config FILE`, as vLLM's FlexibleArgumentParser reads one: the YAML as PyYAML's
// safe_load reads it, each top-level key a flag (engine/flags.ts puts them before the command line).
import { yaml } from './profiles/yaml.ts'

// PyYAML's YAML 1.1 booleans and ints (what vLLM's config file loader reads): see configWords.
const PY_BOOL = /^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$/
const PY_INT = /^[-+]?(?:0b[0-1_]+|0[0-7_]+|0|[1-9][0-9_]*|0x[0-9a-fA-F_]+)$/

/**
 * A config file's flags as vLLM's FlexibleArgumentParser makes them: each top-level `key: value`
 * becomes `--key str(value)`; `true` a bare `--key`, `false` nothing, a list `--key a b`. Values
 * are Python's str() of what PyYAML reads: an int as its decimal digits, anything else as written
 * (so `1.0` stays "1.0", which an int flag refuses, as vLLM's would).
 */
export function configWords(file: string, text: string): { words: string[] } | { error: string } {
  const { isMap, isScalar, isSeq, parseDocument } = yaml()
  // PyYAML builds a dict: a key given twice keeps its first place and takes its last value.
  const doc = parseDocument(text, { version: '1.1', uniqueKeys: false })
  if (doc.errors.length > 0) return { error: `config file ${file}: not YAML (${doc.errors[0]!.message.split('\n')[0]})` }
  if (doc.contents === null) return { words: [] }
  if (!isMap(doc.contents)) return { error: `config file ${file}: not a mapping of flag names to values` }
  const str = (n: unknown): string | boolean | undefined => {
    if (!isScalar(n)) return undefined
    const source = typeof n.source === 'string' ? n.source : String(n.value)
    if (n.type !== 'PLAIN') return String(n.value)
    if (typeof n.value === 'boolean' && PY_BOOL.test(source)) return n.value
    if (n.value === null) return 'None'
    return typeof n.value === 'number' && PY_INT.test(source) ? String(n.value) : source
  }
  const entries = new Map<string, Array<string | boolean | undefined>>()
  for (const pair of doc.contents.items) {
    const key = str(pair.key)
    const value = isSeq(pair.value) ? pair.value.items.map(str) : [str(pair.value)]
    if (key === undefined || typeof key === 'boolean' || value.some((v) => v === undefined))
      return { error: `config file ${file}: ${String(key)}: only plain values and lists become flags` }
    entries.set(key, value)
  }
  const words: string[] = []
  for (const [key, value] of entries) {
    if (value.length === 1 && typeof value[0] === 'boolean') {
      if (value[0]) words.push(`--${key}`)
      continue
    }
    words.push(`--${key}`, ...value.map((v) => (typeof v === 'boolean' ? (v ? 'True' : 'False') : v!)))
  }
  return { words }
}
