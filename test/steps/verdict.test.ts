// One green rule (helpers/steps/verdict.ts judgeRun): the verdict verify writes is the verdict
// merge-reports and writeback derive again from the report, for any steps, notes, error,
// interrupt, declared skip and knob; and what writeback refuses is exactly what is not green.
import { describe, expect, test } from 'vitest'
import { loadConfig, type Target } from '../../helpers/config/load.ts'
import { checkReportShape, claimProblem, derivedVerdict, identityProblem } from '../../helpers/report/checked.ts'
import { buildReport } from '../../helpers/report/json.ts'
import { allowedSkips, judgeRun } from '../../helpers/steps/verdict.ts'
import { rederive } from '../../helpers/writeback/report.ts'
import { pick, prng } from '../support/prng.ts'
import { randomSteps, stepsWith } from '../support/shards.ts'

function targetOf(argv: string[]): Target {
  const c = loadConfig({ argv: ['--svc', 'llm-7', '--base-url', 'http://gpu-7:8000', ...argv], env: {} })
  if (!c.ok) throw new Error(c.problems.map((p) => p.message).join('; '))
  return c.target
}

const TARGETS = [
  targetOf(['--knob', 'PREFILL_INTERLEAVE', '--value', '1']),
  targetOf(['--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--no-dropin-check']),
  targetOf(['--knob', 'CHECKPOINT_SLOTS', '--value', '16']),
  targetOf(['--knob', 'STAGER_DEPTH', '--value', '3', '--no-dropin-check']),
]

describe('the one green rule', () => {
  test('every report verify builds is the verdict its own content gives, read back as merge-reports and writeback read it', () => {
    const random = prng(21)
    let green = 0
    for (let i = 0; i < 600; i++) {
      const target = pick(random, TARGETS)
      const steps = randomSteps(random, pick(random, [0, 0.05, 0.2]))
      const roll = random()
      const report = buildReport({
        target,
        steps,
        startedAt: new Date(0),
        finishedAt: new Date(1000),
        ...(roll < 0.1
          ? { unhandled: ['unhandled error: boom'] }
          : roll < 0.15
            ? { error: 'vitest did not start' }
            : roll < 0.2
              ? { interrupted: pick(random, ['SIGINT', 'SIGTERM'] as const) }
              : {}),
      })
      const shape = checkReportShape(JSON.parse(JSON.stringify(report)))
      if ('problem' in shape) throw new Error(shape.problem)
      const label = `case ${i}: ${report.verdict} ${report.steps.map((s) => `${s.id}=${s.verdict}${s.intendedSkip ? '*' : ''}`).join(' ')} skips=${report.run!.skips.join(',')} ${report.knob}`
      expect(claimProblem(shape.report), label).toBeNull()
      expect(identityProblem(shape.report), label).toBeNull()
      if (report.verdict !== 'interrupted') expect(derivedVerdict(shape.report).verdict, label).toBe(report.verdict)
      // Writeback refuses exactly what is not green.
      expect(rederive(shape.report).length === 0, label).toBe(report.verdict === 'green')
      if (report.verdict === 'green') green++
    }
    expect(green).toBeGreaterThan(50)
  })

  test('a skip is green only when marked and allowed: the knob implies it (a knob without a meter) or the run declares it', () => {
    const judge = (proof: Parameters<typeof allowedSkips>[0], declared: string[], verdicts: Record<string, 'skipped'>, marked: string[]) =>
      judgeRun({ steps: stepsWith(verdicts, marked), allowed: allowedSkips(proof, declared) }).verdict
    const meterless = {}
    const metered = { meter: { name: 'radiance:engine_steps_held_total' } }
    expect(judge(meterless, [], { meter: 'skipped' }, ['meter'])).toBe('green')
    expect(judge({ stats: 'stager.depth' }, [], { meter: 'skipped' }, ['meter'])).toBe('inconclusive')
    expect(judge(metered, [], { meter: 'skipped' }, ['meter'])).toBe('inconclusive')
    expect(judge(metered, ['dropins'], { dropins: 'skipped' }, ['dropins'])).toBe('green')
    expect(judge(metered, ['dropins'], { dropins: 'skipped' }, [])).toBe('inconclusive')
    expect(judge(metered, [], { dropins: 'skipped' }, ['dropins'])).toBe('inconclusive')
    expect(judge(metered, ['probe.vision'], { 'probe.vision': 'skipped' }, ['probe.vision'])).toBe('green')
    expect(judge(metered, ['probe.vision'], { 'probe.tools': 'skipped' }, ['probe.tools'])).toBe('inconclusive')
  })

  test('a step given twice, or one missing, is never green; a failed step is red whatever else', () => {
    const all = stepsWith()
    expect(judgeRun({ steps: [...all, all[8]!], allowed: new Set() }).verdict).toBe('inconclusive')
    expect(judgeRun({ steps: all.slice(1), allowed: new Set() }).verdict).toBe('inconclusive')
    expect(judgeRun({ steps: stepsWith({ argv: 'failed' }).slice(2), allowed: new Set() }).verdict).toBe('red')
    expect(judgeRun({ steps: all, allowed: new Set(), error: 'x' }).verdict).toBe('error')
    expect(judgeRun({ steps: all, allowed: new Set(), notes: ['y'] }).verdict).toBe('inconclusive')
  })
})
