// The host reads a run's steps will ask for, in the order they ask: drop-ins (when checked),
// --help (unless it is the engine binary's own, `{engine}`: that one waits for the lookup), the engine lookup's pod (under kubernetes) and survey (shared by the targets of one host
// in a live fleet); never the ledger (read once loading has ended). Built by the same functions the steps read
// with, so the seams can take them all in one host call ahead (helpers/seams/read-ahead.ts); a
// step whose read is not among them simply runs its own.
import type { Target } from '../config/load.ts'
import { ENGINE_PLACEHOLDER } from '../config/runtime.ts'
import { surveyRead } from '../engine/find.ts'
import { podRun } from '../engine/runtime.ts'
import { engineQuery } from '../engine/query.ts'
import type { HostRun } from '../seams/host.ts'
import type { Gather } from '../seams/host-result.ts'
import type { Ahead } from '../seams/read-ahead.ts'
import { SURVEYS } from '../engine/survey-many.ts'
import { sharedReadsOn } from '../seams/host-gather.ts'
import { templateRead } from './_host.ts'
import { dropinsRead } from './dropins/judge.ts'

export function plannedReads(target: Target): Ahead {
  const q = engineQuery(target)
  // Where the targets of a host share the survey (a live fleet), it is their shared read, not this
  // target's own; a pod's survey runs in the pod (kubectl exec), after the pod's own read, and is never shared.
  const shared = sharedReadsOn() && !q.pod
  const own: HostRun[] = [
    ...(target.dropinCheck && target.unit !== null ? [dropinsRead({ unit: target.unit, hostTimeoutMs: target.hostTimeoutMs })] : []),
    // A help command of the engine's own binary ({engine}) is known only once the engine is found.
    ...(target.helpCmd.includes(ENGINE_PLACEHOLDER) ? [] : [templateRead(target, target.helpCmd)]),
    ...(q.pod ? [podRun({ ...q, pod: q.pod })] : []),
    ...(shared ? [] : [surveyRead(q)]),
    // Not the ledger: step ledger reads it once /health answers 200 (an engine prints what it
    // resolved when loading ends), so a read made at the start would be the wrong moment's.
  ]
  return {
    reads: own,
    gathers: shared ? [{ g: SURVEYS as Gather<unknown>, key: { process: q.process, port: q.port }, timeoutMs: q.timeoutMs }] : [],
  }
}
