// The one way armproof writes a whole file of its own (the JSON report, the JUnit XML, a
// recording's run.json): a temp file in the same folder, then a rename, so a reader sees the old
// file or the new one, never half of one. (Replacing a vault page, which must also keep its owner
// and refuse a page changed meanwhile, is helpers/writeback/atomic.ts.)
import { closeSync, mkdirSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { mkdir, rename, rm, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

/** Writes `text` to `path` atomically; creates the folder. */
export async function writeAtomic(path: string, text: string): Promise<void> {
  await writeAtomicAll([{ path, text }])
}

/**
 * The same, synchronously: what a signal handler can still do before the process ends. `text` may
 * come in pieces (a fleet's report, one target at a time), so no whole copy of it is ever made.
 */
export function writeAtomicSync(path: string, text: string | Iterable<string>): void {
  const dir = dirname(path)
  mkdirSync(dir, { recursive: true })
  const temp = join(dir, `.${basename(path)}.${process.pid}.${Date.now().toString(36)}.tmp`)
  try {
    if (typeof text === 'string') writeFileSync(temp, text, 'utf8')
    else {
      const fd = openSync(temp, 'w')
      try {
        for (const piece of text) writeFileSync(fd, piece, 'utf8')
      } finally {
        closeSync(fd)
      }
    }
    renameSync(temp, path)
  } catch (error) {
    rmSync(temp, { force: true })
    throw error
  }
}

/**
 * Writes several files as one: every temp file first (a full disk or a refused folder fails here,
 * before any file is replaced, and the temp files are removed), then the renames. A caller that
 * must write all or nothing (merge-reports' JSON and JUnit) uses this.
 */
export async function writeAtomicAll(files: ReadonlyArray<{ path: string; text: string }>): Promise<void> {
  const temps: Array<{ temp: string; path: string }> = []
  try {
    for (const { path, text } of files) {
      const dir = dirname(path)
      await mkdir(dir, { recursive: true })
      const temp = join(dir, `.${basename(path)}.${process.pid}.${Date.now().toString(36)}.tmp`)
      temps.push({ temp, path })
      await writeFile(temp, text, 'utf8')
    }
  } catch (error) {
    await Promise.all(temps.map(({ temp }) => rm(temp, { force: true })))
    throw error
  }
  let renamed = 0
  try {
    for (const { temp, path } of temps) {
      await rename(temp, path)
      renamed++
    }
  } catch (error) {
    await Promise.all(temps.slice(renamed).map(({ temp }) => rm(temp, { force: true })))
    throw error
  }
}
