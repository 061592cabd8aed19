// A `--config FILE` as vLLM's FlexibleArgumentParser turns it into flags: the YAML is read as
// PyYAML's safe_load reads it (YAML 1.1: `yes`/`on` are booleans, `1e3` is a string), and each
// top-level `key: value` becomes `--key str(value)` with Python's str(): `true` a bare `--key`,
// `false` nothing, a list `--key v1 v2`. Pure.
import { isMap, isScalar, isSeq, parseDocument, type Node } from 'yaml'
import type { ConfigArgs } from './resolve.ts'

/** Python's repr of a float (what str() prints): shortest round-trip digits, exponent outside 1e-4 ≤ |x| < 1e16. */
export function pythonFloat(x: number): string {
  if (Number.isNaN(x)) return 'nan'
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf'
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0'
  const [mantissa, e] = x.toExponential().split('e') as [string, string]
  const exp = Number(e)
  const sign = mantissa.startsWith('-') ? '-' : ''
  const digits = mantissa.replace('-', '').replace('.', '')
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`
  const int = digits.slice(0, exp + 1).padEnd(exp + 1, '0')
  const frac = digits.slice(exp + 1)
  return `${sign}${int}.${frac || '0'}`
}

// PyYAML's implicit resolvers for int and float (yaml/resolver.py, YAML 1.1).
const PY_INT = /^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$/
const PY_FLOAT =
  /^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/

const PY_BOOL = /^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$/

/** One scalar as PyYAML types it: a bool, or the text Python's str() prints for it. */
function pyValue(node: Node): { bool: boolean } | { text: string } | undefined {
  if (!isScalar(node)) return undefined
  const v = node.value
  const plain = node.type === 'PLAIN'
  const source = typeof node.source === 'string' ? node.source : String(v)
  // The yaml package's YAML 1.1 also reads y/n as booleans; PyYAML does not.
  if (typeof v === 'boolean') return plain && PY_BOOL.test(source) ? { bool: v } : { text: source }
  if (v === null) return { text: 'None' }
  if (typeof v === 'number' || typeof v === 'bigint') {
    if (plain && PY_INT.test(source)) return { text: String(v) }
    if (plain && PY_FLOAT.test(source)) return { text: pythonFloat(Number(v)) }
    // A number to YAML 1.2 that PyYAML leaves a string (e.g. `1e3`).
    return { text: source }
  }
  return { text: String(v) }
}

/** str() of a value: `True`/`False` for a bool. */
function pyText(v: { bool: boolean } | { text: string }): string {
  return 'bool' in v ? (v.bool ? 'True' : 'False') : v.text
}

/** The file's flags; a problem (one line) when it is not a YAML mapping of flag names to scalars or lists. */
export function configArgs(file: string, text: string): ConfigArgs | { problem: string } {
  // PyYAML builds a dict: a key given twice keeps its first place and takes its last value.
  const doc = parseDocument(text, { version: '1.1', uniqueKeys: false })
  if (doc.errors.length > 0) return { problem: `${file} is not YAML: ${doc.errors[0]!.message.split('\n')[0]}` }
  const root = doc.contents
  if (root === null) return { file, entries: [] }
  if (!isMap(root)) return { problem: `${file} is not a YAML mapping of flag names to values` }
  const entries: ConfigArgs['entries'] = []
  const at = new Map<string, number>()
  const put = (key: string, entry: ConfigArgs['entries'][number] | null) => {
    const i = at.get(key)
    if (i === undefined) {
      at.set(key, entries.length)
      entries.push(entry ?? { words: [], written: '' })
    } else entries[i] = entry ?? { words: [], written: entries[i]!.written }
  }
  for (const pair of root.items) {
    const k = pair.key ? pyValue(pair.key as Node) : undefined
    if (k === undefined || pair.value === null) return { problem: `${file}: an entry that is not \`name: value\`` }
    const key = pyText(k)
    const value = pair.value as Node
    const written = `${key}: ${isScalar(value) && typeof value.source === 'string' ? value.source : String(value)}`
    if (isSeq(value)) {
      const items = value.items.map((n) => pyValue(n as Node))
      if (items.some((x) => x === undefined)) return { problem: `${file}: ${key} is a list of something else than plain values` }
      put(key, { words: [`--${key}`, ...items.map((x) => pyText(x!))], written })
      continue
    }
    if (isMap(value)) return { problem: `${file}: ${key} holds a mapping; only plain values and lists become flags` }
    const v = pyValue(value)
    if (v === undefined) return { problem: `${file}: ${key} has no plain value` }
    // A true boolean is the bare flag, a false one no flag at all.
    if ('bool' in v) {
      put(key, v.bool ? { words: [`--${key}`], written } : null)
      continue
    }
    put(key, { words: [`--${key}`, v.text], written })
  }
  return { file, entries: entries.filter((e) => e.words.length > 0) }
}
