// The files a run writes (--report, --junit, the step summary, the fixtures of a recording) are
// checked before anything is contacted: a path that is a directory, that cannot be written, or
// whose nearest existing parent is not a writable directory is refused (exit 2, one line each).
// The check really writes (a temp entry, removed at once): permissions, read-only mounts and
// special file systems all answer the way the real write will.
import { accessSync, closeSync, constants, existsSync, mkdtempSync, openSync, readFileSync, rmdirSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import type { ConfigProblem, Target } from './load.ts'
import { showValue } from './shell.ts'
import { outputSetProblems, type PathClaim } from './output-set.ts'

export interface OutputSpec {
  /** The option (or env) that names the path, for the message. */
  option: string
  path: string
  /** `file`: written whole (temp file + rename in its folder) or appended to; `folder`: a folder of files. */
  kind: 'file' | 'folder'
  /** Appended to, not replaced (the step summary): any writable file will do, a device too (/dev/stdout). */
  append?: boolean
}

function errno(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied'
  if (code === 'EROFS') return 'read-only file system'
  if (code === 'ENOTDIR') return 'a parent is not a directory'
  if (code === 'ENOSPC') return 'no space left'
  return code ?? (error as Error).message
}

/** A folder can take new entries: a temp folder is made in it and removed. */
function folderWritable(dir: string): string | undefined {
  try {
    const probe = mkdtempSync(join(dir, '.armproof-write-check-'))
    rmdirSync(probe)
    return undefined
  } catch (error) {
    return errno(error)
  }
}

/** The nearest existing ancestor of `path` (itself included), or undefined at a dead end. */
function nearestExisting(path: string): { path: string; isDir: boolean } | undefined {
  let p = path
  for (;;) {
    try {
      return { path: p, isDir: statSync(p).isDirectory() }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOTDIR') return { path: p, isDir: false }
      if (code !== 'ENOENT') return { path: p, isDir: false }
    }
    const up = dirname(p)
    if (up === p) return undefined
    p = up
  }
}

/** Why `spec` cannot be written, in one line, or undefined when it can. */
export function outputProblem(spec: OutputSpec, cwd: string): string | undefined {
  const abs = resolve(cwd, spec.path)
  const shown = showValue(spec.path)
  const say = (why: string) => `${spec.option}: ${shown} ${why}`
  let st: ReturnType<typeof statSync> | undefined
  try {
    st = statSync(abs)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'ENOENT' && code !== 'ENOTDIR') return say(`cannot be checked (${errno(error)})`)
  }
  if (st) {
    if (spec.kind === 'file') {
      if (st.isDirectory()) return say('is a directory; give a file path, e.g. reports/<svc>.json')
      if (!st.isFile() && !spec.append) return say('is not a regular file')
      try {
        accessSync(abs, constants.W_OK)
        closeSync(openSync(abs, 'a'))
      } catch (error) {
        return say(`cannot be written (${errno(error)})`)
      }
      if (spec.append) return undefined
      const why = folderWritable(dirname(abs))
      return why ? say(`cannot be replaced: its folder takes no new file (${why})`) : undefined
    }
    if (!st.isDirectory()) return say('is not a folder')
    const why = folderWritable(abs) ?? folderWritable(dirname(abs))
    return why ? say(`cannot be written (${why})`) : undefined
  }
  const parent = nearestExisting(dirname(abs))
  if (!parent) return say('has no existing parent folder')
  if (!parent.isDir) return say(`cannot be created: ${showValue(parent.path)} is not a folder`)
  const why = folderWritable(parent.path)
  return why ? say(`cannot be created under ${showValue(parent.path)} (${why})`) : undefined
}

/** The outputs a run will write, with the option that names each. */
export function outputsOf(target: Target, env: Readonly<Record<string, string | undefined>>): OutputSpec[] {
  const out: OutputSpec[] = []
  if (target.report) out.push({ option: '--report', path: target.report, kind: 'file' })
  if (target.junit) out.push({ option: '--junit', path: target.junit, kind: 'file' })
  if (target.summary) out.push({ option: '--summary', path: target.summary, kind: 'file' })
  if (env.GITHUB_STEP_SUMMARY) out.push({ option: 'GITHUB_STEP_SUMMARY', path: env.GITHUB_STEP_SUMMARY, kind: 'file', append: true })
  if (target.mode === 'record') out.push({ option: '--fixtures', path: target.fixtures, kind: 'folder' })
  return out
}

/** The paths a run claims, as one set (./output-set.ts): what it writes, and the fixtures folder it records or replays. */
/** `entry`: the targets file's entry the target is, in a fleet run. */
export function claimsOf(
  target: Target,
  env: Readonly<Record<string, string | undefined>>,
  fixturesOption = '--fixtures',
  entry?: number,
): PathClaim[] {
  const claims: PathClaim[] = outputsOf(target, env)
    .filter((o) => o.kind === 'file')
    .map((o) => ({ option: o.option, path: o.path, role: 'writes' }))
  if (target.mode !== 'live')
    claims.push({
      option: fixturesOption,
      path: target.fixtures,
      role: target.mode === 'record' ? 'records' : 'replays',
      ...(entry !== undefined ? { entry } : {}),
    })
  return claims
}

/** What recording a fixture folder holds (`svc KNOB=value, recorded at …`), or undefined when it holds none. */
export function heldRecording(folder: string): string | undefined {
  const path = join(folder, 'run.json')
  if (!existsSync(path)) return undefined
  try {
    const meta = JSON.parse(readFileSync(path, 'utf8')) as { svc?: unknown; knob?: unknown; value?: unknown; recordedAt?: unknown }
    return `${String(meta.svc)} ${String(meta.knob)}=${meta.value === null ? '(default)' : String(meta.value)}, recorded ${String(meta.recordedAt)}`
  } catch {
    return 'a run.json that does not parse'
  }
}

/**
 * Every output of one target that cannot be written, one problem each (exit 2, before anything
 * is contacted): each path on its own, the set (./output-set.ts), and a record mode's fixtures
 * folder that already holds a recording (refused unless --force). A fleet runs this per target.
 */
export function outputProblems(target: Target, env: Readonly<Record<string, string | undefined>>, cwd: string): ConfigProblem[] {
  const each = outputsOf(target, env).flatMap((spec) => {
    const message = outputProblem(spec, cwd)
    return message ? [{ option: spec.option, message }] : []
  })
  const held = target.mode === 'record' && !target.force ? heldRecording(resolve(cwd, target.fixtures)) : undefined
  const recorded = held
    ? [
        {
          option: '--fixtures',
          message: `--fixtures: ${target.fixtures} already holds a recording (${held}); record elsewhere with --fixtures DIR, or pass --force to overwrite it`,
        },
      ]
    : []
  return [...each, ...outputSetProblems(claimsOf(target, env), cwd), ...recorded]
}
