// The engine profile and knob catalog a run uses: `--engine radiance|vllm|sglang|llama.cpp` (a
// built-in, shipped beside this module as YAML) or `--engine FILE` (a whole profile), and
// `--catalog FILE` (knobs added to the profile's, or replacing one of the same name). Every file
// is read under the hostile-YAML rules of every file a person hands armproof
// (../schema/yaml-file.ts), checked whole against ./doc.ts's schema and ./convert.ts's checks, and
// refused with every problem at once, each with its file, line and key. Nothing is contacted.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { problemsOf, type Infer, type Problem } from '../schema/schema.ts'
import { lineOf, parseYamlFile, readBounded, type YamlFile } from '../schema/yaml-file.ts'
import { CATALOG_DOC, PROFILE_DOC, type KnobDoc, type ProfileDoc } from './doc.ts'
import { engineOf, knobOf } from './convert.ts'
import type { Engine, KnobSpec } from './types.ts'

export const BUILTIN_PROFILES = ['radiance', 'vllm', 'sglang', 'llama.cpp'] as const
export type BuiltinProfile = (typeof BUILTIN_PROFILES)[number]

/** A profile or catalog file larger than this is not one (the built-in vLLM profile is a few KiB). */
export const MAX_PROFILE_BYTES = 256 * 1024

export function isBuiltinProfile(name: string): name is BuiltinProfile {
  return (BUILTIN_PROFILES as readonly string[]).includes(name)
}

/** One knob as the run carries it: its entry as written, and as the steps read it. */
export interface LoadedKnob {
  doc: KnobDoc
  spec: KnobSpec
  /** Where it was defined: the profile, or the catalog file that added or replaced it. */
  from: string
}

export interface LoadedProfile {
  /** The profile as written, its knobs with a catalog's added: what a target, a recording and a report carry. */
  doc: ProfileDoc
  engine: Engine
  knobs: ReadonlyMap<string, LoadedKnob>
  /** The profile's file as the operator named it, or `built-in <name>`. */
  from: string
}

/** A problem of a profile or catalog file: its file, the line, and the key it is about. */
export interface FileProblem {
  file: string
  line?: number
  key?: string
  message: string
}

export function problemText(p: FileProblem): string {
  return `${p.file}${p.line !== undefined ? `:${p.line}` : ''}: ${p.key ? `${p.key} ` : ''}${p.message}`
}

