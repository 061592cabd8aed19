// The one way armproof writes a whole file of its own (the JSON report, the JUnit XML, a
// recording's run.json): a temp file in the same folder, then a rename, so a reader sees the old
// file or the new one, never half of one. (Replacing a vault page, which must also keep its owner
// and refuse a page changed meanwhile, is helpers/writeback/atomic.ts.)
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { mkdir, rename, rm, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

/** Writes `text` to `path` atomically; creates the folder. */
export async function writeAtomic(path: string, text: string): Promise<void> {
  const dir = dirname(path)
  await mkdir(dir, { recursive: true })
  const temp = join(dir, `.${basename(path)}.${process.pid}.${Date.now().toString(36)}.tmp`)
  try {
    await writeFile(temp, text, 'utf8')
    await rename(temp, path)
  } catch (error) {
    await rm(temp, { force: true })
    throw error
  }
}

/** The same, synchronously: what a signal handler can still do before the process ends. */
export function writeAtomicSync(path: string, text: string): void {
  const dir = dirname(path)
  mkdirSync(dir, { recursive: true })
  const temp = join(dir, `.${basename(path)}.${process.pid}.${Date.now().toString(36)}.tmp`)
  try {
    writeFileSync(temp, text, 'utf8')
    renameSync(temp, path)
  } catch (error) {
    rmSync(temp, { force: true })
    throw error
  }
}
