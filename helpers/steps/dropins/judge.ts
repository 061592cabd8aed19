// Step `dropins`: `systemctl show <unit> -p DropInPaths` must be empty before believing anything
// (a bench drop-in left behind overrides the env you just deployed).
import { noUnitReason } from '../../config/runtime.ts'
import { quote } from '../../config/shell.ts'
import type { RunContext } from '../context.ts'
import type { HostRun } from '../../seams/host.ts'
import type { Judgement } from '../verdict.ts'
import { hostTrouble, tail, whereHost } from '../_host.ts'

/** The read of the unit's drop-ins. */
export function dropinsRead(target: { unit: string; hostTimeoutMs: number }): HostRun {
  return { script: `systemctl show ${quote(target.unit)} -p DropInPaths`, timeoutMs: target.hostTimeoutMs }
}

export async function checkDropins(ctx: RunContext): Promise<Judgement<'dropins'>> {
  const { unit, runtime } = ctx.target
  // No unit stands for the engine (a pod; a container or a bare process without --unit): the gate
  // does not apply. Shown skipped with why, never passed; the run declares it (verdict.ts `declaredSkips`).
  if (unit === null) {
    const { why, next } = noUnitReason(runtime)
    return {
      verdict: 'skipped',
      intendedSkip: true,
      expected: "no systemd drop-in overrides the engine's unit",
      observed: `not applicable: ${why}`,
      where: `${ctx.host.where}: --runtime ${runtime}`,
      next,
      evidence: {},
    }
  }
  const read = dropinsRead({ unit, hostTimeoutMs: ctx.target.hostTimeoutMs })
  const command = read.script
  const expected = `DropInPaths of ${unit} is empty`
  if (!ctx.target.dropinCheck) {
    return {
      verdict: 'skipped',
      intendedSkip: true,
      expected,
      observed: 'not checked: --no-dropin-check (VERIFY_DROPIN_CHECK=0) was given',
      where: whereHost(ctx, command),
      next: `check by hand before trusting the result: ${command}`,
      evidence: {},
    }
  }
  const r = await ctx.host.run(read)
  const trouble = hostTrouble(ctx, r, expected)
  if (trouble) return trouble
  const line = r.stdout.split('\n').find((l) => l.startsWith('DropInPaths='))
  if (r.exitCode !== 0 || line === undefined) {
    return {
      verdict: 'inconclusive',
      expected,
      observed: `systemctl exited ${r.exitCode} without a DropInPaths= line: ${tail(r.stderr || r.stdout) || '(no output)'}`,
      where: whereHost(ctx, command),
      next: `run it on the host; if the engine is not a systemd unit there, pass --unit <unit> or --no-dropin-check`,
      evidence: { exitCode: r.exitCode, stdout: r.stdout.slice(0, 2000), stderr: r.stderr.slice(0, 2000) },
    }
  }
  const paths = line.slice('DropInPaths='.length).trim()
  if (paths === '') {
    return { verdict: 'passed', expected, observed: 'DropInPaths= (empty)', where: whereHost(ctx, command), evidence: { dropins: [] } }
  }
  const list = paths.split(/\s+/)
  return {
    verdict: 'failed',
    expected,
    observed: `DropInPaths=${paths}`,
    where: whereHost(ctx, command),
    next: `a drop-in overrides the unit (often left by a bench): review and remove ${list.join(', ')}, run systemctl daemon-reload, redeploy --service ${ctx.target.svc}, then verify again`,
    evidence: { dropins: list },
  }
}
