// A profile's data (./doc.ts, as written) into what the steps read (./types.ts), with the checks a
// schema of shapes cannot make: a default that fits the knob's type, a regex that compiles, a
// source a knob names that the engine has. Each problem carries its path in the file (`knobs.X.off[1]`)
// so the loader can say the line. Pure.
import type { Problem } from '../schema/schema.ts'
import type { EngineDoc, KnobDoc, SourceDoc } from './doc.ts'
import type { Engine, KnobSpec, KnobType, ProbeWords, SourceSpec } from './types.ts'
import { valueProblem } from './values.ts'

/** A profile that names no words of its own: none of any engine's flags. */
export const NEUTRAL_PROBE_WORDS: ProbeWords = {
  toolSetup: "the server's tool-call settings (its tool parser and the chat template)",
  toolParser: "the server's tool parser for this model, and the chat template",
  visionSetup: 'a vision model, served with image input enabled',
}

/** A value of `allow:` that stands for any whole number the engine resolves `auto` to. */
export const ANY_NUMBER = 'any-number'

const yes = (v: string | undefined): boolean => v === 'true'

const LOG_SHAPES = new Set(['python-dict', 'python-call', 'key-values', 'assignments'])

/** Whether a source is read from the boot log (step ledger) rather than from an endpoint (step meter). */
export function isLogSource(s: Pick<SourceSpec, 'shape'>): boolean {
  return s.shape === 'flag-line' || LOG_SHAPES.has(s.shape)
}

function regexProblem(text: string | undefined, path: string, problems: Problem[]): void {
  if (text === undefined) return
  try {
    new RegExp(text)
  } catch (error) {
    problems.push({ path, problem: `is not a regular expression: ${(error as Error).message}` })
  }
}

function source(doc: SourceDoc): SourceSpec {
  return {
    id: doc.id,
    label: doc.label,
    says: doc.says,
    shape: doc.shape,
    ...(doc.marker !== undefined ? { marker: doc.marker } : {}),
    ...(doc.call !== undefined ? { call: doc.call } : {}),
    ...(yes(doc['omits-defaults']) ? { omitsDefaults: true } : {}),
    ...(yes(doc.auto) ? { auto: true } : {}),
    ...(doc.metric !== undefined ? { metric: doc.metric } : {}),
    ...(doc.paths !== undefined ? { paths: doc.paths } : {}),
    ...(yes(doc.optional) ? { optional: true } : {}),
    ...(doc['printed-at'] !== undefined ? { printedAt: doc['printed-at'] } : {}),
    ...(doc.unverified !== undefined ? { unverified: doc.unverified } : {}),
  }
}

