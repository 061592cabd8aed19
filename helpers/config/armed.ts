// What a run arms: the engine profile (`--engine`, a built-in or a file) with `--catalog`'s knobs
// added, the knob in it, the value it should now have and the one before (each checked against
// the knob's type and canonicalised), and the refusal of an arm that changes nothing.
import { canonicalValue, valueProblem, type KnobName } from './knobs.ts'
import {
  BUILTIN_PROFILES,
  findKnob,
  isBuiltinProfile,
  loadProfile,
  problemText,
  type LoadedKnob,
  type LoadedProfile,
} from '../profiles/load.ts'
import { showValue } from './shell.ts'
import type { OptionReader } from './sources.ts'
import { didYouMean } from './suggest.ts'

export interface Armed {
  /** The engine profile, when it loaded. */
  profile: LoadedProfile | undefined
  /** The knob, when the profile knows it. */
  knobName: KnobName | undefined
  entry: LoadedKnob | undefined
  value: string | null
  previous: string | null
}

/** Reads the engine profile, the knob and its two values; every problem is the reader's. `cwd`: where a profile or catalog file is found. */
export function readArmed(read: OptionReader, cwd: string): Armed {
  // The engine profile (--engine: a built-in or a file) and its knobs, with --catalog's added.
  const engineRaw = read.raw('engine')
  const catalogRaw = read.raw('catalog')
  const engineName = engineRaw && engineRaw.value !== '' ? engineRaw.value : 'radiance'
  const catalogName = catalogRaw && catalogRaw.value !== '' ? catalogRaw.value : null
  let profile: LoadedProfile | undefined
  if (!read.refused('engine') && !read.refused('catalog')) {
    const loaded = loadProfile(engineName, catalogName, cwd)
    if ('problems' in loaded) {
      for (const p of loaded.problems) {
        const from = p.file === catalogName ? catalogRaw! : (engineRaw ?? '--engine')
        const notBuiltin = p.file === engineName && p.message === 'no such file' && !isBuiltinProfile(engineName)
        read.problem(
          from,
          notBuiltin
            ? `${showValue(engineName)} is neither a built-in profile (${BUILTIN_PROFILES.join(', ')}) nor a profile file (no such file)`
            : problemText(p),
        )
      }
    } else profile = loaded
  }

  const knobRaw = read.required('knob')
  let knobName: KnobName | undefined
  if (knobRaw && profile) {
    const found = findKnob(profile.knobs, knobRaw.value)
    const names = [...profile.knobs.keys()]
    const whose =
      profile.engine.name === 'radiance' && catalogName === null
        ? ''
        : ` (the ${profile.engine.name} profile${catalogName ? ` and ${catalogName}` : ''})`
    if (found) knobName = found
    else
      read.problem(
        knobRaw,
        `unknown knob ${showValue(knobRaw.value)}${didYouMean(knobRaw.value, names) || ';'} known knobs${whose}: ${names.join(', ')}`,
      )
  }
  const entry = knobName && profile ? profile.knobs.get(knobName) : undefined

  const knobValue = (flag: 'value' | 'previous'): string | null => {
    const r = read.raw(flag)
    if (!r || r.value === '' || !knobName || !entry) return null
    const spec = entry.spec
    const why = valueProblem(spec, r.value)
    if (why) {
      read.problem(r, `${showValue(r.value)} does not fit ${knobName}: ${why}`)
      return null
    }
    return canonicalValue(spec, r.value)
  }
  const value = knobValue('value')
  const previous = knobValue('previous')
  // A no-op arm: --value and --previous both given and the same (an empty one is the default):
  // the run would prove nothing changed and print a rollback line that rolls back nothing.
  const valueRaw = read.raw('value')
  const previousRaw = read.raw('previous')
  if (
    knobName &&
    entry &&
    valueRaw &&
    previousRaw &&
    !read.problems.some((p) => p.option === valueRaw.from || p.option === previousRaw.from)
  ) {
    const fallback = entry.spec.default
    const [v, p] = [value ?? fallback, previous ?? fallback]
    if ((valueRaw.value === '' && previousRaw.value === '') || (v != null && v === p)) {
      const shown = (r: { value: string }) =>
        r.value === '' ? `"" (the default${fallback != null ? `, ${fallback}` : ''})` : showValue(r.value)
      read.problem(
        valueRaw,
        `${shown(valueRaw)} and ${previousRaw.from} ${shown(previousRaw)} are the same ${knobName}: this arm changes nothing, and its rollback line would roll back nothing; give --previous the value the endpoint ran before this deploy (or leave it out for the default)`,
      )
    }
  }

  return { profile, knobName, entry, value, previous }
}
