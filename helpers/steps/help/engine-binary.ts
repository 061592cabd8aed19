// Step `help` where its command names `{engine}` (the default under --runtime process): the
// engine process is looked up as step argv looks it up (helpers/engine/find.ts) and its --help is
// asked of the program that process runs (helpers/engine/binary.ts), so another build first on
// PATH never passes for the pinned one. No engine process, or one whose binary cannot be read:
// inconclusive, saying why (the help of some other binary would prove nothing).
import { readBinary, type EngineBinary } from '../../engine/binary.ts'
import { findEngine } from '../../engine/find.ts'
import { engineQuery } from '../../engine/query.ts'
import { lookupLabel } from '../../engine/recheck.ts'
import { inContainer, procPlace } from '../../engine/runtime.ts'
import type { RunContext } from '../context.ts'
import { hostTrouble, tail } from '../_host.ts'
import type { Judgement } from '../verdict.ts'

export type EngineBinaryFound = { kind: 'binary'; binary: EngineBinary } | { kind: 'unread'; judgement: Judgement<'help'> }

/** The binary the engine process runs, or the help step's judgement of why it could not be told. */
export async function engineBinary(ctx: RunContext, expected: string): Promise<EngineBinaryFound> {
  const q = engineQuery(ctx.target)
  const lookup = await findEngine(ctx.host, q)
  if (lookup.kind === 'trouble')
    return { kind: 'unread', judgement: { ...hostTrouble(ctx, lookup.result, expected)!, where: lookupLabel(ctx.host.where, q) } }
  if (lookup.kind !== 'found')
    return {
      kind: 'unread',
      judgement: {
        verdict: 'inconclusive',
        expected,
        observed: `--help is asked of the binary the engine process runs, and no one engine process was found: ${lookup.observed}`,
        where: lookupLabel(ctx.host.where, q),
        next: `${lookup.next}; or give --help-cmd, the command that prints the pinned build's --help`,
        evidence: { pids: lookup.pids },
      },
    }
  const read = await readBinary(ctx.host, inContainer(q, lookup.container), lookup.pid, lookup.argv)
  if (read.kind === 'read') return { kind: 'binary', binary: read.binary }
  if (read.result.failure) return { kind: 'unread', judgement: hostTrouble(ctx, read.result, expected)! }
  return {
    kind: 'unread',
    judgement: {
      verdict: 'inconclusive',
      expected,
      observed: `could not tell which binary pid ${lookup.pid} runs: ${read.problem}${read.result.stderr.trim() ? ` (${tail(read.result.stderr)})` : ''}`,
      where: `${procPlace(ctx.host.where, inContainer(q, lookup.container))}: readlink /proc/${lookup.pid}/exe`,
      next: `give armproof the rights to read /proc/${lookup.pid}/exe (run as the engine's user, or --sudo always), or give --help-cmd, the command that prints the pinned build's --help`,
      evidence: { exitCode: read.result.exitCode, stderr: read.result.stderr.slice(-2000) },
    },
  }
}
