// `merge-reports --help` and the usage line its refusals end with. Its own module, with only what
// the text needs, so that the installed command answers `armproof merge-reports --help` without
// loading the merge (bin/armproof.ts).
import { command } from '../config/invocation.ts'

/** The usage line, named as this process was started (helpers/config/invocation.ts). */
export function mergeUsage(): string {
  return `Usage: ${command('merge-reports')} (--out <merged.json> | --json) [--junit <merged.xml>] <shard-report.json>…`
}

export function mergeHelp(): string {
  return `${mergeUsage()}\n\nMerges the --report files of a sharded fleet run (${command('verify')} --targets FILE --shard i/n) into one; refused unless every shard of one run is there once, each target's verdict is the one its steps give, and the outputs can be written. --json writes the merged report to stdout (the other lines then go to stderr). Exit: the merged worst verdict (0 green, 1 red, 3 inconclusive), 2 when refused (nothing is written then), 4 when the outputs could not be written after all.`
}
