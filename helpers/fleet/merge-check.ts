// The checks of merge-reports, pure: which parsed shard reports may be joined, and the merged
// report. A shard is one of the run only when it carries the run identity of the first shard (the
// targets file's digest and every target's run id, ./report.ts `fleet.run`), unedited; each of its
// targets is an armproof report (a known verdict word), its own run identity is the one the run
// lists at its place, and the verdict and exit code it claims are the ones the one green rule
// gives for its steps. Together the shards hold every target of the run exactly once. Every
// problem is one line.
import { checkReportShape, claimProblem, identityProblem, type CheckedReportData } from '../report/checked.ts'
import { fleetRunId, type FleetRunIdentity } from '../report/identity.ts'
import type { Report } from '../report/json.ts'
import { fleetReport, isFleetReport, worstVerdict, type FleetReport } from './report.ts'
import type { Shard } from './shard.ts'
import { command } from '../config/invocation.ts'

const isInt = (v: unknown, min: number): v is number => typeof v === 'number' && Number.isInteger(v) && v >= min
const isDigest = (v: unknown): v is string => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v)
const short = (digest: string) => `${digest.slice(0, 12)}…`

/** The fleet part of a shard, checked; or why it is not a shard of any run armproof wrote. */
function shardOf(data: unknown):
  | {
      run: FleetRunIdentity
      shards: Shard[]
      sharded: boolean
      total: number
      file: string
      targets: unknown[]
      claimed: unknown
      times: [string, string]
    }
  | string {
  if (!isFleetReport(data) || typeof data.fleet !== 'object' || data.fleet === null || !Array.isArray(data.targets))
    return `is not a fleet report (${command('verify')} --targets … --report FILE writes one)`
  const { fleet } = data
  const run = fleet.run as Partial<FleetRunIdentity> | undefined
  if (!run || typeof run !== 'object')
    return 'carries no run identity (fleet.run): written by an armproof older than the run check; re-run its shard with this armproof'
  if (
    !isDigest(run.id) ||
    !isDigest(run.fileSha256) ||
    !Array.isArray(run.targets) ||
    !run.targets.every(isDigest) ||
    (run.instance !== undefined && typeof run.instance !== 'string')
  )
    return 'has a malformed run identity (fleet.run: id, fileSha256, targets, instance)'
  if (fleetRunId({ fileSha256: run.fileSha256, targets: run.targets, instance: run.instance }) !== run.id)
    return `its run identity was edited: fleet.run.id ${short(run.id)} is not the digest of its fields`
  if (!isInt(fleet.total, 1) || run.targets.length !== fleet.total)
    return `fleet.total ${JSON.stringify(fleet.total)} is not the ${run.targets.length} targets its run identity lists`
  const shards = fleet.shards ?? [{ index: 1, count: 1 }]
  if (!Array.isArray(shards) || shards.length === 0 || !shards.every((s) => isInt(s?.index, 1) && isInt(s?.count, 1) && s.index <= s.count))
    return 'has malformed fleet.shards (each { index, count }, 1 ≤ index ≤ count)'
  if (typeof data.startedAt !== 'string' || typeof data.finishedAt !== 'string' || typeof fleet.file !== 'string')
    return 'is not a fleet report: startedAt, finishedAt or fleet.file is missing'
  return {
    run: run as FleetRunIdentity,
    shards,
    sharded: fleet.shards != null,
    total: fleet.total,
    file: fleet.file,
    targets: data.targets,
    claimed: data.verdict,
    times: [data.startedAt, data.finishedAt],
  }
}

/** One target entry of a shard, checked; or why it cannot be merged. */
function targetOf(
  entry: unknown,
  at: string,
  run: FleetRunIdentity,
): { name: string; index: number; report: CheckedReportData; raw: Report } | string {
  const e = entry as { name?: unknown; index?: unknown; report?: unknown } | null
  if (!e || typeof e !== 'object') return `${at}: is not a target entry ({ name, index, report })`
  const name = typeof e.name === 'string' ? e.name : null
  const where = `${at}${name !== null ? ` (${JSON.stringify(name.slice(0, 60))})` : ''}`
  if (name === null) return `${where}: has no name`
  if (!isInt(e.index, 0) || e.index >= run.targets.length)
    return `${where}: has no place in the targets file (index ${JSON.stringify(e.index)}; the run lists ${run.targets.length})`
  const shape = checkReportShape(e.report)
  if ('problem' in shape) return `${where}: its report ${shape.problem}`
  const report = shape.report
  const edited = identityProblem(report)
  if (edited) return `${where}: its report ${edited}`
  if (report.run!.id !== run.targets[e.index])
    return `${where}: its run identity ${short(report.run!.id)} is not the one the run lists for targets[${e.index}] (${short(run.targets[e.index]!)}): a target of another run`
  const claim = claimProblem(report)
  if (claim) return `${where}: its report ${claim}: not a report armproof wrote; re-run its shard`
  // The report as the shard holds it (every field, a newer armproof's too), now that it is checked.
  return { name, index: e.index, report, raw: e.report as Report }
}

/** The identity fields a reader needs to tell two runs apart, e.g. `llm-8 PREFILL_INTERLEAVE=0, mode live`. */
function describeRun(report: CheckedReportData): string {
  const t = report.run!.target
  return `${String(t.svc)} ${String(t.knob)}=${t.value === null ? '(default)' : String(t.value)}, mode ${report.run!.mode}`
}

