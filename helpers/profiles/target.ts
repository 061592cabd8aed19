// The engine and knob a run goes with, from what its target carries: the profile as written
// (./doc.ts; its knobs with a catalog's added), converted once per profile. A recording or a
// report written before profiles carries none: its knob is radiance's.
import { PROFILE_DOC, type ProfileDoc } from './doc.ts'
import { engineOf, knobOf } from './convert.ts'
import { builtinProfile } from './load.ts'
import type { Engine, KnobSpec } from './types.ts'

/** What a target (or a recorded one, or a report's `run.target`) says of its engine and knob. */
export interface CarriesProfile {
  knob: string
  engine?: unknown
}

export interface TargetProfile {
  engine: Engine
  spec: KnobSpec
}

type Converted = { engine: Engine; knobs: Map<string, KnobSpec> } | null
const converted = new WeakMap<object, Converted>()

function convert(doc: object): Converted {
  const known = converted.get(doc)
  if (known !== undefined) return known
  const checked = PROFILE_DOC.check(doc, '')
  let made: Converted = null
  if (checked.ok) {
    const { knobs, ...engineDoc } = checked.value as ProfileDoc
    const engine = engineOf(engineDoc)
    made = { engine, knobs: new Map(Object.entries(knobs).map(([name, k]) => [name, knobOf(k, engine, `knobs.${name}`)])) }
  }
  converted.set(doc, made)
  return made
}

/**
 * The engine and knob spec of `t`; undefined when it carries a profile this armproof cannot read
 * or one without its knob, or carries none and its knob is not radiance's.
 */
export function profileOf(t: CarriesProfile): TargetProfile | undefined {
  const { engine } = t
  if (engine !== undefined && engine !== null) {
    const made = typeof engine === 'object' ? convert(engine) : null
    const spec = made?.knobs.get(t.knob)
    return made && spec ? { engine: made.engine, spec } : undefined
  }
  const radiance = builtinProfile('radiance')
  const k = radiance.knobs.get(t.knob)
  return k ? { engine: radiance.engine, spec: k.spec } : undefined
}

/** As `profileOf`, for a target armproof built itself (its profile was checked when it was loaded). */
export function targetProfile(t: CarriesProfile): TargetProfile {
  const p = profileOf(t)
  if (!p) throw new Error(`the target of knob ${t.knob} carries no profile this armproof can read`)
  return p
}

/** The env twins of every knob of `t`'s profile (llama.cpp's `LLAMA_ARG_*`): the variables that set a flag where the command line does not. */
export function profileEnvTwins(t: CarriesProfile): string[] {
  const { engine } = t
  const specs: KnobSpec[] =
    engine !== undefined && engine !== null
      ? [...((typeof engine === 'object' ? convert(engine) : null)?.knobs.values() ?? [])]
      : [...builtinProfile('radiance').knobs.values()].map((k) => k.spec)
  return [...new Set(specs.flatMap((k) => (k.envTwin ? [k.envTwin] : [])))].sort()
}