/** The engine of a profile's data; the problems of its fields, each at its path. */
export function engineOf(doc: EngineDoc, problems: Problem[] = []): Engine {
  regexProblem(doc.log?.prefix, 'log.prefix', problems)
  regexProblem(doc.log?.boot, 'log.boot', problems)
  const ids = new Set<string>()
  for (const [i, s] of doc.resolved.entries()) {
    const at = `resolved[${i}]`
    if (ids.has(s.id)) problems.push({ path: `${at}.id`, problem: `${s.id} is given twice; each source has its own id` })
    ids.add(s.id)
    regexProblem(s.marker, `${at}.marker`, problems)
    const need = (key: keyof SourceDoc, why: string) => {
      if (s[key] === undefined) problems.push({ path: `${at}.${key}`, problem: `is required for a ${s.shape} source (${why})` })
    }
    if (LOG_SHAPES.has(s.shape)) need('marker', 'what the message of its log line starts with')
    if (s.shape === 'python-call') need('call', 'the class whose repr it is, e.g. ServerArgs')
    if (s.shape === 'info-metric') need('metric', 'the info gauge on /metrics')
    if (s.shape === 'json') need('paths', 'the endpoint to ask, e.g. [/props]')
    if (s.shape === 'flag-line' && s.marker !== undefined)
      problems.push({ path: `${at}.marker`, problem: 'a flag-line source has no marker: its lines start with the flag' })
  }
  const m = doc.metrics
  const e = m.effect
  return {
    name: doc.name,
    summary: doc.summary,
    verifiedAgainst: doc['verified-against'] ?? null,
    process: doc.process,
    help: {
      command: doc.help.command,
      ...(doc.help.flag !== undefined ? { flag: doc.help.flag } : {}),
      layout: doc.help.layout,
      noneIsUnset: yes(doc.help['none-is-unset']),
    },
    parser: {
      underscoreIsDash: yes(doc.parser['underscore-is-dash']),
      abbreviations: yes(doc.parser.abbreviations),
      lastWins: yes(doc.parser['last-wins']),
      configFlag: doc.parser['config-flag'] ?? null,
      negation: doc.parser.negation ?? null,
      envTwins: yes(doc.parser['env-twins']),
    },
    log: { prefix: doc.log?.prefix ?? null, boot: doc.log?.boot ?? null },
    resolved: doc.resolved.map(source),
    health: { numeric: doc.health.numeric ?? [], equal: doc.health.equal ?? {}, body: doc.health.body ?? 'any' },
    metrics: {
      modelLabel: m['model-label'] ?? null,
      ...(m.requests !== undefined ? { requests: m.requests } : {}),
      ...(m['prompt-tokens'] !== undefined ? { promptTokens: m['prompt-tokens'] } : {}),
      ...(m['generation-tokens'] !== undefined ? { generationTokens: m['generation-tokens'] } : {}),
      ...(m['step-time']
        ? {
            stepTime: {
              steps: m['step-time'].steps,
              stepsDecode: m['step-time']['steps-decode'],
              seconds: m['step-time'].seconds,
              secondsDecode: m['step-time']['seconds-decode'],
            },
          }
        : {}),
      effect: {
        ...(e?.ttft !== undefined ? { ttft: e.ttft } : {}),
        ...(e?.itl !== undefined ? { itl: e.itl } : {}),
        ...(e?.e2e !== undefined ? { e2e: e.e2e } : {}),
        ...(e?.['requests-match'] !== undefined ? { requestsMatch: e['requests-match'] } : {}),
        ...(e?.preemptions !== undefined ? { preemptions: e.preemptions } : {}),
        ...(e?.['prompt-seconds'] !== undefined ? { promptSeconds: e['prompt-seconds'] } : {}),
        ...(e?.['generation-seconds'] !== undefined ? { generationSeconds: e['generation-seconds'] } : {}),
      },
      prefixes: m.prefixes ?? [],
      renamed: Object.fromEntries(
        Object.entries(m.renamed ?? {}).map(([name, was]) => [
          name,
          was.map((w) => ({
            name: w.name,
            ...(w.before !== undefined ? { before: w.before } : {}),
            ...(w.unit !== undefined ? { unit: w.unit } : {}),
          })),
        ]),
      ),
    },
    probes: doc.probes
      ? { toolSetup: doc.probes['tool-setup'], toolParser: doc.probes['tool-parser'], visionSetup: doc.probes['vision-setup'] }
      : NEUTRAL_PROBE_WORDS,
  }
}

function typeOf(doc: KnobDoc): KnobType {
  const min = doc.min === undefined ? 0 : Number(doc.min)
  if (doc.type === 'int') return { kind: 'int', min, ...(doc.unit !== undefined ? { unit: doc.unit } : {}) }
  if (doc.type === 'int-or-auto') return { kind: 'int-or-auto', min }
  return { kind: doc.type }
}

/**
 * One knob of a profile's data (at `path`, e.g. `knobs.MAX_NUM_SEQS`), checked against its
 * engine: its values fit its type, the sources it names are the engine's. The problems go to
 * `problems`, each at its path.
 */
