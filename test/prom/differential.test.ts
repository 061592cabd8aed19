// helpers/prom/parse.ts against independent readings of the same random pages (seeded, test/support/prng.ts):
// - parse-prometheus-text-format (the npm parser) on what it reads right: gauges and untyped
//   families in the common spelling, with escapes, repeated and wide label sets;
// - our own full label reader: the same page with a blank after each '{' (legal in the text
//   format), which the common-spelling reader (label-sets.ts, wide-labels.ts) leaves to it;
// - the meter step's `keep` filter: a kept name's samples are the ones of a full parse.
// A failing case names its seed.
import parseNpm from 'parse-prometheus-text-format'
import { describe, expect, test } from 'vitest'
import { parsePrometheusText, type PromPage, type Sample } from '../../helpers/prom/parse.ts'
import { pick, prng } from '../support/prng.ts'

const FAMILIES = ['g', 'vllm:num_requests_running', 'vllm:kv_cache_usage_perc', 'u', 'radiance:x_seconds_bucket']
const LABELS = ['engine', 'le', 'model_name', 'finished_reason', 'quantile', 'constructor', '__proto__', 'a']
/** Values that are prefixes of each other, escapes, and characters that end other tokens. */
const VALUES = [
  '1',
  '10',
  '1.0',
  '+Inf',
  '0',
  'org/radiance-ref-8b-ft0001',
  'org/radiance-ref-8b-ft0002',
  '',
  'a\\"b',
  'c\\\\d',
  'two\\nlines',
  '}',
  ',',
  '=',
  'x y',
  'é',
  '#',
]
const NUMBERS = ['1', '1.0', '-0', '+5', '1e3', '1.5E-3', '.5', 'NaN', '+Inf', '-Inf', '12345678901234567890', '3.14159265358979323846']

/** One page: runs of samples of one family whose label sets change a label or two at a time, as a real exporter's do. */
function page(seed: number, labels: readonly string[] = LABELS): string {
  const r = prng(seed)
  const lines: string[] = []
  for (const name of FAMILIES.filter(() => r() < 0.8)) {
    lines.push(`# HELP ${name} help of ${name}`, `# TYPE ${name} ${pick(r, ['gauge', 'untyped'])}`)
    const width = r() < 0.1 ? 33 + Math.floor(r() * 8) : Math.floor(r() * 4)
    const names =
      width > 8 ? Array.from({ length: width }, (_, i) => `l${i}`) : [...new Set(Array.from({ length: width }, () => pick(r, labels)))]
    // A wide set is read by wide-labels.ts only when no value has an escape: mostly plain ones there.
    const choices = width > 8 && r() < 0.8 ? VALUES.slice(0, 7) : VALUES
    const values = names.map(() => pick(r, choices))
    // Each series once per family (the npm parser keeps one sample per label set).
    const seen = new Set<string>()
    for (let n = 5 + Math.floor(r() * 40); n > 0; n--) {
      const k = Math.floor(r() * Math.max(names.length, 1))
      if (names.length > 0) values[k] = pick(r, choices)
      const set = names.length === 0 ? '' : `{${names.map((l, i) => `${l}="${values[i]}"`).join(',')}}`
      if (seen.has(set)) continue
      seen.add(set)
      lines.push(`${name}${set} ${pick(r, NUMBERS)}${r() < 0.1 ? ` ${Math.floor(r() * 2e12)}` : ''}`)
    }
  }
  return `${lines.join('\n')}\n`
}

/** A sample as a plain row: name, own label keys in order with their values, value, raw, line, timestamp. */
const row = (s: Sample): unknown[] => [
  s.name,
  Object.entries(s.labels),
  Object.is(s.value, -0) ? '-0' : s.value,
  s.raw,
  s.line,
  s.timestampMs,
]
const rows = (p: PromPage): unknown[] => p.families.map((f) => [f.name, f.samples.map(row)])

const SEEDS = Array.from({ length: 150 }, (_, i) => i + 1)

describe('random pages read the same by independent readers', () => {
  test.each(SEEDS)('seed %i: the npm parser finds the same families, labels, values and timestamps', (seed) => {
    // The npm parser sets the prototype for a label named __proto__: not asked of it.
    const text = page(
      seed,
      LABELS.filter((l) => l !== '__proto__'),
    )
    const ours = parsePrometheusText(text)
    expect(ours.errors, `seed ${seed}`).toEqual([])
    const theirs = parseNpm(text) as Array<{
      name: string
      metrics: Array<{ value: string; labels?: Record<string, string>; timestamp_ms?: string }>
    }>
    const want = theirs.map((f) => [
      f.name,
      f.metrics.map((m) => [m.labels ?? {}, m.value, m.timestamp_ms === undefined ? undefined : Number(m.timestamp_ms)]),
    ])
    const got = ours.families.map((f) => [f.name, f.samples.map((s) => [{ ...s.labels }, s.raw, s.timestampMs])])
    expect(got, `seed ${seed}`).toEqual(want)
  })

  test.each(SEEDS)("seed %i: every label set read in its common spelling equals the full reader's reading of it", (seed) => {
    const text = page(seed)
    const common = parsePrometheusText(text)
    const spaced = parsePrometheusText(text.replaceAll(/^([^#\s{]+)\{/gm, '$1{ '))
    expect(spaced.errors, `seed ${seed}`).toEqual([])
    expect(rows(common), `seed ${seed}`).toEqual(rows(spaced))
    expect(
      common.samples('g').map((s) => s.labels),
      `seed ${seed}`,
    ).toEqual(spaced.samples('g').map((s) => s.labels))
  })

  test.each(SEEDS)("seed %i: a kept name's samples are those of a full parse", (seed) => {
    const text = page(seed)
    const kept = new Set(FAMILIES.filter((_, i) => (seed >> i) & 1))
    const all = parsePrometheusText(text)
    const some = parsePrometheusText(text, { keep: (name) => kept.has(name) })
    expect(some.sampleCount).toBe(all.sampleCount)
    for (const name of FAMILIES)
      expect(some.samples(name).map(row), `seed ${seed} ${name}`).toEqual(kept.has(name) ? all.samples(name).map(row) : [])
  })
})
