// The runbook "Arming a radiance knob on a live endpoint (no bench)", one test per proof step,
// in the contract's order. The steps, their sections and sentences are the registry's
// (helpers/steps/registry.ts); each judge lives in helpers/steps/<id>/. A fleet run
// (`pnpm verify --targets FILE`) gives each target its own describe (helpers/fleet/suite.ts).
import { afterAll, beforeAll, describe, inject, test } from 'vitest'
import { defineFleetSuite } from '../helpers/fleet/suite.ts'
import { beforeGroup } from '../helpers/steps/judges.ts'
import { stepGroups, stepTitle } from '../helpers/steps/registry.ts'
import { openRun, prove } from '../helpers/steps/runbook.ts'
import { meterStill } from '../helpers/config/knobs.ts'

const fleet = inject('armproof:fleet')
if (fleet) {
  defineFleetSuite(fleet)
} else {
  const run = await openRun()
  const { target, spec, engine } = run.ctx
  const armed = target.value ?? 'its default'
  // The meter's own wording where the value turns the knob's feature off (a rollback, for radiance's knobs).
  const atDefault = meterStill(spec, target.value)

  afterAll(() => run.close())

  describe(`${target.svc}: ${target.knob} armed to ${armed}`, () => {
    for (const { section, title, ids, sideBySide } of stepGroups()) {
      const describeSection = sideBySide ? describe.concurrent : describe
      describeSection(title, () => {
        beforeAll(() => beforeGroup(run, section))
        for (const id of ids) test(stepTitle(id, atDefault, engine.health.numeric.length === 0), (t) => prove(t, run, id))
      })
    }
  })
}
