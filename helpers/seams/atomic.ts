// The one way armproof writes a whole file of its own (the JSON report, the JUnit XML, a
// recording's run.json): a temp file in the same folder, then a rename, so a reader sees the old
// file or the new one, never half of one. (Replacing a vault page, which must also keep its owner
// and refuse a page changed meanwhile, is helpers/writeback/atomic.ts.)
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
