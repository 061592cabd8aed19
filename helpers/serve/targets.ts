// The targets `armproof serve` can run: its targets file, checked exactly as
// `pnpm verify --targets FILE` checks it (helpers/fleet/plan.ts: every target validated by the same
// loader, every problem at once), and for each target the argv of a one-target `verify` of it
// (the file's `defaults:` under its entry, helpers/fleet/targets-file.ts). Read at start, where any
// problem keeps serve from starting, and again whenever the file changes (TargetsCache: its
// inode, size and times, looked at per request; the file itself read once per change, in a
// thread of its own: helpers/serve/targets-worker.ts), so a changed file (a Kubernetes ConfigMap updated with the rollout) is what the next run proves.
// Each target stands on its own: a problem of one entry (a missing api-key-file, a misspelt knob)
// fails that target's requests only, with its own problem; the file as a whole (its YAML, its
// shape) failing fails all.
import { statSync } from 'node:fs'
import { basename } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { ConfigProblem } from '../config/sources.ts'
import { planFleet } from '../fleet/plan.ts'
import { parseTargetsFile, readBounded, RUN_LEVEL, targetArgv, type TargetsFile } from '../fleet/targets-file.ts'
import { OPTIONS } from '../config/options.ts'
import { showValue } from '../config/shell.ts'
import { unaskable } from './routes.ts'

/** What is wrong with one target, said without its values: where in the file, which key. */
export interface TargetProblem {
  /** `targets[2]`, as the file's problems name the entry. */
  where: string
  /** `targets.yaml:12 (api-key-file)`: each problem's place, no value of the file. */
  spots: string[]
  /** The problems as verify says them (values shown): for serve's log, never an answer. */
  messages: string[]
}

export interface ServedTargets {
  /** svc → the argv of `verify` for that target (never a secret: the file refuses keys). */
  argv: ReadonlyMap<string, readonly string[]>
  /** svc → its problems: its requests are answered with them, no run started. */
  broken: ReadonlyMap<string, TargetProblem>
  warnings: string[]
}

export type LoadedTargets =
  | { targets: ServedTargets; problems: string[] }
  /** The file as a whole cannot be used (unreadable, not YAML, not a targets file): `problems` for the log, `spots` for an answer. */
  | { file: { problems: string[]; spots: string[] } }

/**
 * The env twins of the options a targets file refuses per target (the whole run's: its outputs,
 * its fleet knobs, its mode), emptied in every run's env: serve names the report itself, and env or
 * .env can turn no run into a fleet run, add outputs, or make it a replay (a recording's green is
 * no verdict on the engine now).
 */
export const RUN_LEVEL_ENV: readonly string[] = OPTIONS.filter((o) => RUN_LEVEL.has(o.flag)).map((o) => o.env)

const ENTRY = /^targets\[(\d+)\]/

/** A problem's place in words: `targets.yaml:12 (api-key-file)`. */
function spotOf(file: string, p: ConfigProblem): string {
  const line = p.at?.line
  return `${basename(file)}${line !== undefined ? `:${line}` : ''}${p.at?.key ? ` (${p.at.key})` : ''}`
}

/** The file's targets by svc, each good or with its own problems; or the problems of the file as a whole. */
export function loadServedTargets(
  file: string,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
  dotenv: string | undefined,
): LoadedTargets {
  // Validated as verify validates a fleet run, with the env a run gets (no run-level twins): the
  // file's shape and every target's values in one answer, each problem at its file:line.
  const planned = planFleet({
    argv: ['--targets', file],
    env: { ...env, ...Object.fromEntries(RUN_LEVEL_ENV.map((k) => [k, ''])) },
    cwd,
    ...(dotenv ? { dotenv } : {}),
  })
  const perEntry = new Map<number, ConfigProblem[]>()
  if (!planned.ok) {
    const whole = planned.problems.filter((p) => !ENTRY.test(p.option))
    if (whole.length > 0) return { file: { problems: planned.problems.map((p) => p.message), spots: whole.map((p) => spotOf(file, p)) } }
    for (const p of planned.problems) {
      const i = Number(ENTRY.exec(p.option)![1])
      perEntry.set(i, [...(perEntry.get(i) ?? []), p])
    }
  }
  // The entries as the file gives them (planFleet read the same text; a file that changed between
  // the two reads is read again at the next request, its change seen then).
  const read = readBounded(file)
  const parsed = 'text' in read ? parseTargetsFile(read.text) : undefined
  const whole: TargetsFile | undefined = parsed && 'file' in parsed ? (parsed as { file: TargetsFile }).file : undefined
  if (whole === undefined) return { file: { problems: ['the targets file changed while it was read'], spots: [basename(file)] } }
  const { defaults, targets: entries, lines } = whole
  const argv = new Map<string, readonly string[]>()
  const broken = new Map<string, TargetProblem>()
  const problems: string[] = []
  for (const [index, entry] of entries.entries()) {
    const svc = entry.get('svc') ?? defaults.get('svc')
    if (svc === undefined) continue
    const at = lines.targets[index]!.at
    const own: ConfigProblem[] = [...(perEntry.get(index) ?? [])]
    const why = unaskable(svc)
    if (why)
      own.push({
        option: `targets[${index}]`,
        message: `${file}:${at}: targets[${index}]: svc ${showValue(svc, 40)}: ${why}`,
        at: { file, line: at, key: 'svc' },
      })
    if (argv.has(svc) || broken.has(svc)) {
      problems.push(
        `${file}:${at}: targets[${index}]: svc ${showValue(svc, 40)} is listed twice; POST /verify/<svc> names one target, so serve needs each svc once (serve each knob or endpoint from its own file)`,
      )
      // Neither entry is run: the request could mean either.
      argv.delete(svc)
      broken.set(svc, {
        where: `targets[${index}]`,
        spots: [`${basename(file)}:${at} (svc)`],
        messages: [`svc ${showValue(svc, 40)} is listed twice`],
      })
      continue
    }
    if (own.length > 0) {
      problems.push(...own.map((p) => p.message))
      broken.set(svc, { where: `targets[${index}]`, spots: own.map((p) => spotOf(file, p)), messages: own.map((p) => p.message) })
      continue
    }
    argv.set(svc, targetArgv(defaults, [], entry))
  }
  for (const [index, ps] of perEntry) {
    const entry = entries[index]
    if (entry && (entry.get('svc') ?? defaults.get('svc')) === undefined) problems.push(...ps.map((p) => p.message))
  }
  return { targets: { argv, broken, warnings: planned.ok ? planned.warnings : [] }, problems }
}

