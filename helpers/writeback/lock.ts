// One writer per page: a lock file beside the page (`.<page>.armproof.lock`), created atomically
// (written whole to a temp file, then hard-linked into place, which fails if it exists), holding
// the holder's pid and host. A waiter polls for a bounded time; a lock whose holder is a dead
// process on this host is stale and is broken (under a short-lived breaker file, so two waiters
// never both break it). Also here: removing the temp files a killed writeback left behind.
//
// Why not proper-lockfile (4.1.2, the common npm choice; compared from its source and under this
// project's writeback tests): its lock is an empty directory (`mkdir`, atomic on NFS as our
// `link` is), kept fresh by rewriting its mtime every `update` ms and stale once that mtime is
// older than `stale` (the code clamps it to ≥ 2 s; default 10 s). What it cannot do, and this does:
// - say who holds the page: its lock holds no pid, host or time, so the refusal after the wait
//   cannot name the writeback to wait for or stop ("locked by pid N on H since T");
// - break a dead holder's lock at once: a writeback SIGKILLed on this host leaves a lock it takes
//   `stale` to break (2.8 s against well under 0.3 s here, the fault table's kill row), where
//   this checks the pid;
// - break a stale lock with one winner: it stats, `rmdir`s and `mkdir`s, so a waiter that saw
//   the stale lock can remove the fresh one another just made and both write the page
//   (moxystudio/node-proper-lockfile#121, open); here only the breaker-file holder removes, and
//   only a lock whose text is still the stale one.
// What it does that this does not: a dead holder on another host is broken after `stale` (by
// mtime, so the hosts' clocks must agree within it); here a foreign pid cannot be checked, so
// its lock stands until MAX_HOLD_MS and the waiter names it. A writeback holds a page for
// milliseconds, so no refresh timer is needed. With withPageLock on proper-lockfile, three rows of
// the writeback fault table fail: the holder named, an hour-old lock of a reused pid broken (the
// row writes it in this format), every waiter seen to find the lock held (writeback-race.ts
// counts their lock-temp files); the 20-writer race and the other writeback tests pass.
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { link, open, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

export interface LockOptions {
  /** How long to wait for another writer, in ms. */
  waitMs?: number
}

export const DEFAULT_LOCK_WAIT_MS = 30_000
/** A breaker file lives for microseconds; one older than this was left by a killed process. */
const BREAKER_STALE_MS = 5_000
/** No writeback holds a page this long (it takes milliseconds); an older lock is stale even if its pid now names a live process (pid reuse). */
export const MAX_HOLD_MS = 10 * 60_000
/** A lock-temp file is written and linked in microseconds; one older than this is garbage. */
const LOCK_TEMP_STALE_MS = 60_000
/** A lock file still empty after this long was left by a writer killed while creating it (no-hard-link filesystems only). */
const EMPTY_STALE_MS = 10_000

export interface Holder {
  pid: number
  host: string
  since: string
}

/** Another writer holds the page past the wait. */
export class LockBusyError extends Error {
  readonly lockPath: string
  readonly holder: Holder | null
  readonly waitedMs: number
  constructor(lockPath: string, holder: Holder | null, waitedMs: number) {
    super(`the page is locked by ${holder ? `pid ${holder.pid} on ${holder.host} since ${holder.since}` : 'an unreadable lock file'}`)
    this.lockPath = lockPath
    this.holder = holder
    this.waitedMs = waitedMs
  }
}

export const lockPathOf = (page: string) => join(dirname(page), `.${basename(page)}.armproof.lock`)

/** Temp files of armproof's writers: `.<page>.armproof-<pid>-<hex>.tmp` and `.<page>.armproof-lock-<pid>-<hex>.tmp`. */
const TEMP_RE = /^\..+\.armproof-(?:lock-)?(\d+)-[0-9a-f]+\.tmp$/

export function tempPathOf(page: string, kind: 'write' | 'lock'): string {
  return join(
    dirname(page),
    `.${basename(page)}.armproof-${kind === 'lock' ? 'lock-' : ''}${process.pid}-${randomBytes(4).toString('hex')}.tmp`,
  )
}

/** Whether a process with this pid runs on this host (EPERM: it runs, as another user). */
export function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function parseHolder(text: string): Holder | null {
  const m = /^(\d+) (\S+) (\S+)\n$/.exec(text)
  return m ? { pid: Number(m[1]), host: m[2]!, since: m[3]! } : null
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const code = (e: unknown) => (e as NodeJS.ErrnoException).code

/** Creates `path` holding `content`, atomically; false when it already exists. */
async function createWhole(page: string, path: string, content: string): Promise<boolean> {
  const temp = tempPathOf(page, 'lock')
  await writeFile(temp, content, { flag: 'wx', mode: 0o644 })
  try {
    await link(temp, path)
    return true
  } catch (error) {
    if (code(error) === 'EEXIST') return false
    if (!['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV'].includes(code(error) ?? '')) throw error
  } finally {
    await rm(temp, { force: true })
  }
  // A filesystem without hard links: exclusive create, then write (a waiter may briefly see it empty).
  try {
    const h = await open(path, 'wx', 0o644)
    try {
      await h.writeFile(content)
    } finally {
      await h.close()
    }
    return true
  } catch (error) {
    if (code(error) === 'EEXIST') return false
    throw error
  }
}

/**
 * The lock's text, or null when there is none. Read synchronously: a waiter reads it on every poll
 * (twenty writers on one page: some 2,000 reads in 200 writebacks), and a few-byte file read in
 * place costs some 30 µs of CPU against some 180 µs through the thread pool (open, fstat, read and
 * close, one round trip each), and holds the event loop for those microseconds only.
 */
async function readText(path: string): Promise<string | null> {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    if (code(error) === 'ENOENT') return null
    throw error
  }
}

/** Removes the lock if it still holds `staleText`, under a breaker so only one waiter breaks it. */
async function breakStale(page: string, lock: string, staleText: string): Promise<void> {
  const breaker = `${lock}.break`
  const mine = `${process.pid} ${randomBytes(4).toString('hex')}\n`
  if (!(await createWhole(page, breaker, mine))) {
    const st = await stat(breaker).catch(() => null)
    if (st && Date.now() - st.mtimeMs > BREAKER_STALE_MS) await rm(breaker, { force: true })
    return
  }
  try {
    if ((await readText(lock)) === staleText) await rm(lock, { force: true })
  } finally {
    if ((await readText(breaker)) === mine) await rm(breaker, { force: true })
  }
}

/** Runs `fn` holding the page's lock; throws LockBusyError when another writer holds it past the wait. */
export async function withPageLock<T>(page: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const lock = lockPathOf(page)
  const content = `${process.pid} ${hostname().replace(/\s/g, '_') || 'localhost'} ${new Date().toISOString()}\n`
  const waitMs = options.waitMs ?? DEFAULT_LOCK_WAIT_MS
  const started = Date.now()
  let holder: Holder | null = null
  for (let attempt = 0; ; attempt++) {
    // A waiter tries to create the lock only when it finds none: reading it costs a fraction of a
    // temp file, a link and an unlink per poll, and the create (the link) stays what decides.
    let text = attempt === 0 ? null : await readText(lock)
    if (text === null) {
      if (await createWhole(page, lock, content)) break
      text = await readText(lock)
      if (text === null) continue // released meanwhile
    }
    holder = parseHolder(text)
    const here = hostname().replace(/\s/g, '_') || 'localhost'
    const old = holder !== null && Date.now() - Date.parse(holder.since) > MAX_HOLD_MS
    // Stale: its holder is dead here, or the pid is our own (reused: we hold no lock yet), or it is older than any write.
    if (holder && ((holder.host === here && (!alive(holder.pid) || holder.pid === process.pid)) || old)) {
      await breakStale(page, lock, text)
      continue
    }
    if (text === '') {
      const st = await stat(lock).catch(() => null)
      if (st && Date.now() - st.mtimeMs > EMPTY_STALE_MS) await breakStale(page, lock, text)
    }
    if (Date.now() - started >= waitMs) throw new LockBusyError(lock, holder, Date.now() - started)
    // Backs off to ~25 ms between attempts: twenty waiters polling every few ms cost more CPU than the writes.
    await sleep(1 + Math.random() * Math.min(25, 1 + 2 * attempt))
  }
  try {
    return await fn()
  } finally {
    if ((await readText(lock).catch(() => null)) === content) await rm(lock, { force: true })
  }
}

/**
 * Removes temp files left in the page's folder by writers that no longer run; returns their names.
 * Called under the page's lock: then every write temp of this page is garbage (only the holder
 * writes one), whatever its pid says; other files go when their pid is dead or they are old.
 */
export async function removeLeftovers(page: string): Promise<string[]> {
  const dir = dirname(page)
  const ownWrite = `.${basename(page)}.armproof-`
  const removed: string[] = []
  const age = async (name: string) => {
    const st = await stat(join(dir, name)).catch(() => null)
    return st ? Date.now() - st.mtimeMs : 0
  }
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    let garbage = false
    if (name.endsWith('.armproof.lock.break')) {
      // A breaker left by a process killed while breaking a stale lock.
      garbage = (await age(name)) > BREAKER_STALE_MS
    } else {
      const m = TEMP_RE.exec(name)
      if (!m) continue
      const pid = Number(m[1])
      const lockTemp = name.includes('.armproof-lock-')
      if (name.startsWith(ownWrite) && !lockTemp) garbage = pid !== process.pid
      else garbage = (pid !== process.pid && !alive(pid)) || (await age(name)) > LOCK_TEMP_STALE_MS
    }
    if (!garbage) continue
    await rm(join(dir, name), { force: true })
    removed.push(name)
  }
  return removed
}