export function knobOf(doc: KnobDoc, engine: Engine, path: string, problems: Problem[] = []): KnobSpec {
  const type = typeOf(doc)
  const say = (key: string, problem: string) => problems.push({ path: `${path}.${key}`, problem })
  if ((doc.type === 'enum' || doc.type === 'bool') && doc.min !== undefined) say('min', `a ${doc.type} knob has no min`)
  if (doc.unit !== undefined && doc.type !== 'int') say('unit', 'only an int knob has a unit')
  const readAs = doc['read-as']
  const typed = { type, ...(readAs ? { readAs } : {}) }
  const fits = (key: string, value: string) => {
    const why = valueProblem(typed, value)
    if (why) say(key, `${JSON.stringify(value)} ${why}`)
  }
  if (doc.default === undefined && doc.type !== 'enum')
    say('default', `is required for a ${doc.type} knob (an enum's default may come from the build's --help)`)
  if (doc.default !== undefined) fits('default', doc.default)
  for (const [i, v] of (doc.off ?? []).entries()) fits(`off[${i}]`, v)
  for (const [k, v] of Object.entries(readAs ?? {}))
    if (valueProblem({ type }, v)) say(`read-as.${k}`, `${JSON.stringify(v)} ${valueProblem({ type }, v)}`)
  for (const [asked, seen] of Object.entries(doc.allow ?? {})) {
    fits(`allow.${asked}`, asked)
    for (const [i, v] of seen.entries()) if (v !== ANY_NUMBER) fits(`allow.${asked}[${i}]`, v)
  }
  if (doc.traffic !== undefined && doc.meter === undefined)
    say('traffic', 'is the traffic its meter needs: a knob without a meter brings none')
  const ids = new Set(engine.resolved.map((s) => s.id))
  for (const id of Object.keys(doc.sources ?? {})) {
    if (!ids.has(id))
      say(`sources.${id}`, `the ${engine.name} profile has no source ${id}; its sources are ${[...ids].join(', ') || 'none'}`)
  }
  if (doc.stats !== undefined && doc.meter !== undefined) say('stats', 'a knob is proven by its meter or by a /stats field, not both')
  if (doc['no-resolved-line'] !== undefined && doc.meter === undefined && doc.stats === undefined)
    say(
      'no-resolved-line',
      'a knob whose engine prints no resolved value needs a meter (or a /stats field) to prove it: argv alone proves only what was asked',
    )
  if (doc['no-resolved-line'] !== undefined && doc.sources !== undefined)
    say('no-resolved-line', 'a knob with sources: has a resolved line; say one or the other')
  // Without sources of its own, a knob is read from the engine's flag-line sources (radiance's ledger) by its flag.
  const sources =
    doc.sources ??
    (doc['no-resolved-line'] !== undefined ? {} : undefined) ??
    Object.fromEntries(engine.resolved.filter((s) => s.shape === 'flag-line').map((s) => [s.id, doc.flag]))
  return {
    env: doc.env,
    flag: doc.flag as `--${string}`,
    ...(doc.aliases ? { aliases: doc.aliases } : {}),
    ...(doc['env-twin'] !== undefined ? { envTwin: doc['env-twin'] } : {}),
    type,
    default: doc.default ?? null,
    passedOnlyWhenNonDefault: yes(doc['passed-only-when-non-default']),
    ...(doc.off ? { off: doc.off } : {}),
    ...(readAs ? { readAs } : {}),
    ...(doc.allow ? { allow: doc.allow } : {}),
    proof: {
      ...(doc.meter ? { meter: { name: doc.meter.name, ...(doc.meter.labels ? { labels: doc.meter.labels } : {}) } } : {}),
      ...(doc.evidence ? { evidence: doc.evidence } : {}),
      ...(doc.stats !== undefined ? { stats: doc.stats } : {}),
      ...(Object.keys(sources).length > 0 ? { sources } : {}),
      ...(doc.traffic ? { traffic: doc.traffic } : {}),
      ...(doc['no-resolved-line'] !== undefined ? { noResolvedLine: doc['no-resolved-line'] } : {}),
    },
    summary: doc.summary ?? '',
  }
}
