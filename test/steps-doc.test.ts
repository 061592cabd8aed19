// The step list exists once (helpers/steps/registry.ts); the README's table and the suite's
// tests are derived from it.
import { readFileSync } from 'node:fs'
import { expect, test } from 'vitest'
import { STEP_IDS, STEPS, stepGroups, stepsTable, stepTitle } from '../helpers/steps/registry.ts'
import { JUDGES } from '../helpers/steps/judges.ts'
import { readmeWithStepsTable } from '../scripts/faults-doc.ts'

test("README.md's proof-steps table is the one generated from the step registry (run pnpm faults-doc after changing it)", () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
  expect(readmeWithStepsTable(readme)).toBe(readme)
  for (const s of STEPS) expect(readme).toContain(`| \`${s.id}\` | ${s.proves} |`)
})

test('the registry holds the contract’s nine steps in order, each with a judge, a section and a sentence', () => {
  expect(STEP_IDS).toEqual(['dropins', 'help', 'argv', 'ledger', 'health', 'probe.exact', 'probe.tools', 'probe.vision', 'meter'])
  expect(Object.keys(JUDGES).sort()).toEqual([...STEP_IDS].sort())
  expect(stepGroups().flatMap((g) => g.ids)).toEqual(STEP_IDS)
  expect(stepGroups().filter((g) => g.sideBySide).flatMap((g) => g.ids)).toEqual(['probe.exact', 'probe.tools', 'probe.vision'])
  expect(stepTitle('meter', true)).toBe("the knob's meter stays at zero while traffic flows")
  expect(stepTitle('meter', false)).toBe("the knob's meter left zero")
  expect(stepsTable().split('\n')).toHaveLength(STEPS.length + 2)
})

test('a step may only ask for inputs that an earlier step gives', () => {
  const givenBy: Record<string, string> = { buildDefault: 'help', buildChoices: 'help', buildFlags: 'help', healthy: 'health', engineProcess: 'argv', baseline: 'probe.exact', model: 'probe.exact' }
  for (const [i, s] of STEPS.entries()) {
    for (const input of s.inputs) expect(STEP_IDS.indexOf(givenBy[input] as never), `${s.id} needs ${input}`).toBeLessThanOrEqual(i)
  }
})
