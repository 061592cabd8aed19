// The suite of a fleet run: one `describe` per target, side by side, each holding the runbook's
// steps as its own tests in the contract's order (the same registry and judges as a one-target
// run). As many targets are in flight as the run can afford, at most `--concurrency` (./admission.ts):
// a target waits for a slot before it opens its seams, so its budgets (health, meter window, probe
// and host timeouts) start only when its own steps do, and no target's wait or fault eats another's budget.
import { afterAll, beforeAll, describe, test } from 'vitest'
import { meterStill } from '../config/knobs.ts'
import { targetProfile } from '../profiles/target.ts'
import type { Target } from '../config/load.ts'
import { beforeGroup, type ProofRun } from '../steps/judges.ts'
import { stepGroups, stepTitle } from '../steps/registry.ts'
import { openRun, prove } from '../steps/runbook.ts'
import { admission, rememberGate } from './admission.ts'
import { readFileSync } from 'node:fs'
import { liveHttp } from '../seams/http.ts'
import { closePromFleet, openPromFleet } from '../steps/meter/prom-fleet.ts'
import { promFetch } from '../steps/meter/from-prometheus.ts'

/** What crosses into the suite: plain data (vitest's `provide`). */
export interface FleetSuitePlan {
  /** `refused`: the first-contact line of a target refused before its steps (the suites-from-env path). */
  targets: Array<{ label: string; target: Target; refused?: string }>
  /** `--concurrency N`; null: as many as the run can afford (./admission.ts). */
  concurrency: number | null
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

/** The shared Prometheus polls of a live fleet, with their own HTTP client (one per --ca-file), from now until `close`. */
function promFleet(): { close(): Promise<void> } {
  const clients = new Map<string | null, ReturnType<typeof liveHttp>>()
  openPromFleet(Date.now(), (caFile) => {
    let http = clients.get(caFile)
    if (!http) clients.set(caFile, (http = liveHttp(caFile ? { caPem: readFileSync(caFile, 'utf8') } : {})))
    // One answer holds the series of every target asked together.
    return promFetch(http, 256 * 1024 * 1024)
  })
  return {
    async close() {
      closePromFleet()
      await Promise.all([...clients.values()].map((c) => c.close()))
    },
  }
}

export function defineFleetSuite(plan: FleetSuitePlan): void {
  const running = plan.targets.filter((t) => !t.refused).length
  const gate = admission({ cap: plan.concurrency, targets: running })
  rememberGate(gate)
  // Live targets read through Prometheus share its polls, and one wait for a scrape after this moment (helpers/steps/meter/prom-fleet.ts).
  const prom = plan.targets.some((t) => !t.refused && t.target.mode === 'live' && t.target.prometheusUrl) ? promFleet() : undefined
  let open = running
  const done = (): void => {
    if (--open > 0) return
    gate.close()
    void prom?.close()
  }
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
    // The meter's own wording where the value turns the knob's feature off (a rollback, for radiance's knobs).
    const { spec, engine } = targetProfile(target)
    const atDefault = meterStill(spec, target.value)
    const plainHealth = engine.health.numeric.length === 0
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
          done()
        }
      })
      for (const { section, title, ids, sideBySide } of stepGroups()) {
        describe(title, { concurrent: sideBySide }, () => {
          beforeAll(() => beforeGroup(run!, section))
          for (const id of ids) {
            test(stepTitle(id, atDefault, plainHealth), { concurrent: sideBySide }, (t) => {
              t.task.meta.armproofTarget = i
              return prove(t, run!, id)
            })
          }
        })
      }
    })
  }
}
