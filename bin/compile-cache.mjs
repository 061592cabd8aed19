// Node's compile cache for armproof's own commands: the compiled code of every module loaded after
// it is on (armproof's type-stripped sources, vitest, undici) is kept on disk and reused by the
// next run, which then skips most of its compiling. bin/run.mjs (the package scripts) turns it on
// before it loads the command's TypeScript entry; each entry (bin/verify.ts …, called straight)
// turns it on too, which does nothing when it is on already, and loads its command with a dynamic
// import after (a static import is compiled before any code runs). Plain JavaScript, typed by
// compile-cache.d.mts, so that run.mjs needs nothing stripped before the cache is on.
//
// The folder is NODE_COMPILE_CACHE's when that is set (Node has then turned the cache on itself),
// else armproof's own in the temp folder; NODE_DISABLE_COMPILE_CACHE=1 turns it off. vitest imports
// the suite file under a new `?vitest=<time>` URL every run, so each run leaves two entries (some
// 4 KB) nothing reads again: armproof's own folder is emptied once it holds more than MAX_ENTRIES,
// which costs the next run one cold start instead of letting the folder grow without end.
import { readdirSync, rmSync } from 'node:fs'
import { enableCompileCache, getCompileCacheDir } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const COMPILE_CACHE = join(tmpdir(), 'armproof-compile-cache')
/** About 1,000 runs' leftovers on top of what the runs share (some 1,100 entries, 7 MB). */
export const MAX_ENTRIES = 3000

/** Entries in the cache (Node keeps one folder per Node version and build inside it). */
export function cacheEntries(dir) {
  let entries = 0
  try {
    for (const version of readdirSync(dir)) entries += readdirSync(join(dir, version)).length
  } catch {
    // no cache yet, or a version folder removed meanwhile
  }
  return entries
}

/** Empties `dir` when it holds more than `max` entries; says whether it did. */
export function pruneCompileCache(dir, max) {
  if (cacheEntries(dir) <= max) return false
  rmSync(dir, { recursive: true, force: true })
  return true
}

/** Turns the cache on for this process (armproof's folder, bounded, unless NODE_COMPILE_CACHE chose one or it is on already). */
export function startCompileCache(env = process.env) {
  if (env.NODE_DISABLE_COMPILE_CACHE || env.NODE_COMPILE_CACHE || getCompileCacheDir() !== undefined) return
  pruneCompileCache(COMPILE_CACHE, MAX_ENTRIES)
  enableCompileCache(COMPILE_CACHE)
}
