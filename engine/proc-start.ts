// This process's start time as prometheus_client's process collector computes
// `process_start_time_seconds`: field 22 of /proc/self/stat (clock ticks after boot) divided by
// CLK_TCK, plus `btime` of /proc/stat. CLK_TCK is the kernel's AT_CLKTCK, read from
// /proc/self/auxv (what sysconf(_SC_CLK_TCK) returns); 100 where that cannot be read.
import { readFileSync } from './fs.ts'

/** auxv entry type of the clock tick (include/uapi/linux/auxvec.h). */
const AT_CLKTCK = 17n

function clockTick(): number {
  try {
    const auxv = readFileSync('/proc/self/auxv')
    for (let at = 0; at + 16 <= auxv.length; at += 16) {
      const type = auxv.readBigUInt64LE(at)
      if (type === 0n) break
      if (type === AT_CLKTCK) return Number(auxv.readBigUInt64LE(at + 8))
    }
  } catch {
    // not Linux, or a 32-bit layout: the usual value
  }
  return 100
}

/** Seconds since the epoch; falls back to now where /proc cannot be read. */
export function processStartSeconds(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8')
    const fields = stat
      .slice(stat.lastIndexOf(')') + 1)
      .trim()
      .split(/\s+/)
    const btime = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))
    if (btime) return Number(btime[1]) + Number(fields[19]) / clockTick()
  } catch {
    // no /proc: the moment the state was made stands in
  }
  return Date.now() / 1000
}
