// Step `argv`: exactly one engine process, and its /proc/<pid>/cmdline carries the flag with
// the value, or lacks it where the knob is at its default and the flag is passed only when
// non-default ("unset means default").
import { argvExcerpt, findFlag, parseCmdline } from './parse.ts'
import { canonicalValue } from '../../config/knobs.ts'
import { defaultValue, expectedValue, type InputsOf, type Outcome, type RunContext, type StepOutputs } from '../context.ts'
import { quote } from '../../config/shell.ts'
import type { Judgement } from '../verdict.ts'
import { hostTrouble, tail, whereHost } from '../_host.ts'
import { startTimeOf } from './start-time.ts'

/** Hands on the one engine process it read (`engineProcess`): the meter checks it still runs after its watch. */
export async function checkArgv(ctx: RunContext, inputs: InputsOf<'argv'>): Promise<Outcome<'argv'>> {
  const gives: Pick<Partial<StepOutputs>, 'engineProcess'> = {}
  const judgement = await judgeArgv(ctx, inputs.buildDefault, gives)
  return { ...judgement, gives }
}

async function judgeArgv(ctx: RunContext, buildDefault: string | null | undefined, gives: Pick<Partial<StepOutputs>, 'engineProcess'>): Promise<Judgement<'argv'>> {
  const { flag, passedOnlyWhenNonDefault } = ctx.spec
  const value = expectedValue(ctx, buildDefault)
  const fallback = defaultValue(ctx, buildDefault)
  const atDefault = value !== undefined && value === fallback
  const mustBeAbsent = atDefault && passedOnlyWhenNonDefault
  const expected = value === undefined ? `${flag} as the build default` : mustBeAbsent ? `no ${flag} (unset means default ${value})` : `${flag} ${value}`
  const timeoutMs = ctx.target.hostTimeoutMs
  const process = ctx.target.process

  const pidof = await ctx.host.run({ script: `pidof ${quote(process)}`, privileged: true, timeoutMs })
  const trouble = hostTrouble(ctx, pidof, expected)
  if (trouble) return trouble
  const pids = pidof.stdout.trim().split(/\s+/).filter((p) => /^\d+$/.test(p))
  if (pids.length === 0) {
    return {
      verdict: 'failed',
      expected: `one process named ${process}`,
      observed: `engine not running: pidof ${process} found no process${pidof.stderr.trim() ? ` (${tail(pidof.stderr)})` : ''}`,
      where: whereHost(ctx, pidof.command),
      next: `the engine is not running on this host: check the service (systemctl status ${ctx.target.unit}, podman ps), or set --process if it runs under another name`,
      evidence: { pids: [] },
    }
  }
  if (pids.length > 1) {
    return {
      verdict: 'failed',
      expected: `one process named ${process}`,
      observed: `${pids.length} processes named ${process}: ${pids.join(', ')}`,
      where: whereHost(ctx, pidof.command),
      next: `several engines run here (an old container still draining, or a bench): find which serves ${ctx.target.svc} (ps -o pid,lstart,args -p ${pids.join(',')}) and stop the stray ones before trusting anything`,
      evidence: { pids },
    }
  }
  const pid = pids[0]!
  const read = await ctx.host.run({ script: `cat /proc/${pid}/cmdline`, privileged: true, timeoutMs })
  const readTrouble = hostTrouble(ctx, read, expected)
  if (readTrouble) return readTrouble
  const argv = parseCmdline(read.stdout)
  const where = whereHost(ctx, `tr '\\0' ' ' < /proc/${pid}/cmdline`)
  if (read.exitCode !== 0 || argv.length === 0) {
    return {
      verdict: 'inconclusive',
      expected,
      observed: `could not read /proc/${pid}/cmdline (exit ${read.exitCode}): ${tail(read.stderr) || 'empty'}`,
      where,
      next: 'the process may have just exited (restart loop?) or /proc is mounted with hidepid: check the service and retry, with sudo rights to read /proc if needed',
      evidence: { pid },
    }
  }
  // The meter binds each page to this very process by its start time, and checks it still runs once it has watched the counter.
  const engineProcess: StepOutputs['engineProcess'] = { pid, argvHeld: false, ...(await startTimeOf(ctx, pid)), foundBy: 'pidof', listenerTied: false }
  gives.engineProcess = engineProcess
  const found = findFlag(argv, flag)
  const evidence = { pid: Number(pid), argv: argvExcerpt(argv, 2000), flag: found.written }
  const excerpt = argvExcerpt(argv)
  if (value === undefined) {
    return {
      verdict: 'inconclusive',
      expected,
      observed: found.written.length ? found.written.join(' ') : `no ${flag}`,
      where,
      next: 'the expected value is the build default, which --help did not print: pass --value',
      evidence,
    }
  }
  if (found.values.length === 0) {
    if (atDefault) {
      engineProcess.argvHeld = true
      return { verdict: 'passed', expected, observed: `no ${flag} in argv: unset means default ${value}`, where, evidence }
    }
    return {
      verdict: 'failed',
      expected,
      observed: `no ${flag} in argv: ${excerpt}`,
      where,
      next: `the flag did not reach the engine: check ${ctx.spec.env}=${value} in ${ctx.target.svc}'s env, that the serve script passes ${flag}${passedOnlyWhenNonDefault ? ` (it adds it only when the value is not ${fallback})` : ''}, and redeploy --service ${ctx.target.svc}`,
      evidence,
    }
  }
  const last = canonicalValue(ctx.spec, found.values.at(-1)!)
  const twice = found.values.length > 1 ? ` (given ${found.values.length} times; the last wins)` : ''
  if (mustBeAbsent) {
    return {
      verdict: 'failed',
      expected,
      observed: `argv carries ${found.written.join(' ')}${twice}`,
      where,
      next: `the serve script passes ${flag} only when it differs from ${value}, yet argv has it: the running engine was not started by the serve script you deployed, or ${ctx.spec.env} is not ${value}; redeploy --service ${ctx.target.svc}`,
      evidence,
    }
  }
  if (last !== value) {
    return {
      verdict: 'failed',
      expected,
      observed: `argv carries ${found.written.join(' ')}${twice}`,
      where,
      next: `the engine runs with ${flag} ${last}, not ${value}: check ${ctx.spec.env} in ${ctx.target.svc}'s env and redeploy --service ${ctx.target.svc}`,
      evidence,
    }
  }
  engineProcess.argvHeld = true
  return { verdict: 'passed', expected, observed: `${found.written.join(' ')}${twice} (pid ${pid})`, where, evidence }
}
