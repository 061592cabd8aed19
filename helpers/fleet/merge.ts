// `pnpm merge-reports --out FILE SHARD.json…`: the reports of a sharded fleet run (`--shard i/n`
// on n CI jobs) merged into one fleet report. Refused (exit 2) unless the inputs are fleet reports
// of one targets file, their shards are of one n, each shard appears once, no target appears
// twice, and together they hold every target the file lists: a missing shard (a job that never
// uploaded) is never mistaken for a fleet that was fully verified. The merged verdict is the
// worst of the targets'; the exit code follows it, so the merge step itself can gate the pipeline.
import { readFileSync, statSync } from 'node:fs'
import { appendFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { junitFleetXml } from '../report/junit.ts'
import { writeAtomic } from '../seams/atomic.ts'
import { fleetMarkdown, fleetReport, fleetTable, isFleetReport, type FleetReport } from './report.ts'
import { MAX_REPORT_BYTES } from '../writeback/report.ts'
import { command, VERSION_FLAGS, VERSION_TEXT } from '../cli/invocation.ts'

export interface MergeIo {
  rawArgs: readonly string[]
  env: Readonly<Record<string, string | undefined>>
  cwd: string
  out: { write(text: string): unknown }
  err: { write(text: string): unknown }
}

/** The usage line, named as this process was started (helpers/cli/invocation.ts). */
export function mergeUsage(): string {
  return `Usage: ${command('merge-reports')} (--out <merged.json> | --json) [--junit <merged.xml>] <shard-report.json>…`
}

/** Merges parsed fleet reports; the merged report, or every problem found. */
export function mergeFleetReports(inputs: ReadonlyArray<{ path: string; report: FleetReport }>): { merged: FleetReport } | { problems: string[] } {
  const problems: string[] = []
  if (inputs.length === 0) return { problems: ['no report given'] }
  const first = inputs[0]!.report
  const seenShards = new Map<string, string>()
  const seenNames = new Map<string, string>()
  let count: number | null = null
  for (const { path, report } of inputs) {
    if (report.fleet.file !== first.fleet.file || report.fleet.total !== first.fleet.total) {
      problems.push(`${path}: a run of ${JSON.stringify(report.fleet.file)} (${report.fleet.total} targets), not of ${JSON.stringify(first.fleet.file)} (${first.fleet.total} targets) like ${inputs[0]!.path}`)
      continue
    }
    for (const s of report.fleet.shards ?? [{ index: 1, count: 1 }]) {
      count ??= s.count
      if (s.count !== count) problems.push(`${path}: shard ${s.index}/${s.count} is not one of ${count} shards like the others`)
      const key = `${s.index}/${s.count}`
      if (seenShards.has(key)) problems.push(`${path}: shard ${key} is also in ${seenShards.get(key)}`)
      else seenShards.set(key, path)
    }
    for (const t of report.targets) {
      if (seenNames.has(t.name)) problems.push(`${path}: target ${JSON.stringify(t.name)} is also in ${seenNames.get(t.name)}`)
      else seenNames.set(t.name, path)
    }
  }
  if (count !== null) {
    const missing = Array.from({ length: count }, (_, k) => `${k + 1}/${count}`).filter((k) => !seenShards.has(k))
    if (missing.length) problems.push(`shard${missing.length === 1 ? '' : 's'} ${missing.join(', ')} missing: the merged report would not hold the whole fleet; download every shard's report (did a shard job fail before uploading?)`)
  }
  if (problems.length === 0 && seenNames.size !== first.fleet.total) problems.push(`the shards hold ${seenNames.size} targets, but the file lists ${first.fleet.total}`)
  if (problems.length > 0) return { problems }
  const all = inputs.map((i) => i.report)
  const startedAt = all.map((r) => r.startedAt).sort()[0]!
  const finishedAt = all.map((r) => r.finishedAt).sort().at(-1)!
  const shards = all.flatMap((r) => r.fleet.shards ?? []).sort((a, b) => a.index - b.index)
  return {
    merged: fleetReport({
      startedAt,
      finishedAt,
      fleet: { file: first.fleet.file, total: first.fleet.total, shards: shards.length ? shards : null, concurrency: null },
      targets: all.flatMap((r) => r.targets),
    }),
  }
}

function readInput(path: string): FleetReport | string {
  try {
    const st = statSync(path)
    if (!st.isFile()) return 'is not a regular file'
    if (st.size > MAX_REPORT_BYTES) return `is larger than ${MAX_REPORT_BYTES / 1024 / 1024} MiB`
    const data: unknown = JSON.parse(readFileSync(path, 'utf8'))
    if (!isFleetReport(data) || !Array.isArray(data.targets) || typeof data.fleet !== 'object' || data.fleet === null) return `is not a fleet report (${command('verify')} --targets … --report FILE writes one)`
    return data
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return code === 'ENOENT' ? 'no such file' : code ? `cannot be read (${code})` : 'is not JSON'
  }
}

export async function mergeReports(io: MergeIo): Promise<number> {
  const inputs: string[] = []
  let out: string | undefined
  let junit: string | undefined
  let json = false
  const problems: string[] = []
  for (let i = 0; i < io.rawArgs.length; i++) {
    const a = io.rawArgs[i]!
    if (a === '--help' || a === '-h') {
      io.out.write(`${mergeUsage()}\n\nMerges the --report files of a sharded fleet run (${command('verify')} --targets FILE --shard i/n) into one; refused unless every shard is there once. --json writes the merged report to stdout (the other lines then go to stderr). Exit: the merged worst verdict (0 green, 1 red, 3 inconclusive), 2 when refused.\n`)
      return 0
    }
    if (VERSION_FLAGS.includes(a)) {
      io.out.write(`${VERSION_TEXT}\n`)
      return 0
    }
    if (a === '--json') {
      json = true
      continue
    }
    // Accepted on every command; merge-reports prints no colour.
    if (a === '--color' || a === '--no-color') continue
    const value = (name: string) => {
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : io.rawArgs[++i]
      if (v === undefined || v === '') problems.push(`${name} needs a value`)
      return v
    }
    if (a === '--out' || a.startsWith('--out=')) out = value('--out')
    else if (a === '--junit' || a.startsWith('--junit=')) junit = value('--junit')
    else if (a.startsWith('-')) problems.push(`unknown option ${JSON.stringify(a.slice(0, 40))}`)
    else inputs.push(a)
  }
  if (!out && !json) problems.push('--out <merged.json> (or --json) is required')
  if (inputs.length === 0) problems.push('give the shard reports to merge')
  const read: Array<{ path: string; report: FleetReport }> = []
  for (const p of inputs) {
    const r = readInput(resolve(io.cwd, p))
    if (typeof r === 'string') problems.push(`${p}: ${r}`)
    else read.push({ path: p, report: r })
  }
  if (problems.length === 0) {
    const m = mergeFleetReports(read)
    if ('problems' in m) problems.push(...m.problems)
    else {
      const text = `${JSON.stringify(m.merged, null, 2)}\n`
      if (out) await writeAtomic(resolve(io.cwd, out), text)
      if (json) io.out.write(text)
      if (junit) await writeAtomic(resolve(io.cwd, junit), junitFleetXml(m.merged.targets, Date.parse(m.merged.finishedAt) - Date.parse(m.merged.startedAt)))
      if (io.env.GITHUB_STEP_SUMMARY) await appendFile(io.env.GITHUB_STEP_SUMMARY, `${fleetMarkdown(m.merged, { reportPath: out ?? null })}\n`)
      const lines = json ? io.err : io.out
      lines.write(`${fleetTable(m.merged)}\n\nmerged ${read.length} shard report(s) into ${out ?? 'stdout'}: fleet ${m.merged.verdict.toUpperCase()}, ${m.merged.targets.length} target(s), exit ${m.merged.exitCode}\n`)
      return m.merged.exitCode
    }
  }
  io.err.write(`armproof merge-reports: ${problems.length} problem(s); nothing was written.\n${problems.map((p) => `  - ${p}`).join('\n')}\n${mergeUsage()}\n`)
  return 2
}
