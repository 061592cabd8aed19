// Runs the nine proof steps in this process against a reference engine: the same configuration
// (loadConfig, as `pnpm verify` reads flags and env), the same live seams, the same judges in the
// registry's order (probes side by side, the meter's baseline before them), the same report and
// exit code, without starting a vitest run per case. A judge that throws is judged as the suite's
// reporter judges a crashed test (crashedStep). The wiring of `pnpm verify` itself is proven by
// the end-to-end rows of the fault matrix and test/e2e/verify.test.ts.
import type { EngineHandle } from '../../engine/launch.ts'
import { formatProblems, loadConfig } from '../../helpers/config/load.ts'
import { buildReport, type Report } from '../../helpers/report/json.ts'
import { crashedStep } from '../../helpers/report/collect.ts'
import { truthTable } from '../../helpers/report/truth.ts'
import { plannedReads } from '../../helpers/steps/host-reads.ts'
import { openSeams } from '../../helpers/seams/open.ts'
import { targetForRun } from '../../helpers/seams/recording.ts'
import { createContext } from '../../helpers/steps/context.ts'
import { meterStill } from '../../helpers/config/knobs.ts'
import { beforeGroup, judgeStep, modelOf, proofRun, type ProofRun } from '../../helpers/steps/judges.ts'
import { stepGroups, stepTitle, type StepId } from '../../helpers/steps/registry.ts'
import { EXIT_CODES, type StepResult } from '../../helpers/steps/verdict.ts'
import { checkedReport } from './report-schema.ts'

export interface InProcessRun {
  exitCode: number
  report: Report
  /** The report as text, for assertion messages. */
  stdout: string
  stderr: string
}

async function oneStep(run: ProofRun, id: StepId, title: string): Promise<StepResult> {
  try {
    return await judgeStep(run, id, title)
  } catch (error) {
    const e = error as Error
    return crashedStep(id, {
      name: title,
      meta: () => ({ armproofStep: id }),
      result: () => ({ state: 'failed', errors: [e] }),
    })
  }
}

/** `args` and `env` as `pnpm verify` would get them; host commands see the engine's shims. */
export async function proveInProcess(
  args: readonly string[],
  options: { engine: EngineHandle; env?: Record<string, string> },
): Promise<InProcessRun> {
  const config = loadConfig({ argv: args, env: { VERIFY_NO_DOTENV: '1', ...options.env } })
  if (!config.ok) throw new Error(formatProblems(config.problems))
  const checked = targetForRun(config.target)
  if ('problems' in checked) throw new Error(formatProblems(checked.problems))
  const { target } = checked
  const startedAt = new Date()
  const seams = await openSeams(target, { hostEnv: options.engine.env, ahead: plannedReads(target) })
  const run = proofRun(createContext({ target, ...seams }))
  const atDefault = meterStill(run.ctx.spec, target.value)
  const plain = run.ctx.engine.health.numeric.length === 0
  const steps: StepResult[] = []
  const unhandled: string[] = []
  for (const { section, ids, sideBySide } of stepGroups()) {
    try {
      await beforeGroup(run, section)
    } catch (error) {
      unhandled.push(`suite error: ${(error as Error).message}`)
    }
    if (sideBySide) steps.push(...(await Promise.all(ids.map((id) => oneStep(run, id, stepTitle(id, atDefault, plain))))))
    else for (const id of ids) steps.push(await oneStep(run, id, stepTitle(id, atDefault, plain)))
  }
  await seams.close({ model: await modelOf(run) })
  const helpDefault = steps.find((s) => s.id === 'help')?.buildDefault
  const report = buildReport({
    target,
    steps,
    startedAt,
    finishedAt: new Date(),
    unhandled,
    truth: truthTable(target, steps),
    ...(typeof helpDefault === 'string' ? { defaultFromHelp: helpDefault } : {}),
  })
  return { exitCode: EXIT_CODES[report.verdict], report: checkedReport(report), stdout: JSON.stringify(report, null, 2), stderr: '' }
}
