// Shard reports of a fleet run, made as `pnpm verify --targets FILE --shard i/n` makes them (the
// same loader, run identities, report builder and fleet report), without contacting anything:
// every target's steps are chosen by the caller. For merge-reports' tests and its property test.
import { loadConfig, formatProblems, type Target } from '../../helpers/config/load.ts'
import { fleetReport, type FleetReport } from '../../helpers/fleet/report.ts'
import { shardOf } from '../../helpers/fleet/shard.ts'
import { fleetRunIdentity } from '../../helpers/report/identity.ts'
import { buildReport } from '../../helpers/report/json.ts'
import { STEP_IDS, stepResult, type StepResult, type StepVerdict } from '../../helpers/steps/verdict.ts'
import { pick } from './prng.ts'

export const TARGETS_FILE = 'targets:\n  - { svc: llm-7 }\n'

/** The targets of one run: `n` services of one knob, all at `value`, each at its own endpoint. */
export function fleetTargets(n: number, value: string, extra: string[] = []): Target[] {
  return Array.from({ length: n }, (_, i) => {
    const c = loadConfig({
      argv: ['--svc', `llm-${i}`, '--knob', 'PREFILL_INTERLEAVE', '--value', value, '--base-url', `http://10.0.0.${i + 1}:8000`, ...extra],
      env: { VERIFY_NO_DOTENV: '1' },
    })
    if (!c.ok) throw new Error(formatProblems(c.problems))
    return c.target
  })
}

/** Every step with these verdicts (passed where not given). */
export function stepsWith(verdicts: Partial<Record<string, StepVerdict>> = {}, intendedSkip: readonly string[] = []): StepResult[] {
  return STEP_IDS.map((id) => {
    const verdict = verdicts[id] ?? 'passed'
    return stepResult(
      id,
      `the ${id} step`,
      {
        verdict,
        expected: 'x',
        observed: 'y',
        where: 'z',
        ...(verdict !== 'passed' ? { next: 'n' } : {}),
        ...(intendedSkip.includes(id) ? { intendedSkip: true } : {}),
        evidence: {},
      },
      1,
    )
  })
}

/** Random steps: each passed, or at `rate` failed, inconclusive or skipped (on purpose or not). */
export function randomSteps(random: () => number, rate = 0.2): StepResult[] {
  const verdicts: Record<string, StepVerdict> = {}
  const skips: string[] = []
  for (const id of STEP_IDS) {
    if (random() >= rate) continue
    verdicts[id] = pick(random, ['failed', 'inconclusive', 'skipped'] as const)
    if (verdicts[id] === 'skipped' && random() < 0.5) skips.push(id)
  }
  return stepsWith(verdicts, skips)
}

/** The reports of a fleet run cut into `count` shards: shard i holds the targets `--shard i/count` would. */
export function shardReports(
  targets: readonly Target[],
  steps: readonly StepResult[][],
  count: number,
  file = TARGETS_FILE,
  instance: string | null = null,
): FleetReport[] {
  const run = fleetRunIdentity(file, targets, instance)
  const at = new Date('2026-11-30T02:00:00.000Z')
  const identities = targets.map((t) => `${t.svc} ${t.knob} ${t.baseUrl}`)
  return Array.from({ length: count }, (_, k) => {
    const shard = { index: k + 1, count }
    const picked = count === 1 ? targets.map((_, i) => i) : shardOf(identities, shard)
    return fleetReport({
      startedAt: at.toISOString(),
      finishedAt: new Date(at.getTime() + 60_000 + k).toISOString(),
      fleet: { file: 'targets.yaml', total: targets.length, shards: count === 1 ? null : [shard], concurrency: 8, run },
      targets: picked.map((i) => ({
        name: targets[i]!.svc,
        index: i,
        report: buildReport({ target: targets[i]!, steps: steps[i]!, startedAt: at, finishedAt: new Date(at.getTime() + 60_000) }),
      })),
    })
  })
}
