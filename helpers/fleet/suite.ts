// The suite of a fleet run: one `describe` per target, side by side, each holding the runbook's
// steps as its own tests in the contract's order (the same registry and judges as a one-target
// run). At most `concurrency` targets are in flight: a target waits for a slot before it opens
// its seams, so its budgets (health, meter window, probe and host timeouts) start only when its
// own steps do, and no target's wait or fault eats another's budget.
import { afterAll, beforeAll, describe, test } from 'vitest'
import { knob } from '../config/knobs.ts'
import type { Target } from '../config/load.ts'
import { beforeGroup, type ProofRun } from '../steps/judges.ts'
import { stepGroups, stepTitle } from '../steps/registry.ts'
import { openRun, prove } from '../steps/runbook.ts'
import { slots } from '../seams/slots.ts'

/** What crosses into the suite: plain data (vitest's `provide`). */
export interface FleetSuitePlan {
  /** `refused`: the first-contact line of a target refused before its steps (the suites-from-env path). */
  targets: Array<{ label: string; target: Target; refused?: string }>
  concurrency: number
}

declare module 'vitest' {
  interface ProvidedContext {
    'armproof:fleet': FleetSuitePlan
  }
  interface TaskMeta {
    /** The target's place in the fleet plan. */
    armproofTarget?: number
  }
}

export { slots } from '../seams/slots.ts'

export function defineFleetSuite(plan: FleetSuitePlan): void {
  const gate = slots(plan.concurrency)
  for (const [i, { label, target, refused }] of plan.targets.entries()) {
    if (refused) {
      // Its operator mistake was found on first contact: no step of it is judged.
      describe(label, { meta: { armproofTarget: i } }, () => {
        test('first contact', () => {
          throw new Error(refused)
        })
      })
      continue
    }
    const spec = knob(target.knob)
    const atDefault = target.value === null || target.value === spec.default
    describe(label, { concurrent: true, meta: { armproofTarget: i } }, () => {
      let run: (ProofRun & { close(): Promise<void> }) | undefined
      let release: (() => void) | undefined
      beforeAll(async () => {
        release = await gate.acquire()
        run = await openRun(target)
      })
      afterAll(async () => {
        try {
          await run?.close()
        } finally {
          release?.()
        }
      })
      for (const { group, ids, sideBySide } of stepGroups()) {
        describe(group, { concurrent: sideBySide }, () => {
          beforeAll(() => beforeGroup(run!, group))
          for (const id of ids) {
            test(stepTitle(id, atDefault), { concurrent: sideBySide }, (t) => {
              t.task.meta.armproofTarget = i
              return prove(t, run!, id)
            })
          }
        })
      }
    })
  }
}
