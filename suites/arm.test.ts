// The runbook "Arming a radiance knob on a live endpoint (no bench)", one test per proof step,
// in the contract's order. Each step's judge lives in helpers/steps/; this file says what is
// proven and in which order.
import { afterAll, beforeAll, describe, test } from 'vitest'
import { openRun, prove } from '../helpers/steps/runbook.ts'
import { checkArgv } from '../helpers/steps/argv/judge.ts'
import { checkDropins } from '../helpers/steps/dropins/judge.ts'
import { checkHealth } from '../helpers/steps/health/judge.ts'
import { checkHelp } from '../helpers/steps/help/judge.ts'
import { checkLedger } from '../helpers/steps/ledger/judge.ts'
import { checkMeter, takeBaseline } from '../helpers/steps/meter/judge.ts'
import { checkExact, checkTools, checkVision } from '../helpers/steps/probes/judge.ts'

const run = await openRun()
const { svc, knob } = run.target
const armed = run.target.value ?? 'its default'

afterAll(() => run.close())

describe(`${svc}: ${knob} armed to ${armed}`, () => {
  describe('before believing anything', () => {
    test('no drop-in is left on the unit', (t) => prove(t, run, 'dropins', checkDropins))
  })

  describe('the flag reached the engine', () => {
    test("the pinned build's --help lists the flag", (t) => prove(t, run, 'help', checkHelp))
    test("the engine's command line carries the flag, or rightly lacks it at the default", (t) => prove(t, run, 'argv', checkArgv))
    test('the boot ledger resolved the expected value', (t) => prove(t, run, 'ledger', checkLedger))
  })

  describe('the endpoint serves', () => {
    test('/health answers 200 with in_flight and queue_cap', (t) => prove(t, run, 'health', checkHealth))
  })

  describe.concurrent('behaviour survived', () => {
    beforeAll(() => takeBaseline(run))
    test('it answers the exact word at temperature 0', (t) => prove(t, run, 'probe.exact', checkExact))
    test('it returns a real tool call', (t) => prove(t, run, 'probe.tools', checkTools))
    test('it names the colour of a solid PNG sent as image_url', (t) => prove(t, run, 'probe.vision', checkVision))
  })

  describe("the engine's own counter", () => {
    const atDefault = run.target.value === null || run.target.value === run.spec.default
    const sentence = atDefault ? "the knob's meter stays at zero while traffic flows" : "the knob's meter left zero"
    test(sentence, (t) => prove(t, run, 'meter', checkMeter))
  })
})
