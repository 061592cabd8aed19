// The tables of each engine profile in docs/reference/profiles.md are generated from the profiles themselves
// (helpers/profiles/table.ts, written by `pnpm faults-doc`): a knob added to a built-in profile, or
// a source renamed, shows on that page or fails here.
import { readFileSync } from 'node:fs'
import { expect, test } from 'vitest'
import { BUILTIN_PROFILES, builtinProfile } from '../../helpers/profiles/load.ts'
import { knobTable, readmeWithProfileTables } from '../../helpers/profiles/table.ts'

const readme = readFileSync(new URL('../../docs/reference/profiles.md', import.meta.url), 'utf8')

test("docs/reference/profiles.md holds every built-in profile's knob and source tables as generated (run pnpm faults-doc after changing a profile)", () => {
  expect(readmeWithProfileTables(readme, BUILTIN_PROFILES.map(builtinProfile))).toBe(readme)
})

test('each built-in knob has its row, under its engine', () => {
  for (const name of BUILTIN_PROFILES) {
    const p = builtinProfile(name)
    const table = knobTable(p)
    for (const knob of p.knobs.keys()) expect(table, `${name} ${knob}`).toContain(`| \`${knob}\` |`)
    const section = readme.slice(readme.indexOf(`helpers/profiles/${name}.yaml by`))
    expect(section.slice(0, section.indexOf('end of the generated profile tables'))).toContain(table)
  }
})

test('a page whose markers are gone is refused, not silently left as it is', () => {
  expect(() => readmeWithProfileTables('# no markers\n', [builtinProfile('vllm')])).toThrow(
    /lacks the markers around the vllm profile's tables/,
  )
})
