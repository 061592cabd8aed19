// Writes entries into one vault page: under the page's lock, read, add each entry not already
// there (its marker), write atomically, keep every byte outside the entries. One page, one write,
// however many entries: a fleet's two targets of one service land in one replace of their page.
import { access, constants, readFile, stat } from 'node:fs/promises'
import { relative } from 'node:path'
import { OwnerError, PageChangedError, replaceAtomic, type WritebackFs } from './atomic.ts'
import { unifiedDiff } from './diff.ts'
import { escapeControls } from './escape.ts'
import { LockBusyError, removeLeftovers, withPageLock } from './lock.ts'
import type { Refusal } from './options.ts'
import { insertEntry, PageShapeError } from './page.ts'
import { formatAge } from './report.ts'
import { command } from '../config/invocation.ts'

/** One entry for a page: its marker (same report, same marker) and its lines. */
export interface PageEntry {
  marker: string
  lines: readonly string[]
}

export type PageOutcome = { done: 'written' | 'already' | 'dry'; added: number; present: number; diff?: string } | { refusal: Refusal }

export interface PageWriteIo {
  fs?: WritebackFs
  lockWaitMs?: number
  say(text: string): void
  show(path: string): string
}

/** Why this page must not be replaced at all: not a plain file, read-only, not ours to write, hard-linked. */
export async function pageProblem(page: string): Promise<{ found: string; next: string } | null> {
  const st = await stat(page)
  const mode = (st.mode & 0o7777).toString(8).padStart(4, '0')
  if (!st.isFile()) return { found: 'is not a regular file', next: "pass the endpoint's .md page" }
  if ((st.mode & 0o222) === 0)
    return {
      found: `is read-only (mode ${mode}); its owner made it so, and writeback does not replace it`,
      next: 'make the page writable if it should take entries (chmod u+w), then run again',
    }
  try {
    await access(page, constants.W_OK)
  } catch {
    return {
      found: `is not writable by this user (mode ${mode}, owner uid ${st.uid}); writeback does not replace a page it may not write`,
      next: "run writeback as the page's owner, or fix the page's permissions",
    }
  }
  if (st.nlink > 1)
    return {
      found: `has ${st.nlink} hard links; replacing it would split them`,
      next: 'make the page a single file (no hard links), then run again',
    }
  return null
}

/** Adds `entries` to `page` (those not there yet), or says why the page was left as it was. */
export async function writeEntries(
  page: string,
  vault: string,
  entries: readonly PageEntry[],
  dryRun: boolean,
  io: PageWriteIo,
): Promise<PageOutcome> {
  const shownPage = io.show(page)
  const problem = await pageProblem(page)
  if (problem) return { refusal: { checked: 'page', where: shownPage, found: problem.found, next: problem.next } }
  const merge = async (): Promise<PageOutcome> => {
    const bytes = await readFile(page)
    const text = bytes.toString('utf8')
    if (!Buffer.from(text, 'utf8').equals(bytes)) {
      return {
        refusal: {
          checked: 'page encoding',
          where: shownPage,
          found: 'is not valid UTF-8; writing would change bytes outside the entry',
          next: 'convert the page to UTF-8, then run again',
        },
      }
    }
    const fresh = entries.filter((e, i) => !text.includes(e.marker) && entries.findIndex((x) => x.marker === e.marker) === i)
    const present = entries.length - fresh.length
    if (fresh.length === 0) return { done: 'already', added: 0, present }
    let next = text
    try {
      for (const e of fresh) next = insertEntry(next, e.lines)
    } catch (error) {
      if (!(error instanceof PageShapeError)) throw error
      return {
        refusal: {
          checked: 'page shape',
          where: `${shownPage}:${error.line}`,
          found: error.message,
          next: 'close it (the code fence or the HTML comment), or fix the page by hand, then run again',
        },
      }
    }
    if (dryRun) return { done: 'dry', added: fresh.length, present, diff: unifiedDiff(text, next, relative(vault, page)) }
    try {
      await replaceAtomic(page, Buffer.from(next, 'utf8'), bytes, io.fs)
    } catch (error) {
      const changed = error instanceof PageChangedError
      const owner = error instanceof OwnerError
      const found = changed
        ? 'changed while writing; nothing was replaced'
        : owner
          ? `${error.message}; nothing was replaced`
          : `could not be written (${error instanceof Error ? error.message : String(error)}); the page was left as it was`
      const nextStep = changed
        ? `run ${command('writeback')} again`
        : owner
          ? "run writeback as the page's owner"
          : 'check the vault folder is writable and has space, then run again'
      return { refusal: { checked: 'page write', where: shownPage, found, next: nextStep } }
    }
    return { done: 'written', added: fresh.length, present }
  }
  try {
    return dryRun
      ? await merge()
      : await withPageLock(
          page,
          async () => {
            for (const name of await removeLeftovers(page))
              io.say(`armproof writeback: removed ${escapeControls(name)}, a temp file a killed writeback left beside the page.`)
            return merge()
          },
          { waitMs: io.lockWaitMs },
        )
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (!(error instanceof LockBusyError) && typeof code === 'string') {
      return {
        refusal: {
          checked: 'page lock',
          where: shownPage,
          found: `could not lock or read the page (${escapeControls(code)}); the page was left as it was`,
          next: "check the page's folder is writable by this user, then run again",
        },
      }
    }
    if (!(error instanceof LockBusyError)) throw error
    return {
      refusal: {
        checked: 'page lock',
        where: io.show(error.lockPath),
        found: `${escapeControls(error.message)}; waited ${formatAge(error.waitedMs)}`,
        next: 'let the other writeback finish, then run again; remove the lock file only if no writeback runs',
      },
    }
  }
}
