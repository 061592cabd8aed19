// The start time of the pid step argv read, as prometheus_client's process collector computes
// process_start_time_seconds: field 22 of /proc/<pid>/stat (clock ticks after boot) divided by
// CLK_TCK, plus `btime` of /proc/stat; one read through the host seam, so record and replay see
// it. The meter binds each /metrics page to the pid by it (helpers/steps/meter/ladder.ts).
import type { RunContext } from '../context.ts'

export interface StartTime {
  startTimeSeconds: number | null
  /** Seconds: one clock tick. */
  startTimeResolution: number
}

/** The three reads, in one host command. */
export const startTimeScript = (pid: string): string => `cat /proc/${pid}/stat && grep '^btime ' /proc/stat && getconf CLK_TCK`

/** The start time from that command's output; null when a part is missing or malformed. */
export function parseStartTime(stdout: string): StartTime {
  const close = stdout.lastIndexOf(')')
  const field22 = close < 0 ? undefined : stdout.slice(close + 1).split('\n')[0]!.trim().split(/\s+/)[19]
  const btime = /^btime (\d+)$/m.exec(stdout)?.[1]
  const clk = Number(/^btime \d+\n(\d+)\s*$/m.exec(stdout)?.[1])
  if (!(clk > 0)) return { startTimeSeconds: null, startTimeResolution: 0.01 }
  if (field22 === undefined || !/^\d+$/.test(field22) || btime === undefined) return { startTimeSeconds: null, startTimeResolution: 1 / clk }
  return { startTimeSeconds: Number(btime) + Number(field22) / clk, startTimeResolution: 1 / clk }
}

export async function startTimeOf(ctx: RunContext, pid: string): Promise<StartTime> {
  const r = await ctx.host.run({ script: startTimeScript(pid), privileged: true, timeoutMs: ctx.target.hostTimeoutMs })
  return r.exitCode === 0 && !r.failure ? parseStartTime(r.stdout) : { startTimeSeconds: null, startTimeResolution: 0.01 }
}
