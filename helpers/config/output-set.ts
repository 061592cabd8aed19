// A run's outputs are one set, checked before anything is contacted: no two of them on one path
// (after resolving symlinks: `--report X --junit X` would leave X holding whichever came last while
// the last line names the other), none over a file the run reads (the targets file, a shard
// report), and none inside a fixtures folder the run records or replays (`--report D/run.json`
// would overwrite the recording's own run.json): a fixtures folder holds its recording only.
import { realpathSync } from 'node:fs'
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path'
import type { ConfigProblem } from './load.ts'
import { showValue } from './shell.ts'

/** One path a run claims: a file it writes, a fixtures folder it records or replays, or a file it reads. */
export interface PathClaim {
  /** The option (or env, or `targets[3] fixtures`) that names it, for the message. */
  option: string
  path: string
  role: 'writes' | 'records' | 'replays' | 'reads'
  /** The targets file's entry (0-based) that claims it, in a fleet run. */
  entry?: number
}

/** The entries of the claims a problem names, in the order its message names them. */
const entriesOf = (...claims: PathClaim[]): { entries?: number[] } => {
  const entries = claims.flatMap((c) => (c.entry === undefined ? [] : [c.entry]))
  return entries.length > 0 ? { entries } : {}
}

/** `path` with every symlink of its nearest existing ancestor resolved; the part not yet made is kept as given. */
export function realPathOf(path: string): string {
  const rest: string[] = []
  let p = path
  for (;;) {
    try {
      return join(realpathSync(p), ...rest.reverse())
    } catch {
      const up = dirname(p)
      if (up === p) return path
      rest.push(basename(p))
      p = up
    }
  }
}

const within = (folder: string, p: string) => {
  const rel = relative(folder, p)
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel)
}

/** Every clash in the set, one problem each (exit 2, before contact). */
export function outputSetProblems(claims: readonly PathClaim[], cwd: string): ConfigProblem[] {
  const resolved = claims.map((c) => ({ ...c, real: realPathOf(resolve(cwd, c.path)) }))
  const problems: ConfigProblem[] = []
  for (const [i, a] of resolved.entries()) {
    for (const b of resolved.slice(0, i)) {
      if (a.role === 'reads' && b.role === 'reads') continue
      const [first, second] = [b, a]
      if (a.real === b.real) {
        const read = first.role === 'reads' ? first : second.role === 'reads' ? second : undefined
        const written = read === first ? second : first
        problems.push({
          option: written.option,
          ...(read ? entriesOf(written, read) : entriesOf(first, second)),
          message: read
            ? `${written.option}: ${showValue(written.path)} is also ${read.option} (${showValue(read.path)}), which this run reads: writing it would destroy it; give the output another path`
            : `${first.option} and ${second.option}: ${first.path === second.path ? `both name ${showValue(first.path)}` : `${showValue(first.path)} and ${showValue(second.path)} are one path once symlinks are resolved`}: one would overwrite the other; give each output its own path`,
        })
        continue
      }
      for (const [folder, inner] of [
        [first, second],
        [second, first],
      ] as const) {
        if ((folder.role === 'records' || folder.role === 'replays') && inner.role !== 'reads' && within(folder.real, inner.real)) {
          problems.push({
            option: inner.option,
            ...entriesOf(inner, folder),
            message: `${inner.option}: ${showValue(inner.path)} is inside the fixtures folder ${folder.role === 'records' ? 'being recorded' : 'being replayed'} (${folder.option} ${showValue(folder.path)}): a fixtures folder holds its recording only, and this output could overwrite or mix into it; write it elsewhere`,
          })
        }
      }
    }
  }
  return problems
}
