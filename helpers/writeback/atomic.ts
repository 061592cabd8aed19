// Replaces a page atomically: a temp file in the same folder with the page's mode and owner,
// fsync, a check that nobody changed the page meanwhile, rename over it, fsync the folder. Any
// failure removes the temp file and leaves the page as it was. Callers hold the page's lock
// (lock.ts). The fs calls are a seam for tests.
import { chmod, chown, open, readFile, rename, rm, stat } from 'node:fs/promises'
import { dirname } from 'node:path'
import { tempPathOf } from './lock.ts'

export interface TempHandle {
  writeFile(data: Uint8Array): Promise<unknown>
  sync(): Promise<unknown>
  close(): Promise<unknown>
}

export interface WritebackFs {
  open(path: string, flags: string, mode: number): Promise<TempHandle>
  chmod(path: string, mode: number): Promise<unknown>
  chown(path: string, uid: number, gid: number): Promise<unknown>
  stat(path: string): Promise<{ uid: number; gid: number; mode: number }>
  readFile(path: string): Promise<Uint8Array>
  rename(from: string, to: string): Promise<unknown>
  rm(path: string, options: { force: boolean }): Promise<unknown>
}

export const nodeFs: WritebackFs = { open, chmod, chown, stat, readFile, rename, rm }

/** The page changed between our read and our rename (another writer); nothing was replaced. */
export class PageChangedError extends Error {}

/** The page's owner or group cannot be kept (we may not give a file away); nothing was replaced. */
export class OwnerError extends Error {}

export async function replaceAtomic(path: string, data: Uint8Array, expected: Uint8Array, fs: WritebackFs = nodeFs): Promise<void> {
  const page = await fs.stat(path)
  const mode = page.mode & 0o7777
  const dir = dirname(path)
  const temp = tempPathOf(path, 'write')
  try {
    const handle = await fs.open(temp, 'wx', mode)
    try {
      await handle.writeFile(data)
      await handle.sync()
    } finally {
      await handle.close()
    }
    const made = await fs.stat(temp)
    if (made.uid !== page.uid || made.gid !== page.gid) {
      try {
        await fs.chown(temp, page.uid, page.gid)
      } catch (error) {
        throw new OwnerError(
          `the page is owned by uid ${page.uid} gid ${page.gid}, and this user (uid ${made.uid}) cannot keep that owner (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
        )
      }
    }
    await fs.chmod(temp, mode) // open's mode is masked by the umask; chown may clear set-id bits
    if (!Buffer.from(await fs.readFile(path)).equals(Buffer.from(expected))) throw new PageChangedError('the page changed while writing')
    await fs.rename(temp, path)
  } catch (error) {
    await fs.rm(temp, { force: true }).catch(() => undefined)
    throw error
  }
  await syncDir(dir)
}

/** Makes the rename durable; best effort (some filesystems refuse to open a folder). */
async function syncDir(dir: string): Promise<void> {
  try {
    const h = await open(dir, 'r')
    try {
      await h.sync()
    } finally {
      await h.close()
    }
  } catch {
    // the rename itself is done; durability of the folder entry is the filesystem's
  }
}
