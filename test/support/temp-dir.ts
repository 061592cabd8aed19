// Folders the tests make in the system temp folder (os.tmpdir()). Each one is removed once the
// test file that made it has run, passed or failed: the unit project's setup file
// (./temp-dir-sweep.ts) runs removeTempDirs after every file. A worker runs one file at a time and
// keeps this module from one file to the next (isolate: false), so what the set holds when a
// file ends is that file's. A script (pnpm perf, faults-doc) that makes one removes it itself
// (removeTempDir, run-verify.ts' cleanup).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const made = new Set<string>()

/** A fresh folder `<tmpdir>/<prefix>XXXXXX`, removed after the test file that asked for it. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  made.add(dir)
  return dir
}

/** Removes one folder tempDir made, now (what it holds is no longer needed). */
export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true })
  made.delete(dir)
}

/** Removes every folder tempDir made and no one removed yet. */
export function removeTempDirs(): void {
  for (const dir of made) removeTempDir(dir)
}