/** `knobs.X.off[1]` → ['knobs', 'X', 'off', 1]. */
function segments(path: string): (string | number)[] {
  const out: (string | number)[] = []
  for (const part of path.split('.')) {
    const m = /^([^[]*)((?:\[\d+\])*)$/.exec(part)
    if (!m) {
      out.push(part)
      continue
    }
    if (m[1]) out.push(m[1])
    for (const i of m[2]!.matchAll(/\[(\d+)\]/g)) out.push(Number(i[1]))
  }
  return out
}

function located(file: string, yaml: YamlFile, problems: readonly Problem[]): FileProblem[] {
  return problems.map((p) => ({ file, line: lineOf(yaml, segments(p.path)), key: p.path || undefined, message: p.problem }) as FileProblem)
}

function readText(path: string, shown: string): { text: string } | { problems: FileProblem[] } {
  const read = readBounded(path, MAX_PROFILE_BYTES, {
    directory: 'give the YAML file',
    tooLarge: 'a profile or catalog is a few KiB of YAML',
  })
  return 'problem' in read ? { problems: [{ file: shown, message: read.problem }] } : read
}

function parsed(text: string, file: string): YamlFile | { problems: FileProblem[] } {
  const y = parseYamlFile(text)
  if ('problems' in y)
    return { problems: y.problems.map((p) => ({ file, ...(p.line !== undefined ? { line: p.line } : {}), message: p.message })) }
  return y
}

/** The paths under `knobs.<name>` that have a problem of shape: those entries are not converted (their problems are said already). */
function brokenKnobs(shape: readonly Problem[]): Set<string> {
  return new Set(shape.flatMap((p) => (p.path.startsWith('knobs.') ? [p.path.slice('knobs.'.length).split(/[.[]/)[0]!] : [])))
}

/** The knobs of a file whose entries fit the schema, converted against `engine`, their problems to `found`. */
function knobsOf(entries: unknown, engine: Engine, broken: ReadonlySet<string>, file: string, found: Problem[]): Map<string, LoadedKnob> {
  const knobs = new Map<string, LoadedKnob>()
  if (!entries || typeof entries !== 'object') return knobs
  for (const [name, k] of Object.entries(entries as Record<string, KnobDoc>))
    if (!broken.has(name)) knobs.set(name, { doc: k, spec: knobOf(k, engine, `knobs.${name}`, found), from: file })
  return knobs
}

/** A profile's text checked and converted; every problem at once (of shape, and of the entries whose shape fits). */
export function profileFromText(text: string, file: string): LoadedProfile | { problems: FileProblem[] } {
  const y = parsed(text, file)
  if ('problems' in y) return y
  return profileFromData(y.data, file, (found) => located(file, y, found))
}

/** A profile's document (as its YAML file reads) checked and converted; `locate` names each problem's file and line. */
function profileFromData(
  data: unknown,
  file: string,
  locate: (found: readonly Problem[]) => FileProblem[],
): LoadedProfile | { problems: FileProblem[] } {
  const shape = problemsOf(PROFILE_DOC, data)
  const found: Problem[] = [...shape]
  if (shape.some((p) => !p.path.startsWith('knobs.'))) return { problems: locate(found) }
  const doc = data as Infer<typeof PROFILE_DOC>
  const { knobs: knobDocs, ...engineDoc } = doc
  const engine = engineOf(engineDoc, found)
  const knobs = knobsOf(knobDocs, engine, brokenKnobs(shape), file, found)
  if (found.length > 0) return { problems: locate(found) }
  return { doc, engine, knobs, from: file }
}

/** A catalog's text, its knobs checked against `profile`'s engine, added to (or replacing) the profile's. */
export function withCatalog(profile: LoadedProfile, text: string, file: string): LoadedProfile | { problems: FileProblem[] } {
  const y = parsed(text, file)
  if ('problems' in y) return y
  const shape = problemsOf(CATALOG_DOC, y.data)
  const found: Problem[] = [...shape]
  if (shape.some((p) => !p.path.startsWith('knobs.'))) return { problems: located(file, y, found) }
  const added = knobsOf((y.data as { knobs: unknown }).knobs, profile.engine, brokenKnobs(shape), file, found)
  if (found.length > 0) return { problems: located(file, y, found) }
  const knobs = new Map([...profile.knobs, ...added])
  return { ...profile, doc: { ...profile.doc, knobs: Object.fromEntries([...knobs].map(([n, k]) => [n, k.doc])) }, knobs }
}

/** A built-in profile's YAML file (`<name>.yaml` beside this module) as its document: what ./builtin.json holds for it. */
export function builtinProfileData(name: BuiltinProfile): unknown {
  const y = parsed(readFileSync(new URL(`./${name}.yaml`, import.meta.url), 'utf8'), `${name}.yaml`)
  if ('problems' in y) throw new Error(`the built-in ${name} profile is not YAML armproof reads: ${y.problems.map(problemText).join('; ')}`)
  return y.data
}

/**
 * The built-in profiles' documents as ./builtin.json holds them, written from their YAML files by
 * `pnpm faults-doc` (test/profiles/load.test.ts keeps the two equal): a run reads this JSON
 * instead of parsing YAML (some 10 ms of CPU in every `pnpm verify` process otherwise).
 */
export function builtinProfilesJson(): string {
  return `${JSON.stringify(Object.fromEntries(BUILTIN_PROFILES.map((name) => [name, builtinProfileData(name)])), null, 2)}\n`
}

/** A built-in profile from its document (builtinProfileData, or ./builtin.json's entry); a problem throws. */
export function builtinFromData(name: BuiltinProfile, data: unknown): LoadedProfile {
  const file = `built-in ${name}`
  // No lines for a problem here: the document is the YAML file as builtinProfileData read it, lines and all.
  const loaded = profileFromData(data, file, (found) =>
    found.map((p) => ({ file, key: p.path || undefined, message: p.problem }) as FileProblem),
  )
  if ('problems' in loaded) throw new Error(`the built-in ${name} profile does not load: ${loaded.problems.map(problemText).join('; ')}`)
  return loaded
}

let builtinDocs: Record<string, unknown> | undefined
const builtins = new Map<string, LoadedProfile>()

/** A built-in profile, from ./builtin.json (a bug in it throws: the tests load each one). */
export function builtinProfile(name: BuiltinProfile): LoadedProfile {
  const known = builtins.get(name)
  if (known) return known
  builtinDocs ??= JSON.parse(readFileSync(new URL('./builtin.json', import.meta.url), 'utf8')) as Record<string, unknown>
  const loaded = builtinFromData(name, builtinDocs[name])
  builtins.set(name, loaded)
  return loaded
}

/** Files already read in this process (a fleet names one file for every target): by path and text. */
const files = new Map<string, { text: string; loaded: LoadedProfile | { problems: FileProblem[] } }>()

/**
 * The profile `--engine` names (a built-in, or a file relative to `cwd`) with `--catalog`'s knobs
 * (a file relative to `cwd`), or every problem of both files.
 */
export function loadProfile(engine: string, catalog: string | null, cwd: string): LoadedProfile | { problems: FileProblem[] } {
  let profile: LoadedProfile | { problems: FileProblem[] }
  if (isBuiltinProfile(engine)) profile = builtinProfile(engine)
  else {
    const read = readText(resolve(cwd, engine), engine)
    if ('problems' in read) return read
    const key = `engine\0${resolve(cwd, engine)}`
    const cached = files.get(key)
    profile = cached?.text === read.text ? cached.loaded : profileFromText(read.text, engine)
    files.set(key, { text: read.text, loaded: profile })
  }
  if (catalog === null) return profile
  const read = readText(resolve(cwd, catalog), catalog)
  if ('problems' in profile) return 'problems' in read ? { problems: [...profile.problems, ...read.problems] } : profile
  if ('problems' in read) return read
  return withCatalog(profile, read.text, catalog)
}

/** `--knob` as given: a catalog name, or the knob's flag (or one of its other spellings) with or without its dashes. */
export function findKnob(knobs: ReadonlyMap<string, LoadedKnob>, text: string): string | undefined {
  if (knobs.has(text)) return text
  const bare = (flag: string): string => flag.replace(/^-+/, '')
  const asked = bare(text)
  if (asked === '') return undefined
  for (const [name, k] of knobs) if ([k.spec.flag, ...(k.spec.aliases ?? [])].some((f) => bare(f) === asked)) return name
  return undefined
}
