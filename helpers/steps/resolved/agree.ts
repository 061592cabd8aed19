// One rule for every source of the effective value an engine offers (its log lines for step
// ledger, its self-describing endpoints for step meter): each must agree with the expected value,
// as the knob reads values (`True` is true, llama.cpp's -1 is auto). A source of what the parser
// resolved and one of what the engine runs are said apart; the step passes on the strongest that
// agrees (what the engine runs over what its parser resolved) and says which. Where the engine
// resolved something other than asked (auto → 4 slots, an fp8 cache falling back to auto), both
// are said, and it is red unless the knob's entry allows it (`allow:`). Pure.
import { ANY_NUMBER } from '../../profiles/convert.ts'
import type { KnobSpec } from '../../profiles/types.ts'
import { canonicalValue } from '../../profiles/values.ts'
import type { SourceReading } from './log-sources.ts'

/** How one source's reading stands against the expected value. */
export type Standing = 'agrees' | 'allowed' | 'differs' | 'silent' | 'unreadable'

export interface SourceRow {
  reading: SourceReading
  standing: Standing
  /** The value as the knob reads it (null: None, left to the engine). */
  value?: string | null
  /** The reading in words: `max_num_seqs=8`, `enable_prefix_caching left out (the parser's default)`. */
  said: string
}

export interface Agreement {
  verdict: 'passed' | 'failed' | 'inconclusive' | 'silent'
  rows: SourceRow[]
  /** The source the step passed on: the engine's own when one agrees, else the parser's. */
  strongest?: SourceRow
  observed: string
  next?: string
}

const SAYS = { parser: 'what the parser resolved', engine: 'what the engine runs' } as const

function rowOf(spec: KnobSpec, expected: string, atDefault: boolean, r: SourceReading): SourceRow {
  const name = r.key
  if (r.state === 'silent')
    return {
      reading: r,
      standing: 'silent',
      said:
        r.problem ??
        (r.source.printedAt
          ? `not printed by this boot (printed only at ${r.source.printedAt}; its absence is no failure)`
          : 'not printed by this boot'),
    }
  if (r.state === 'unreadable') return { reading: r, standing: 'unreadable', said: r.problem ?? 'could not be read' }
  if (r.state === 'no-key') {
    // A source of non-defaults (vLLM's non-default args) leaves a flag at the parser's default out.
    if (r.source.omitsDefaults)
      return { reading: r, standing: atDefault ? 'agrees' : 'differs', value: null, said: `${name} left out (the parser's default)` }
    return { reading: r, standing: 'silent', said: `has no ${name}` }
  }
  const raw = r.raw ?? null
  const auto = r.auto === true ? ' [auto]' : ''
  if (raw === null) {
    // None: the parser left it to the engine; an int-or-auto knob reads that as auto.
    if (spec.type.kind === 'int-or-auto')
      return {
        reading: r,
        standing: expected === 'auto' ? 'agrees' : 'differs',
        value: 'auto',
        said: `${name}=None (left to the engine: auto)`,
      }
    return { reading: r, standing: atDefault ? 'agrees' : 'differs', value: null, said: `${name}=None (left to the engine's default)` }
  }
  const value = canonicalValue(spec, raw)
  const said = `${name}=${raw}${auto}`
  const allowed = (spec.allow?.[expected] ?? []).some((a) => (a === ANY_NUMBER ? /^-?\d+$/.test(value) : canonicalValue(spec, a) === value))
  if (expected === 'auto') {
    if (value === 'auto' || r.auto === true) return { reading: r, standing: 'agrees', value, said }
    return { reading: r, standing: allowed ? 'allowed' : 'differs', value, said }
  }
  if (value === expected && r.auto !== true) return { reading: r, standing: 'agrees', value, said }
  return { reading: r, standing: allowed && r.auto !== true ? 'allowed' : 'differs', value, said }
}

/** A row in the observed text: `the engine config line (what the engine runs): kv_cache_dtype=auto`. */
function rowText(row: SourceRow): string {
  return `${row.reading.source.label} (${SAYS[row.reading.source.says]}): ${row.said}${row.reading.olderPath ? ` (from ${row.reading.olderPath}, an older build's name)` : ''}`
}

/**
 * The readings of every source against `expected` (canonical), `atDefault` when that is the
 * knob's default. `silent`: no source said anything (the caller says what it looked for).
 */
export function agree(spec: KnobSpec, expected: string, atDefault: boolean, readings: readonly SourceReading[]): Agreement {
  const rows = readings.map((r) => rowOf(spec, expected, atDefault, r))
  const said = rows.filter((r) => r.standing !== 'silent')
  const differs = rows.filter((r) => r.standing === 'differs')
  const unreadable = rows.filter((r) => r.standing === 'unreadable')
  const held = rows.filter((r) => r.standing === 'agrees' || r.standing === 'allowed')
  const all = said.map(rowText).join('; ')
  if (differs.length > 0) {
    const parser = held.find((r) => r.reading.source.says === 'parser')
    const engineDiffers = differs.some((r) => r.reading.source.says === 'engine')
    const parserDiffers = differs.some((r) => r.reading.source.says === 'parser')
    const seen = differs
      .map((r) => r.value ?? 'its default')
      .filter((v, i, a) => a.indexOf(v) === i)
      .join(' / ')
    const next =
      engineDiffers && !parserDiffers && parser
        ? `the engine resolved ${spec.flag} to ${seen}, not the ${expected} its parser took: it changed what was asked (an unsupported value falling back, a limit of the hardware); check the engine's log around that line, and if ${seen} is what this engine does with ${expected} say so in the catalog (allow: { ${expected}: [${seen}] }), then run again`
        : differs.some((r) => r.reading.auto === true)
          ? `the engine chose ${spec.flag} itself (auto): the explicit ${expected} did not reach it; check argv and the service env (${spec.env}), and redeploy`
          : `the engine resolved ${spec.flag} to ${seen}, not ${expected}: check the service env (${spec.env}) and argv, redeploy, and compare the two`
    return { verdict: 'failed', rows, observed: all, next }
  }
  if (unreadable.length > 0) {
    return {
      verdict: 'inconclusive',
      rows,
      observed: all,
      next: `the engine printed a line this profile cannot read (${unreadable.map((r) => r.reading.source.label).join(', ')}): the build prints it in another shape; fix the profile's resolved: entry (--engine FILE), then run again`,
    }
  }
  if (held.length === 0) return { verdict: 'silent', rows, observed: all }
  // The strongest: what the engine runs, else what its parser resolved; a value over a left-out default.
  const rank = (r: SourceRow) => (r.reading.source.says === 'engine' ? 0 : 2) + (r.reading.state === 'value' ? 0 : 1)
  const strongest = [...held].sort((a, b) => rank(a) - rank(b))[0]!
  const others = said.filter((r) => r !== strongest)
  const allowedNote = held
    .filter((r) => r.standing === 'allowed')
    .map((r) =>
      expected === 'auto'
        ? `auto resolved to ${r.value}, as the catalog allows`
        : `${r.value} where ${expected} was asked, as the catalog allows`,
    )
  const observed = `${rowText(strongest)}${allowedNote.length ? ` (${[...new Set(allowedNote)].join('; ')})` : ''}${others.length ? `; agreeing: ${others.map(rowText).join('; ')}` : ''}`
  return { verdict: 'passed', rows, strongest, observed }
}
