// Where `pnpm test` puts its temp files when the caller sets no TMPDIR: on Linux, a folder of the
// user's own on the tmpfs at /dev/shm, shared by every run of that user (as /tmp is: the kept
// caches and the port leases of engine/proc.ts live there), when that tmpfs has room. The tests
// make and remove thousands of files (engine roots, shims, ledgers, reports, sockets); on a disk
// each create looks for a free inode and each remove is journalled (ext4, here: perf put 2 % of
// the whole suite's CPU in ext4's inode allocation alone). Elsewhere, or without room, the
// system's temp folder as before.
import { lstatSync, mkdirSync, statfsSync } from 'node:fs'
import { join } from 'node:path'

/** The tmpfs, as statfs names its type (linux/magic.h). */
const TMPFS_MAGIC = 0x01021994
/** What the tmpfs must have free: the tests' files peak far below it (the largest: tens of MB of ledger and metrics). */
const ROOM = 2 * 2 ** 30
const SHM = '/dev/shm'

/** The shared temp folder's path on Linux (the user's own name under `base`), whether or not it is usable; null elsewhere. */
export function sharedTempPath(base = SHM): string | null {
  const uid = process.getuid?.()
  return process.platform === 'linux' && uid !== undefined ? join(base, `armproof-test-${uid}`) : null
}

/**
 * The shared temp folder, made if missing (0711: others may pass through it to what a test makes
 * theirs, as the sshd tests' unprivileged user must, but neither list nor write it): only a real
 * folder owned by this user that no other can write (a name under /dev/shm anyone can take first,
 * as a link or a folder of their own, is refused); null where there is none (not Linux, `base` no
 * tmpfs, too little room on it, or the folder is not ours).
 */
export function sharedTempRoot(base = SHM): string | null {
  const dir = sharedTempPath(base)
  if (dir === null) return null
  try {
    const fs = statfsSync(base)
    if (fs.type !== TMPFS_MAGIC || fs.bavail * fs.bsize < ROOM) return null
    mkdirSync(dir, { mode: 0o711, recursive: true })
    return ours(dir) ? dir : null
  } catch {
    return null
  }
}

/** A folder (not a link to one) owned by this user that no other may write. */
export function ours(dir: string): boolean {
  const st = lstatSync(dir)
  return st.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o022) === 0
}