/** helpers/serve/targets-worker.ts in the checkout, dist/helpers/serve/targets-worker.js in the installed package. */
export const TARGETS_WORKER_ENTRY = fileURLToPath(
  new URL(`./targets-worker.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`, import.meta.url),
)

/**
 * loadServedTargets in a thread of its own (helpers/serve/targets-worker.ts), so that checking a
 * large file holds no answer of the main thread; the same result. Rejects when the thread could
 * not give one (it could not start, it failed): the caller checks on the main thread then.
 */
export function loadTargetsOffThread(
  file: string,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
  dotenv: string | undefined,
): Promise<LoadedTargets> {
  return new Promise<LoadedTargets>((resolve, reject) => {
    let worker: Worker
    try {
      worker = new Worker(TARGETS_WORKER_ENTRY, { workerData: { file, env: { ...env }, cwd, dotenv }, stdout: true, stderr: true })
    } catch (error) {
      reject(error as Error)
      return
    }
    let got: LoadedTargets | undefined
    worker.once('message', (m: LoadedTargets) => (got = m))
    worker.once('error', reject)
    worker.once('exit', (code) => (got ? resolve(got) : reject(new Error(`the targets check's thread ended (${code}) without a result`))))
  })
}

/**
 * The check serve makes of a changed file: in its own thread; on the main thread should that
 * thread fail (said once through `say`, with the error's code only), never no answer.
 */
export function offThreadOr(
  offThread: () => Promise<LoadedTargets>,
  mainThread: () => LoadedTargets,
  say: (line: string) => void,
): () => Promise<LoadedTargets> {
  let said = false
  return () =>
    offThread().catch((error: unknown) => {
      if (!said)
        say(
          `armproof serve: the targets file is checked on the main thread (its own thread failed: ${(error as NodeJS.ErrnoException)?.code ?? (error as Error)?.name ?? 'error'})`,
        )
      said = true
      return mainThread()
    })
}

/** What a request sees of the targets: the last load, and when it was made. */
export interface TargetsView {
  loaded: LoadedTargets
  /** How many targets the file lists (good and broken), 0 when the file as a whole failed. */
  count: number
}

/**
 * The targets file, read once per change: each request looks at the file's inode, size and times
 * (one stat), and the file is read and checked again only when they differ, or, while some target
 * has a problem, at most every `recheckMs` (a problem may be a file the target names, an
 * api-key-file mounted later, which this stat does not see). `load` may answer later (serve's
 * checks the file in a thread of its own): the requests that came meanwhile wait for that one
 * check, and the main thread answers the others (`/healthz`) meanwhile.
 */
export class TargetsCache {
  private view: TargetsView
  private stamp: string
  private at: number
  private pending: Promise<TargetsView> | undefined
  private readonly file: string
  private readonly load: () => LoadedTargets | Promise<LoadedTargets>
  private readonly recheckMs: number
  private readonly onChange: (view: TargetsView) => void

  constructor(
    file: string,
    load: () => LoadedTargets | Promise<LoadedTargets>,
    first: LoadedTargets,
    options: { recheckMs?: number; onChange?: (v: TargetsView) => void } = {},
  ) {
    this.file = file
    this.load = load
    this.recheckMs = options.recheckMs ?? 10_000
    this.onChange = options.onChange ?? (() => {})
    this.stamp = this.stat()
    this.view = TargetsCache.viewOf(first)
    this.at = Date.now()
  }

  static viewOf(loaded: LoadedTargets): TargetsView {
    return { loaded, count: 'targets' in loaded ? loaded.targets.argv.size + loaded.targets.broken.size : 0 }
  }

  private stat(): string {
    try {
      const s = statSync(this.file, { bigint: true })
      return `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`
    } catch (error) {
      return `error:${(error as NodeJS.ErrnoException).code}`
    }
  }

  get last(): TargetsView {
    return this.view
  }

  /** The targets now: at once when the file is as last read, else once it is read again. */
  current(): TargetsView | Promise<TargetsView> {
    // A check under way: a change it did not see is looked at once it is done.
    if (this.pending) return this.pending.then(() => this.current())
    const stamp = this.stat()
    const failing = 'file' in this.view.loaded || this.view.loaded.problems.length > 0
    if (stamp === this.stamp && !(failing && Date.now() - this.at >= this.recheckMs)) return this.view
    const changed = stamp !== this.stamp
    this.stamp = stamp
    this.at = Date.now()
    const took = (loaded: LoadedTargets): TargetsView => {
      this.view = TargetsCache.viewOf(loaded)
      if (changed || failing) this.onChange(this.view)
      return this.view
    }
    const loaded = this.load()
    if (!(loaded instanceof Promise)) return took(loaded)
    this.pending = loaded.then(took).finally(() => (this.pending = undefined))
    return this.pending
  }
}
