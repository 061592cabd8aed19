// The step list exists once (helpers/steps/registry.ts); docs/reference/steps.md's table and the suite's
// tests are derived from it.
import { readFileSync } from 'node:fs'
import { expect, test } from 'vitest'
import { formatProblems, loadConfig } from '../../helpers/config/load.ts'
import { openSeams } from '../../helpers/seams/open.ts'
import { targetForRun } from '../../helpers/seams/recording.ts'
import { createContext } from '../../helpers/steps/context.ts'
import { STEP_IDS, STEPS, stepGroups, stepsTable, stepTitle, type StepGroup, type StepId } from '../../helpers/steps/registry.ts'
import { BEFORE_GROUP, JUDGES, beforeGroup, judgeStep, modelOf, proofRun } from '../../helpers/steps/judges.ts'
import { readmeWithStepsTable } from '../../scripts/faults-doc.ts'
import { DEMO_ARM } from '../support/demo-args.ts'

test("docs/reference/steps.md's proof-steps table is the one generated from the step registry (run pnpm faults-doc after changing it)", () => {
  const readme = readFileSync(new URL('../../docs/reference/steps.md', import.meta.url), 'utf8')
  expect(readmeWithStepsTable(readme)).toBe(readme)
  for (const s of STEPS) expect(readme).toContain(`| \`${s.id}\` | ${s.proves} |`)
})

test('the registry holds the contract’s ten steps in order, each with a judge, a section and a sentence', () => {
  // The contract's nine, then the one-flag law's step, appended so the earlier ids keep their order.
  expect(STEP_IDS).toEqual([
    'dropins',
    'help',
    'argv',
    'ledger',
    'health',
    'probe.exact',
    'probe.tools',
    'probe.vision',
    'meter',
    'one-flag',
  ])
  expect(Object.keys(JUDGES).sort()).toEqual([...STEP_IDS].sort())
  expect(stepGroups().flatMap((g) => g.ids)).toEqual(STEP_IDS)
  expect(
    stepGroups()
      .filter((g) => g.sideBySide)
      .flatMap((g) => g.ids),
  ).toEqual(['probe.exact', 'probe.tools', 'probe.vision'])
  expect(stepTitle('meter', true)).toBe("the knob's meter stays at zero while traffic flows")
  expect(stepTitle('meter', false)).toBe("the knob's meter left zero")
  expect(stepsTable().split('\n')).toHaveLength(STEPS.length + 2)
})

/**
 * What each step finds handed on when it starts, read from the judges themselves: the committed demo
 * recording replayed through the registry's groups as the suite runs them (each section's work
 * before its steps first; side-by-side steps all start from what was given before their section).
 */
async function givenBeforeEachStep(groups: readonly StepGroup[] = stepGroups()): Promise<Map<StepId, string[]>> {
  const config = loadConfig({
    argv: [...DEMO_ARM, '--mode', 'replay'],
    env: { VERIFY_NO_DOTENV: '1' },
  })
  if (!config.ok) throw new Error(formatProblems(config.problems))
  const replayed = targetForRun(config.target)
  if ('problems' in replayed) throw new Error(formatProblems(replayed.problems))
  const seams = await openSeams(replayed.target)
  const run = proofRun(createContext({ target: replayed.target, ...seams }))
  const before = new Map<StepId, string[]>()
  for (const { section, ids, sideBySide } of groups) {
    await beforeGroup(run, section)
    const handedOn = (id: StepId): void => void before.set(id, Object.keys(run.given).sort())
    const judge = async (id: StepId): Promise<void> => {
      const result = await judgeStep(run, id, stepTitle(id, false))
      // A step that did not pass may hand on less than it would: the run must be the green one. The
      // demo recording has no earlier record of its service: its one-flag step is skipped on purpose, saying so.
      if (id === 'one-flag') expect([result.verdict, result.intendedSkip], result.observed).toEqual(['skipped', true])
      else expect(result.verdict, `${id}: ${result.observed}`).toBe('passed')
    }
    if (sideBySide) {
      ids.forEach(handedOn)
      await Promise.all(ids.map(judge))
    } else {
      for (const id of ids) {
        handedOn(id)
        await judge(id)
      }
    }
  }
  await seams.close({ model: await modelOf(run) })
  return before
}

test('a step may only ask for inputs that an earlier step gives (as the judges give them, not a copy)', async () => {
  const before = await givenBeforeEachStep()
  expect([...before.keys()]).toEqual(STEP_IDS)
  // Every input some step declares is handed on by the time the last step starts.
  const declared = [...new Set(STEPS.flatMap((s) => s.inputs))].sort()
  expect(before.get('one-flag')).toEqual(expect.arrayContaining(declared))
  for (const s of STEPS) {
    const given = before.get(s.id)!
    for (const input of s.inputs)
      expect(
        given,
        `${s.id} declares ${input}, which no step before it gives (given before ${s.id}: ${given.join(', ') || 'nothing'})`,
      ).toContain(input)
  }
})

test("a section's work before its steps is keyed by the section's id, never its title: a reworded title keeps the baseline", async () => {
  const groups = stepGroups()
  for (const key of Object.keys(BEFORE_GROUP)) {
    expect(groups.map((g) => g.section)).toContain(key)
    expect(
      groups.map((g) => g.title),
      `${key} is a title: rewording it would drop its work`,
    ).not.toContain(key)
  }
  // The suite's walk with every title reworded: the probes still start from the meter's baseline.
  const before = await givenBeforeEachStep(groups.map((g) => ({ ...g, title: `reworded: ${g.title}` })))
  for (const id of ['probe.exact', 'probe.tools', 'probe.vision', 'meter'] as const) expect(before.get(id)).toContain('baseline')
  // A title is refused where a section is meant (tsc, inside pnpm test, checks this line).
  // @ts-expect-error a runbook title is not a section id
  expect(BEFORE_GROUP['behaviour survived']).toBeUndefined()
})
