// A fleet run's plan, before anything is contacted: the targets file read and every target
// validated exactly as a one-target run is (the same loader), with its entry over the command
// line over `defaults:` over env and .env. Every problem of every target comes back at once.
import { resolve } from 'node:path'
import { loadConfig, type ConfigProblem, type Target } from '../config/load.ts'
import { claimsOf, outputProblem, outputProblems } from '../config/outputs.ts'
import { outputSetProblems, type PathClaim } from '../config/output-set.ts'
import { showValue } from '../config/shell.ts'
import { targetForRun } from '../seams/recording.ts'
import { fleetRunIdentity, type FleetRunIdentity } from '../report/identity.ts'
import { OPTIONS, type OptionFlag } from '../config/options.ts'
import { commandLineLayer, type CommandLine, type OptionLayer } from '../config/sources.ts'
import { parseShard, shardOf, type Shard } from './shard.ts'
import { parseTargetsFile, readBounded, type Entry, type EntryLines, type TargetsFile } from './targets-file.ts'

/** The largest `--concurrency N`; without one (or with `auto`) the run lets in as many as it can afford (./admission.ts). */
export const MAX_CONCURRENCY = 4096

/** One target of the fleet: its label (unique in the run), its identity (for shards) and the validated target. */
export interface FleetTarget {
  label: string
  identity: string
  /** Its place in the targets file (0-based). */
  index: number
  target: Target
}

export interface FleetPlan {
  file: string
  targets: FleetTarget[]
  /** How many targets the file lists (all shards together). */
  total: number
  /** `--concurrency N`: at most N at once; null (`auto`, the default): as many as the run can afford (./admission.ts). */
  concurrency: number | null
  shard: Shard | null
  report: string | null
  junit: string | null
  /** --summary PATH (or VERIFY_SUMMARY): the fleet's Markdown summary, run-wide. */
  summary: string | null
  /** The run's identity: the targets file's digest and every target's run id (all shards), for merge-reports. */
  run: FleetRunIdentity
}

/** The options a fleet run reads for itself (the rest go to every target). */
const RUN_FLAGS = ['targets', 'concurrency', 'shard', 'run-id', 'report', 'junit', 'summary'] as const

/** The fleet's own flags, from the command line read once (the one command-line parser). */
function runFlagsOf(cli: OptionLayer): Map<string, string> {
  const out = new Map<string, string>()
  for (const flag of RUN_FLAGS) {
    const v = cli.values.get(flag)
    if (typeof v === 'string') out.set(flag, v)
  }
  return out
}

/** Whether this invocation is a fleet run (`--targets` or VERIFY_TARGETS). */
export function isFleetRun(cli: OptionLayer, env: Readonly<Record<string, string | undefined>>): boolean {
  return runFlagsOf(cli).has('targets') || (env.VERIFY_TARGETS !== undefined && env.VERIFY_TARGETS !== '')
}

/** `--concurrency` or `--shard` given without a targets file: a problem (they mean nothing for one target). */
export function strayFleetFlags(cli: OptionLayer): ConfigProblem[] {
  const flags = runFlagsOf(cli)
  return ['concurrency', 'shard', 'run-id']
    .filter((f) => flags.has(f))
    .map((f) => ({ option: `--${f}`, message: `--${f}: only applies to a fleet run (--targets FILE)` }))
}

/** A targets file's entry or its `defaults:` as an option layer: each key its option, at its line. */
function fileLayer(
  name: 'entry' | 'defaults',
  entry: Entry,
  lines: EntryLines,
  file: string,
  spelled: (key: string) => string,
): OptionLayer {
  const values = new Map<OptionFlag, string | boolean>()
  for (const [key, value] of entry) values.set(key as OptionFlag, SWITCHES.has(key) ? value === 'true' : value)
  return {
    name,
    values,
    spelled,
    spot: (flag) => {
      const line = entry.has(flag) ? lines.keys.get(flag) : undefined
      return line === undefined ? undefined : { file, line }
    },
  }
}

const SWITCHES = new Set<string>(OPTIONS.filter((o) => o.kind === 'boolean').map((o) => o.flag))

