// The knob catalog: every knob armproof can prove, as data. The catalogs live in the engine
// profiles (helpers/profiles/*.yaml); this module is radiance's, the default engine's, for the
// readers that know no other (a report written before profiles, `armproof effect --knob`). A new
// knob is one catalog entry (and, where it needs one, one reference-engine switch), never a new suite.
import { builtinProfile } from '../profiles/load.ts'
import type { KnobSpec } from '../profiles/types.ts'

export type { KnobProof, KnobSpec, KnobType } from '../profiles/types.ts'
export { canonicalValue, meterStill, valueProblem } from '../profiles/values.ts'

/** A knob's catalog name (`PREFILL_INTERLEAVE`, `MAX_NUM_SEQS`): the profile's, or a catalog file's. */
export type KnobName = string

/** radiance's built-in catalog. */
export const KNOBS: Readonly<Record<string, KnobSpec>> = Object.fromEntries(
  [...builtinProfile('radiance').knobs].map(([name, k]) => [name, k.spec]),
)

export const KNOB_NAMES = Object.keys(KNOBS)

export function isKnobName(name: string): boolean {
  return Object.hasOwn(KNOBS, name)
}

export function knob(name: KnobName): KnobSpec {
  const spec = KNOBS[name]
  if (!spec) throw new Error(`no knob ${name} in radiance's catalog`)
  return spec
}