/** Merges parsed shard reports; the merged report, or every problem found (one line each). */
export function mergeFleetReports(
  inputs: ReadonlyArray<{ path: string; data: unknown }>,
): { merged: FleetReport } | { problems: string[] } {
  if (inputs.length === 0) return { problems: ['no report given'] }
  const problems: string[] = []
  let first: { path: string; run: FleetRunIdentity } | undefined
  let count: number | null = null
  const seenShards = new Map<string, string>()
  const placed = new Map<number, { path: string; name: string; raw: Report }>()
  const times: string[][] = []
  for (const input of inputs) {
    const { path } = input
    const shard = shardOf(input.data)
    if (typeof shard === 'string') {
      problems.push(`${path}: ${shard}`)
      continue
    }
    if (!first) first = { path, run: shard.run }
    else if (shard.run.id !== first.run.id) {
      const runName = (r: FleetRunIdentity) => (r.instance === undefined ? 'none' : JSON.stringify(r.instance.slice(0, 60)))
      const why =
        shard.run.fileSha256 !== first.run.fileSha256
          ? `another targets file (sha256 ${short(shard.run.fileSha256)}, not ${short(first.run.fileSha256)})`
          : shard.run.instance !== first.run.instance && shard.run.targets.every((id, i) => id === first!.run.targets[i])
            ? `another run of the same targets file and options (run id ${runName(shard.run)}, not ${runName(first.run)}): a shard left from an earlier run`
            : `the same targets file with other options for ${shard.run.targets.filter((id, i) => id !== first!.run.targets[i]).length} of its ${shard.run.targets.length} targets (a --value, a mode, a budget…)`
      const sample = shard.targets.map((t) => targetOf(t, path, shard.run)).find((t) => typeof t !== 'string')
      problems.push(
        `${path}: not a shard of the run of ${first.path}: ${why}${sample && typeof sample !== 'string' ? `; here ${describeRun(sample.report)}` : ''}; merge the shards of one ${command('verify')} run`,
      )
      continue
    }
    for (const s of shard.shards) {
      count ??= s.count
      if (s.count !== count) problems.push(`${path}: shard ${s.index}/${s.count} is not one of ${count} shards like the others`)
      const key = `${s.index}/${s.count}`
      if (seenShards.has(key)) problems.push(`${path}: shard ${key} is also in ${seenShards.get(key)} (a shard given twice)`)
      else seenShards.set(key, path)
    }
    const fleetVerdicts: string[] = []
    for (const [k, entry] of shard.targets.entries()) {
      const t = targetOf(entry, `${path}: targets[${k}]`, shard.run)
      if (typeof t === 'string') {
        problems.push(t)
        continue
      }
      fleetVerdicts.push(t.report.verdict)
      const there = placed.get(t.index)
      if (there)
        problems.push(
          `${path}: targets[${k}] (${JSON.stringify(t.name)}) is targets[${t.index}] of the file, also in ${there.path} (a target given twice)`,
        )
      else placed.set(t.index, { path, name: t.name, raw: t.raw })
    }
    if (fleetVerdicts.length === shard.targets.length && shard.claimed !== worstVerdict(fleetVerdicts as Report['verdict'][])) {
      problems.push(
        `${path}: says fleet verdict ${JSON.stringify(shard.claimed)}, but its targets give ${worstVerdict(fleetVerdicts as Report['verdict'][])}: the shard was edited`,
      )
    }
    times.push(shard.times)
  }
  if (first && count !== null) {
    const missing = Array.from({ length: count }, (_, k) => `${k + 1}/${count}`).filter((k) => !seenShards.has(k))
    if (missing.length)
      problems.push(
        `shard${missing.length === 1 ? '' : 's'} ${missing.join(', ')} missing: the merged report would not hold the whole fleet; download every shard's report (did a shard job fail before uploading?)`,
      )
    const unplaced = first.run.targets.map((_, i) => i).filter((i) => !placed.has(i))
    if (missing.length === 0 && unplaced.length)
      problems.push(
        `targets[${unplaced.slice(0, 10).join('], targets[')}]${unplaced.length > 10 ? ' …' : ''} of the targets file ${unplaced.length === 1 ? 'is' : 'are'} in no shard given: the merged report would not hold the whole fleet`,
      )
  }
  if (problems.length > 0 || !first) return { problems }
  const shardInputs = inputs
    .map((i) => shardOf(i.data))
    .filter((s): s is Exclude<ReturnType<typeof shardOf>, string> => typeof s !== 'string')
  const shards = shardInputs
    .filter((s) => s.sharded)
    .flatMap((s) => s.shards)
    .sort((a, b) => a.index - b.index)
  const targets = [...placed.entries()].sort(([a], [b]) => a - b).map(([index, t]) => ({ name: t.name, index, report: t.raw }))
  return {
    merged: fleetReport({
      startedAt: times.map((t) => t[0]!).sort()[0]!,
      finishedAt: times
        .map((t) => t[1]!)
        .sort()
        .at(-1)!,
      fleet: {
        file: shardInputs[0]!.file,
        total: shardInputs[0]!.total,
        shards: shards.length ? shards : null,
        concurrency: null,
        run: first.run,
      },
      targets,
    }),
  }
}
