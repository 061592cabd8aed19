// `pnpm merge-reports --out FILE SHARD.json…`: the reports of a sharded fleet run (`--shard i/n`
// on n CI jobs) merged into one fleet report. Nothing in a shard is believed: each is checked
// (./merge-check.ts) to be a shard of one run (the run identity: the targets file's digest and
// every target's run id), each target's verdict is derived again from its steps by the one green
// rule, and together they must hold every target of the run exactly once. A missing, repeated or
// foreign shard, a target without a known verdict word, or one whose verdict its steps do not give
// is refused (exit 2, one line each). The outputs are checked before anything is written, and
// nothing is written when the merge is refused. The merged verdict is the worst of the targets';
// the exit code follows it, so the merge step itself can gate the pipeline.
import { readFileSync, statSync } from 'node:fs'
import { appendFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { outputProblem } from '../config/outputs.ts'
import { outputSetProblems, type PathClaim } from '../config/output-set.ts'
import { MAX_REPORT_BYTES } from '../report/checked.ts'
import { junitFleetXml } from '../report/junit.ts'
import { writeAtomicAll } from '../seams/atomic.ts'
import { EXIT_OUTPUT_UNWRITTEN } from '../config/options.ts'
import { VERSION_FLAGS, VERSION_TEXT } from '../config/invocation.ts'
import { fleetMarkdown, fleetTable } from './report.ts'
import { mergeFleetReports } from './merge-check.ts'
import { mergeHelp, mergeUsage } from './merge-help.ts'

export { mergeFleetReports } from './merge-check.ts'

export interface MergeIo {
  rawArgs: readonly string[]
  env: Readonly<Record<string, string | undefined>>
  cwd: string
  out: { write(text: string): unknown }
  err: { write(text: string): unknown }
}

/** The shard at `path` as parsed JSON, or why it cannot be read (one line). */
function readInput(path: string): { data: unknown } | { problem: string } {
  try {
    const st = statSync(path)
    if (!st.isFile()) return { problem: 'is not a regular file' }
    if (st.size > MAX_REPORT_BYTES) return { problem: `is larger than ${MAX_REPORT_BYTES / 1024 / 1024} MiB` }
    return { data: JSON.parse(readFileSync(path, 'utf8')) as unknown }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return { problem: code === 'ENOENT' ? 'no such file' : code ? `cannot be read (${code})` : 'is not JSON' }
  }
}

interface Args {
  inputs: string[]
  out?: string
  junit?: string
  /** --json: the merged report to stdout, the other lines to stderr. */
  json: boolean
  help: boolean
  version: boolean
  problems: string[]
}

function parseArgs(rawArgs: readonly string[]): Args {
  const args: Args = { inputs: [], json: false, help: false, version: false, problems: [] }
  for (let i = 0; i < rawArgs.length; i++) {
    const a = rawArgs[i]!
    if (a === '--help' || a === '-h') return { ...args, help: true }
    if (VERSION_FLAGS.includes(a)) return { ...args, version: true }
    if (a === '--json') {
      args.json = true
      continue
    }
    // Accepted on every command; merge-reports prints no colour.
    if (a === '--color' || a === '--no-color') continue
    const value = (name: string) => {
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : rawArgs[++i]
      if (v === undefined || v === '') args.problems.push(`${name} needs a value`)
      return v || undefined
    }
    if (a === '--out' || a.startsWith('--out=')) args.out = value('--out')
    else if (a === '--junit' || a.startsWith('--junit=')) args.junit = value('--junit')
    else if (a.startsWith('-')) args.problems.push(`unknown option ${JSON.stringify(a.slice(0, 40))}`)
    else args.inputs.push(a)
  }
  if (!args.out && !args.json && !args.problems.some((p) => p.startsWith('--out')))
    args.problems.push('--out <merged.json> (or --json) is required')
  if (args.inputs.length === 0) args.problems.push('give the shard reports to merge')
  return args
}

/** The outputs, checked before anything is written: each writable, no two on one path, none over a shard it reads. */
function outputsProblems(args: Args, io: MergeIo): string[] {
  const writes: Array<{ option: string; path: string; append?: boolean }> = [
    ...(args.out ? [{ option: '--out', path: args.out }] : []),
    ...(args.junit ? [{ option: '--junit', path: args.junit }] : []),
    ...(io.env.GITHUB_STEP_SUMMARY ? [{ option: 'GITHUB_STEP_SUMMARY', path: io.env.GITHUB_STEP_SUMMARY, append: true }] : []),
  ]
  const each = writes.flatMap(
    (w) => outputProblem({ option: w.option, path: w.path, kind: 'file', ...(w.append ? { append: true } : {}) }, io.cwd) ?? [],
  )
  const claims: PathClaim[] = [
    ...writes.map((w) => ({ option: w.option, path: w.path, role: 'writes' as const })),
    ...args.inputs.map((p) => ({ option: 'a shard report', path: p, role: 'reads' as const })),
  ]
  return [...each, ...outputSetProblems(claims, io.cwd).map((p) => p.message)]
}

export async function mergeReports(io: MergeIo): Promise<number> {
  try {
    return await merge(io)
  } catch (error) {
    // Never a stack trace: whatever went wrong is one line, and exit 2 (nothing was merged).
    io.err.write(
      `armproof merge-reports: failed unexpectedly: ${error instanceof Error ? error.message : String(error)}; nothing was written\n`,
    )
    return 2
  }
}

async function merge(io: MergeIo): Promise<number> {
  const args = parseArgs(io.rawArgs)
  if (args.help) {
    io.out.write(`${mergeHelp()}\n`)
    return 0
  }
  if (args.version) {
    io.out.write(`${VERSION_TEXT}\n`)
    return 0
  }
  const problems = [...args.problems, ...outputsProblems(args, io)]
  const read: Array<{ path: string; data: unknown }> = []
  for (const p of args.inputs) {
    const r = readInput(resolve(io.cwd, p))
    if ('problem' in r) problems.push(`${p}: ${r.problem}`)
    else read.push({ path: p, data: r.data })
  }
  if (problems.length === 0) {
    const m = mergeFleetReports(read)
    if ('problems' in m) problems.push(...m.problems)
    else {
      const merged = m.merged
      const text = `${JSON.stringify(merged, null, 2)}\n`
      const files = [
        ...(args.out ? [{ path: resolve(io.cwd, args.out), text }] : []),
        ...(args.junit
          ? [
              {
                path: resolve(io.cwd, args.junit),
                text: junitFleetXml(merged.targets, Date.parse(merged.finishedAt) - Date.parse(merged.startedAt)),
              },
            ]
          : []),
      ]
      // Under --json stdout holds the merged report alone; every line for a person goes to stderr.
      const lines = args.json ? io.err : io.out
      lines.write(`${fleetTable(merged)}\n\n`)
      const unwritten: string[] = []
      const named = [args.out, args.junit].filter((p): p is string => p !== undefined)
      try {
        if (files.length > 0) await writeAtomicAll(files)
      } catch (error) {
        unwritten.push(
          `could not write ${named.join(' and ')}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}; ${named.length > 1 ? 'neither was' : 'it was not'} written`,
        )
      }
      if (args.json) io.out.write(text)
      if (io.env.GITHUB_STEP_SUMMARY && unwritten.length === 0) {
        try {
          await appendFile(io.env.GITHUB_STEP_SUMMARY, `${fleetMarkdown(merged, { reportPath: args.out ?? null })}\n`)
        } catch (error) {
          unwritten.push(
            `could not append the step summary to ${io.env.GITHUB_STEP_SUMMARY}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
          )
        }
      }
      const counts = `${read.length} shard report(s)`
      if (unwritten.length > 0) {
        for (const line of unwritten) io.err.write(`armproof merge-reports: ${line}\n`)
        lines.write(
          `merged ${counts}: fleet ${merged.verdict.toUpperCase()}, ${merged.targets.length} target(s); exit ${EXIT_OUTPUT_UNWRITTEN}: the merged verdict stands, but not every output was written\n`,
        )
        return EXIT_OUTPUT_UNWRITTEN
      }
      lines.write(
        `merged ${counts} into ${args.out ?? 'stdout'}: fleet ${merged.verdict.toUpperCase()}, ${merged.targets.length} target(s), exit ${merged.exitCode}\n`,
      )
      return merged.exitCode
    }
  }
  io.err.write(
    `armproof merge-reports: ${problems.length} problem(s); nothing was written.\n${problems.map((p) => `  - ${p.replace(/[\r\n]+/g, ' ')}`).join('\n')}\n${mergeUsage()}\n`,
  )
  return 2
}