/** The option a problem of the run's checks names (`--fixtures` → fixtures); those checks name it by its flag. */
function optionKey(option: string): string | undefined {
  return /^--([a-z-]+)/.exec(option)?.[1]
}

function hostPort(t: Target): string {
  if (t.baseUrl) {
    const u = new URL(t.baseUrl)
    return `${u.hostname}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`
  }
  return t.fixtures
}

export interface PlanInput {
  argv: readonly string[]
  /** The command line already read (its options are `argv`'s); read here when not given. */
  commandLine?: CommandLine
  env: Readonly<Record<string, string | undefined>>
  dotenv?: string
  cwd: string
}

/** The plan, with the targets file as read (for serve, which runs each entry as its own verify); or every problem. */
export function planFleet(
  input: PlanInput,
): { ok: true; plan: FleetPlan; warnings: string[]; targetsFile: TargetsFile } | { ok: false; problems: ConfigProblem[] } {
  const warnings: string[] = []
  // The command line, read once: the fleet's own flags, and a layer of every target's options.
  const cli = input.commandLine ?? commandLineLayer(input.argv)
  const problems: ConfigProblem[] = [...cli.problems]
  const flags = runFlagsOf(cli.layer)
  const fromEnv = (flag: string, env: string): { value: string; from: string } | undefined =>
    flags.has(flag) ? { value: flags.get(flag)!, from: `--${flag}` } : input.env[env] ? { value: input.env[env]!, from: env } : undefined
  const fileRaw = fromEnv('targets', 'VERIFY_TARGETS')!
  const path = resolve(input.cwd, fileRaw.value)

  let concurrency: number | null = null
  const c = fromEnv('concurrency', 'VERIFY_CONCURRENCY')
  if (c && c.value !== 'auto') {
    const n = /^\d{1,4}$/.test(c.value) ? Number(c.value) : NaN
    if (!(n >= 1 && n <= MAX_CONCURRENCY))
      problems.push({ option: c.from, message: `${c.from}: ${showValue(c.value, 40)} must be auto or a whole number 1–${MAX_CONCURRENCY}` })
    else concurrency = n
  }
  let shard: Shard | null = null
  const s = fromEnv('shard', 'VERIFY_SHARD')
  if (s) {
    const parsed = parseShard(s.value)
    if (typeof parsed === 'string') problems.push({ option: s.from, message: `${s.from}: ${parsed}` })
    else shard = parsed
  }
  // The run's own name, so that merge-reports tells this run's shards from an earlier run's: a CI's run id when none is given.
  const idRaw =
    fromEnv('run-id', 'VERIFY_RUN_ID') ??
    (['GITHUB_RUN_ID', 'CI_PIPELINE_ID'] as const).flatMap((k) => (input.env[k] ? [{ value: input.env[k]!, from: k }] : []))[0]
  let instance: string | null = null
  if (idRaw) {
    if (/^[A-Za-z0-9._:@-]{1,128}$/.test(idRaw.value)) instance = idRaw.value
    else
      problems.push({
        option: idRaw.from,
        message: `${idRaw.from}: ${showValue(idRaw.value, 40)} must be one word of [A-Za-z0-9._:@-], at most 128 characters`,
      })
  }
  // Output paths are the operator's: relative to where they ran the command (as one target's).
  const mine = (flag: string, env: string): string | null => {
    const v = fromEnv(flag, env)?.value
    return v ? resolve(input.cwd, v) : null
  }
  const report = mine('report', 'VERIFY_REPORT')
  const junit = mine('junit', 'VERIFY_JUNIT')
  const summary = mine('summary', 'VERIFY_SUMMARY')
  for (const [option, p] of [
    ['--report', report],
    ['--junit', junit],
    ['--summary', summary],
  ] as const) {
    if (!p) continue
    const why = outputProblem({ option, path: p, kind: 'file' }, input.cwd)
    if (why) problems.push({ option, message: why })
  }
  if (input.env.GITHUB_STEP_SUMMARY) {
    const why = outputProblem({ option: 'GITHUB_STEP_SUMMARY', path: input.env.GITHUB_STEP_SUMMARY, kind: 'file', append: true }, input.cwd)
    if (why) problems.push({ option: 'GITHUB_STEP_SUMMARY', message: why })
  }

  const read = readBounded(path)
  if ('problem' in read) {
    problems.push({ option: fileRaw.from, message: `${fileRaw.from}: ${showValue(fileRaw.value)} ${read.problem}` })
    return { ok: false, problems }
  }
  // Every problem is said at its place in the file: `fleet.yaml:12: targets[2] ("llm-9"): base-url: …`,
  // and carries that place as data (`at`: the file, the line, the key as the file spells it).
  const inFile = (option: string, line: number | undefined, key: string | undefined, message: string): ConfigProblem => ({
    option,
    message: `${fileRaw.value}${line !== undefined ? `:${line}` : ''}: ${message}`,
    at: { file: fileRaw.value, ...(line !== undefined ? { line } : {}), ...(key !== undefined ? { key } : {}) },
  })
  /** The problems in the file's order (a compiler's), the run's own (no line) first; the sort is stable. */
  const inFileOrder = (ps: ConfigProblem[]): ConfigProblem[] => [...ps].sort((a, b) => (a.at?.line ?? 0) - (b.at?.line ?? 0))
  const parsed = parseTargetsFile(read.text)
  if (!('file' in parsed)) {
    for (const p of parsed.problems) problems.push(inFile(p.where, p.line, p.key, p.message))
    return { ok: false, problems: inFileOrder(problems) }
  }
  const { defaults, targets: entries, lines } = parsed.file
  /** `targets[2] ("llm-9")`: an entry as every problem of it names it. */
  const label = (index: number) => {
    const name = entries[index]!.get('svc') ?? defaults.get('svc')
    return `targets[${index}]${name ? ` (${showValue(name, 40)})` : ''}`
  }
  for (const p of parsed.problems) {
    const index = /^targets\[(\d+)\]$/.exec(p.where)?.[1]
    const message = index === undefined ? p.message : p.message.replace(p.where, label(Number(index)))
    problems.push(inFile(p.where, p.line, p.key, message))
  }
  const defaultsLayer = fileLayer('defaults', defaults, lines.defaults, fileRaw.value, (key) => `defaults.${key}`)
  const validated: Array<{ index: number; target: Target }> = []
  // A key file is read once for all the targets (a pipe gives its text only once).
  const keyFiles = new Map<string, string>()
  for (const [index, entry] of entries.entries()) {
    const where = label(index)
    const entryLines = lines.targets[index]!
    // A key this entry misspelt was said above (with its "did you mean"): its "is required" would say it twice.
    const misspelt = new Set(parsed.problems.filter((p) => p.where === `targets[${index}]` && p.meant).map((p) => p.meant!))
    /** A problem of this target, at the line of the value it is about (its entry's key, or defaults:'), else the entry's. */
    const ofTarget = (line: number | undefined, key: string | undefined, message: string) =>
      inFile(where, line ?? entryLines.at, key, `${where}: ${message}`)
    /** The line of an option of this target: its key in the entry, else in defaults:. */
    const lineOf = (key: string | undefined) =>
      key === undefined
        ? undefined
        : entry.has(key)
          ? entryLines.keys.get(key)
          : defaults.has(key)
            ? lines.defaults.keys.get(key)
            : undefined
    // The entry over the command line over defaults:, then env and .env (helpers/config/sources.ts).
    const layers = [fileLayer('entry', entry, entryLines, fileRaw.value, (key) => key), cli.layer, defaultsLayer]
    const config = loadConfig({ layers, env: input.env, cwd: input.cwd, keyFiles, ...(input.dotenv ? { dotenv: input.dotenv } : {}) })
    if (!config.ok) {
      for (const p of config.problems) {
        if (p.missing && p.key !== undefined && misspelt.has(p.key)) continue
        // A command-line value every target takes is one problem, said once.
        if (p.layer === 'command line') {
          if (!problems.some((q) => q.message === p.message)) problems.push({ option: p.option, message: p.message })
          continue
        }
        // The key as the file spells it: where the value sits in the file, or the one the entry lacks (env's values are not the file's).
        const key =
          p.key === undefined
            ? undefined
            : p.layer === 'defaults'
              ? `defaults.${p.key}`
              : p.layer === 'entry' || p.missing
                ? p.key
                : undefined
        problems.push(ofTarget(p.spot?.line, key, p.message))
      }
      continue
    }
    for (const w of config.warnings) if (!warnings.includes(w)) warnings.push(w)
    const run = targetForRun(config.target)
    if ('problems' in run) {
      for (const p of run.problems) problems.push(ofTarget(lineOf(optionKey(p.option)), optionKey(p.option), p.message))
      continue
    }
    const target: Target = { ...run.target, report: null, junit: null, summary: null }
    for (const p of outputProblems(target, {}, input.cwd))
      problems.push(ofTarget(lineOf(optionKey(p.option)), optionKey(p.option), p.message))
    validated.push({ index, target })
  }
  // The run's outputs are one set with every target's fixtures folder (no two on one path, none
  // inside a folder being recorded or replayed, none over the targets file): config/output-set.ts.
  const claims: PathClaim[] = [
    { option: fileRaw.from, path, role: 'reads' },
    ...[
      ['--report', report],
      ['--junit', junit],
      ['--summary', summary],
      ['GITHUB_STEP_SUMMARY', input.env.GITHUB_STEP_SUMMARY ?? null],
    ].flatMap(([option, p]) => (p ? [{ option: option!, path: p, role: 'writes' as const }] : [])),
    ...validated.flatMap(({ index, target }) => claimsOf(target, {}, `targets[${index}] fixtures`, index)),
  ]
  // A clash that names a target's fixtures folder is said at that entry's `fixtures:` line (its last target's).
  for (const p of outputSetProblems(claims, input.cwd)) {
    const index = p.entries?.at(-1)
    problems.push(
      index === undefined
        ? p
        : inFile(p.option, lines.targets[index]!.keys.get('fixtures') ?? lines.targets[index]!.at, 'fixtures', p.message),
    )
  }
  // Two entries for one target are the file's mistake.
  const seen = new Map<string, number>()
  const identities: string[] = []
  for (const { index, target } of validated) {
    const identity = `${target.svc} ${target.knob} ${target.baseUrl ?? `fixtures ${target.fixtures}`}`
    identities.push(identity)
    const dup = seen.get(identity)
    if (dup !== undefined)
      problems.push(
        inFile(
          `targets[${index}]`,
          lines.targets[index]!.at,
          undefined,
          `${label(index)}: the same target as targets[${dup}] (${identity}); list each once`,
        ),
      )
    else seen.set(identity, index)
  }
  if (problems.length > 0) return { ok: false, problems: inFileOrder(problems) }
  if (shard && shard.count > validated.length) {
    return {
      ok: false,
      problems: [
        {
          option: '--shard',
          message: `--shard ${shard.index}/${shard.count}: the file lists ${validated.length} target(s), fewer than ${shard.count} shards; use at most ${validated.length} shards`,
        },
      ],
    }
  }
  const picked = shard ? new Set(shardOf(identities, shard)) : undefined
  const svcCount = new Map<string, number>()
  for (const { target } of validated) svcCount.set(target.svc, (svcCount.get(target.svc) ?? 0) + 1)
  const fleet: FleetTarget[] = []
  const labels = new Set<string>()
  for (const [k, { index, target }] of validated.entries()) {
    let label = svcCount.get(target.svc) === 1 ? target.svc : `${target.svc}@${hostPort(target)}`
    if (labels.has(label)) label = `${label} ${target.knob}`
    labels.add(label)
    if (!picked || picked.has(k)) fleet.push({ label, identity: identities[k]!, index, target })
  }
  const run = fleetRunIdentity(
    read.text,
    validated.map((v) => v.target),
    instance,
  )
  return {
    ok: true,
    warnings,
    targetsFile: parsed.file,
    plan: { file: fileRaw.value, targets: fleet, total: validated.length, concurrency, shard, report, junit, summary, run },
  }
}
