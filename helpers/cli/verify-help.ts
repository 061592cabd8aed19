// `verify --help`: the options with their env twins, and each built-in profile's knobs. Its own
// module, with only what the text needs, so that the installed command answers `armproof verify
// --help` without loading verify and the vitest it starts (bin/armproof.ts).
import { helpText } from '../config/options.ts'
import { BUILTIN_PROFILES, builtinProfile } from '../profiles/load.ts'

export function verifyHelp(): string {
  return helpText(BUILTIN_PROFILES.map((name) => [name, [...builtinProfile(name).knobs.keys()]] as const))
}
