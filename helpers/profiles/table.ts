// The tables of each engine profile in docs/reference/profiles.md, generated from the profile itself
// (as the proof-steps table is from the step registry): its knobs, and where it reads what the
// engine resolved. `pnpm faults-doc` writes them; test/profiles/doc.test.ts keeps the page equal. Pure.
import type { LoadedProfile } from './load.ts'
import type { KnobSpec } from './types.ts'

const cell = (text: string): string => text.replaceAll('|', '\\|').replaceAll('\n', ' ')
const code = (text: string): string => `\`${cell(text)}\``

function typeText(spec: KnobSpec): string {
  const t = spec.type
  if (t.kind === 'int') return `int ≥ ${t.min}${t.unit ? ` (${t.unit})` : ''}`
  if (t.kind === 'int-or-auto') return `\`auto\` or int ≥ ${t.min}`
  if (t.kind === 'bool') return '`true` / `false`'
  return 'enum (choices from `--help`)'
}

function flagText(spec: KnobSpec, negation: string | null): string {
  const names = [spec.flag, ...(spec.aliases ?? [])]
  if (spec.type.kind === 'bool' && negation !== null) names.push(`${negation}${spec.flag.slice(2)}`)
  return [...names.map(code), ...(spec.envTwin ? [`env ${code(spec.envTwin)}`] : [])].join(' · ')
}

/** One engine's knob table: each knob, how it is written, its default and off values, and what proves it. */
export function knobTable(profile: LoadedProfile): string {
  const { engine } = profile
  const label = new Map(engine.resolved.map((s) => [s.id, s.label]))
  const rows = [...profile.knobs].map(([name, { spec }]) => {
    const sources = Object.entries(spec.proof.sources ?? {})
      .map(([id, key]) => `${cell(label.get(id) ?? id)} ${code(key)}`)
      .join('; ')
    const meter = spec.proof.meter
      ? `${code(
          spec.proof.meter.name +
            (spec.proof.meter.labels
              ? `{${Object.entries(spec.proof.meter.labels)
                  .map(([k, v]) => `${k}="${v}"`)
                  .join(',')}}`
              : ''),
        )}${spec.proof.traffic ? ` (sends its ${spec.proof.traffic} traffic)` : ''}`
      : spec.proof.stats
        ? `/stats ${code(spec.proof.stats)}`
        : '—'
    const off = spec.off ? spec.off.map(code).join(', ') : spec.proof.meter ? `the default` : '—'
    const def = spec.default === null ? 'from `--help`' : code(spec.default)
    const allow = Object.entries(spec.allow ?? {})
      .map(([a, to]) => `${a} → ${to.join(', ')}`)
      .join('; ')
    const read =
      sources ||
      (spec.proof.noResolvedLine !== undefined ? 'none: the engine prints none (step ledger skipped; argv and the meter prove it)' : '—')
    return `| \`${name}\` | ${flagText(spec, engine.parser.negation)} | ${typeText(spec)} | ${def}${spec.passedOnlyWhenNonDefault ? ' (flag passed only when not)' : ''} | ${off} | ${meter} | ${read} | ${allow ? cell(allow) : '—'} | ${cell(spec.summary)} |`
  })
  return [
    '| knob | flag | value | default | meter still at | meter | resolved value read from | resolved otherwise, allowed | what it does |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n')
}

/** One engine's sources: where it prints or serves what it resolved, and what each shows. */
export function sourcesTable(profile: LoadedProfile): string {
  const { engine } = profile
  const where = (s: (typeof engine.resolved)[number]): string =>
    s.shape === 'flag-line'
      ? 'the boot log: a line per flag'
      : s.shape === 'info-metric'
        ? `/metrics: the labels of ${code(s.metric ?? '')}`
        : s.shape === 'json'
          ? `GET ${(s.paths ?? []).map(code).join(', else ')}${s.optional ? ' (when served)' : ''}`
          : `the boot log, after ${code(s.marker ?? '')}${s.printedAt ? ` (printed only at ${cell(s.printedAt)})` : ''}`
  const SHAPE: Record<string, string> = {
    'flag-line': '`--flag VALUE [auto] … bound by X`',
    'python-dict': 'a Python dict repr',
    'python-call': 'a Python dataclass repr',
    'key-values': '`key=value, …` (Python reprs)',
    assignments: '`name = value`',
    'info-metric': 'gauge labels (Python `str()`)',
    json: 'JSON',
  }
  return [
    '| source | shows | where | read as |',
    '|---|---|---|---|',
    ...engine.resolved.map(
      (s) =>
        `| ${cell(s.label)} | ${s.says === 'parser' ? 'what the parser resolved' : 'what the engine runs'}${s.omitsDefaults ? ' (non-defaults only)' : ''}${s.auto ? ' (its own choice)' : ''} | ${where(s)}${s.unverified ? ` (not verified: ${cell(s.unverified)})` : ''} | ${SHAPE[s.shape]} |`,
    ),
  ].join('\n')
}

const BEGIN = (name: string) =>
  `<!-- generated from helpers/profiles/${name}.yaml by \`pnpm faults-doc\`; test/profiles/doc.test.ts keeps it equal -->\n`
const END = '\n<!-- end of the generated profile tables -->'

/** The profiles' page (docs/reference/profiles.md) with each engine's tables regenerated between its markers. */
export function readmeWithProfileTables(readme: string, profiles: readonly LoadedProfile[]): string {
  let out = readme
  for (const p of profiles) {
    const begin = BEGIN(p.engine.name)
    const a = out.indexOf(begin)
    const b = a < 0 ? -1 : out.indexOf(END, a)
    if (a < 0 || b < 0) throw new Error(`docs/reference/profiles.md lacks the markers around the ${p.engine.name} profile's tables`)
    const verified = p.engine.verifiedAgainst
      ? `Checked against a real build: ${cell(p.engine.verifiedAgainst)}.`
      : `**Not verified against a real build**: no captured output of a real ${p.engine.name} backs these facts (every run that uses this profile says so; \`docs/real-corpus.md\` says how to capture one).`
    out = out.slice(0, a + begin.length) + `${verified}\n\n${knobTable(p)}\n\n${sourcesTable(p)}` + out.slice(b)
  }
  return out
}
