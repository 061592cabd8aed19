// docs/guide/preflight.md's generated tables are the ones generated from the check registry and
// the option tables (run pnpm faults-doc after changing them); .env.example documents every
// PREFLIGHT_ variable; the help lists every check and option.
import { readFileSync } from 'node:fs'
import { expect, test } from 'vitest'
import { preflightGuideWithTables } from '../../scripts/faults-doc.ts'
import { PREFLIGHT_OPTIONS, PREFLIGHT_VERIFY_FLAGS } from '../../helpers/config/options.ts'
import { preflightHelp } from '../../helpers/cli/preflight-help.ts'
import { PREFLIGHT_STEP_IDS } from '../../helpers/steps/preflight/registry.ts'

test('docs/guide/preflight.md holds the tables generated from the registry and the options (pnpm faults-doc)', () => {
  const guide = readFileSync(new URL('../../docs/guide/preflight.md', import.meta.url), 'utf8')
  expect(preflightGuideWithTables(guide)).toBe(guide)
  for (const id of PREFLIGHT_STEP_IDS) expect(guide).toContain(`**\`${id}\`**`)
  for (const o of PREFLIGHT_OPTIONS) expect(guide).toContain(`\`${o.env}\``)
})

test('.env.example documents every PREFLIGHT_ variable', () => {
  const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8')
  for (const o of PREFLIGHT_OPTIONS) expect(example, o.env).toMatch(new RegExp(`^#?\\s*${o.env}=`, 'm'))
})

test('--help lists every check, every option with its env twin, and the exit codes', () => {
  const help = preflightHelp()
  for (const id of PREFLIGHT_STEP_IDS) expect(help).toContain(id)
  for (const o of PREFLIGHT_OPTIONS) expect(help).toMatch(new RegExp(`--${o.flag}\\b[\\s\\S]*?env ${o.env};`))
  for (const flag of PREFLIGHT_VERIFY_FLAGS) expect(help).toContain(`--${flag}`)
  expect(help).toContain('1 not ready: do not deploy')
})
