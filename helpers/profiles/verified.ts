// Whether a real build's captured output backs an engine profile (its `verified-against:`), as the
// report and the terminal say it: a profile no real output backs (SGLang's, radiance's) says so on
// every run that uses it, before any step. Pure.
import type { Engine } from './types.ts'

export interface ProfileCheck {
  name: string
  /** The real build whose captured output the profile was checked against; null: none. */
  verifiedAgainst: string | null
  /** Said when none: in words, with where to learn how to capture one. */
  unverified?: string
}

export function profileCheck(engine: Pick<Engine, 'name' | 'verifiedAgainst'>): ProfileCheck {
  if (engine.verifiedAgainst !== null) return { name: engine.name, verifiedAgainst: engine.verifiedAgainst }
  return {
    name: engine.name,
    verifiedAgainst: null,
    unverified: `the ${engine.name} profile is not verified against a real build: no captured output of a real ${engine.name} backs its facts (docs/real-corpus.md says how to capture one)`,
  }
}
