// `pnpm writeback`: a green, fresh report → one entry in the endpoint's own vault page, under
// `## Knob log`. Exit 0 written (or already there), 2 refused or usage; never 1 or 3. Thin on
// purpose, like `helpers/cli/verify.ts`: argv, env, streams, the clock and the fs are injectable.
import { access, constants, readFile, stat } from 'node:fs/promises'
import { isAbsolute, relative } from 'node:path'
import type { Stream } from '../cli/verify.ts'
import { verifyRecording } from '../seams/recording.ts'
import { OwnerError, PageChangedError, replaceAtomic, type WritebackFs } from './atomic.ts'
import { unifiedDiff } from './diff.ts'
import { entryLines, entryMarker } from './entry.ts'
import { escapeControls } from './escape.ts'
import { LockBusyError, removeLeftovers, withPageLock } from './lock.ts'
import { formatRefusals, parseWritebackOptions, writebackHelp, type Refusal } from './options.ts'
import { insertEntry, PageShapeError } from './page.ts'
import { formatAge, judgeReport, readReport } from './report.ts'
import { checkPage, findPage } from './vault.ts'
import { readFleetReport, writebackFleet } from './fleet.ts'
import { command, VERSION_TEXT } from '../cli/invocation.ts'

export { entryLines, entryMarker } from './entry.ts'
export { insertEntry, lineEnding } from './page.ts'
export { declaredService, findPage } from './vault.ts'
export type { WritebackFs } from './atomic.ts'

export interface WritebackIo {
  rawArgs: readonly string[]
  /** Read for WRITEBACK_* only; never printed. */
  env: Readonly<Record<string, string | undefined>>
  cwd: string
  out: Stream
  err: Stream
  now?: () => Date
  fs?: WritebackFs
  /** How long to wait for another writeback holding the page's lock (default 30 s). */
  lockWaitMs?: number
}

export const WRITEBACK_EXIT = { written: 0, refused: 2 } as const

export async function writeback(io: WritebackIo): Promise<number> {
  try {
    // A fleet run's combined report: each target through this same gate (./fleet.ts).
    const parsed = parseWritebackOptions(io.rawArgs, io.env, io.cwd)
    const fleet = parsed.ok ? readFleetReport(parsed.options.report) : null
    if (parsed.ok && fleet) {
      const o = parsed.options
      const shown = escapeControls(relative(io.cwd, o.report) || o.report)
      return await writebackFleet(fleet, shown, o.svc, o.page, io, (rawArgs) => run({ ...io, rawArgs }))
    }
    return await run(io)
  } catch (error) {
    // Never exit 1: an unexpected failure is still "not written", and the page was not replaced.
    const message = error instanceof Error ? error.message : String(error)
    io.err.write(`${formatRefusals([{ checked: 'writeback', where: 'this run', found: `failed unexpectedly: ${message}`, next: 'report this with the command line you ran' }])}\n`)
    return WRITEBACK_EXIT.refused
  }
}

async function run(io: WritebackIo): Promise<number> {
  const parsed = parseWritebackOptions(io.rawArgs, io.env, io.cwd)
  if (!parsed.ok) {
    if (parsed.help) {
      io.out.write(`${writebackHelp()}\n`)
      return WRITEBACK_EXIT.written
    }
    if (parsed.version) {
      io.out.write(`${VERSION_TEXT}\n`)
      return WRITEBACK_EXIT.written
    }
    io.err.write(`${formatRefusals(parsed.refusals)}\n`)
    return WRITEBACK_EXIT.refused
  }
  const o = parsed.options
  const show = (p: string) => {
    const rel = relative(io.cwd, p)
    return escapeControls(rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? p : rel)
  }
  const refuse = (refusals: readonly Refusal[]) => {
    io.err.write(`${formatRefusals(refusals)}\n`)
    return WRITEBACK_EXIT.refused
  }

  const refusals: Refusal[] = []
  let vaultOk = false
  try {
    vaultOk = (await stat(o.vault)).isDirectory()
  } catch {
    vaultOk = false
  }
  if (!vaultOk) refusals.push({ checked: '--vault', where: show(o.vault), found: 'is not an existing folder', next: 'check out the vault repo and pass its folder' })
  const read = await readReport(o.report, show(o.report))
  refusals.push(...read.refusals)
  const report = read.report
  if (report) refusals.push(...judgeReport(report, o, io.now?.() ?? new Date(), show(o.report)))
  if (report?.mode === 'replay' && o.allowReplay && report.report.recording) {
    // A replay is only as good as its recording: verify the fixtures again, now.
    const rec = report.report.recording
    const problem = verifyRecording(rec.fixtures, rec.digest)
    if (problem) refusals.push({ checked: 'recording', where: show(rec.fixtures), found: problem, next: `replay an unedited recording, or run ${command('verify')} live` })
  }
  let page: string | undefined
  if (report && vaultOk) {
    const found = o.page === null ? await findPage(o.vault, report.svc, show(o.vault)) : await checkPage(o.vault, o.page, report.svc, show(o.vault))
    refusals.push(...found.refusals)
    page = found.page
  }
  if (refusals.length > 0 || !report || page === undefined) return refuse(refusals)

  const shownPage = show(page)
  const problem = await pageProblem(page)
  if (problem) return refuse([{ checked: 'page', where: shownPage, found: problem.found, next: problem.next }])
  const marker = entryMarker(report)
  const say = (text: string) => io.out.write(`${text}\n`)
  const finishedText = escapeControls(report.finishedAt)

  // Under the page's lock: read, merge, write, rename. Another writeback waits its turn.
  type Outcome = { done: 'already' | 'dry' | 'written'; diff?: string } | { refusal: Refusal }
  const merge = async (): Promise<Outcome> => {
    const bytes = await readFile(page)
    const text = bytes.toString('utf8')
    if (!Buffer.from(text, 'utf8').equals(bytes)) {
      return { refusal: { checked: 'page encoding', where: shownPage, found: 'is not valid UTF-8; writing would change bytes outside the entry', next: 'convert the page to UTF-8, then run again' } }
    }
    if (text.includes(marker)) return { done: 'already' }
    let next: string
    try {
      next = insertEntry(text, entryLines(report))
    } catch (error) {
      if (!(error instanceof PageShapeError)) throw error
      return { refusal: { checked: 'page shape', where: `${shownPage}:${error.line}`, found: error.message, next: 'close the code fence (or fix the page by hand), then run again' } }
    }
    if (o.dryRun) return { done: 'dry', diff: unifiedDiff(text, next, relative(o.vault, page)) }
    try {
      await replaceAtomic(page, Buffer.from(next, 'utf8'), bytes, io.fs)
    } catch (error) {
      const changed = error instanceof PageChangedError
      const owner = error instanceof OwnerError
      const found = changed ? 'changed while writing; nothing was replaced' : owner ? `${error.message}; nothing was replaced` : `could not be written (${error instanceof Error ? error.message : String(error)}); the page was left as it was`
      const next = changed ? `run ${command('writeback')} again` : owner ? "run writeback as the page's owner" : 'check the vault folder is writable and has space, then run again'
      return { refusal: { checked: 'page write', where: shownPage, found, next } }
    }
    return { done: 'written' }
  }
  let outcome: Outcome
  try {
    outcome = o.dryRun ? await merge() : await withPageLock(page, async () => {
      for (const name of await removeLeftovers(page)) say(`armproof writeback: removed ${escapeControls(name)}, a temp file a killed writeback left beside the page.`)
      return merge()
    }, { waitMs: io.lockWaitMs })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (!(error instanceof LockBusyError) && typeof code === 'string') {
      return refuse([{ checked: 'page lock', where: shownPage, found: `could not lock or read the page (${escapeControls(code)}); the page was left as it was`, next: "check the page's folder is writable by this user, then run again" }])
    }
    if (!(error instanceof LockBusyError)) throw error
    return refuse([{ checked: 'page lock', where: show(error.lockPath), found: `${escapeControls(error.message)}; waited ${formatAge(error.waitedMs)}`, next: 'let the other writeback finish, then run again; remove the lock file only if no writeback runs' }])
  }
  if ('refusal' in outcome) return refuse([outcome.refusal])
  if (outcome.done === 'already') {
    say(`armproof writeback: already there: ${shownPage} has the entry for ${report.svc} ${escapeControls(report.knob)} finished ${finishedText}; nothing to do.`)
    return WRITEBACK_EXIT.written
  }
  if (outcome.done === 'dry') {
    say(outcome.diff!.split('\n').map(escapeControls).join('\n'))
    say(`armproof writeback: dry run; ${shownPage} was not changed.`)
    return WRITEBACK_EXIT.written
  }
  say(`armproof writeback: wrote the ${escapeControls(report.knob)} entry for ${report.svc} under "## Knob log" in ${shownPage}.`)
  return WRITEBACK_EXIT.written
}

/** Why this page must not be replaced at all: not a plain file, read-only, not ours to write, hard-linked. */
async function pageProblem(page: string): Promise<{ found: string; next: string } | null> {
  const st = await stat(page)
  const mode = (st.mode & 0o7777).toString(8).padStart(4, '0')
  if (!st.isFile()) return { found: 'is not a regular file', next: "pass the endpoint's .md page" }
  if ((st.mode & 0o222) === 0) return { found: `is read-only (mode ${mode}); its owner made it so, and writeback does not replace it`, next: 'make the page writable if it should take entries (chmod u+w), then run again' }
  try {
    await access(page, constants.W_OK)
  } catch {
    return { found: `is not writable by this user (mode ${mode}, owner uid ${st.uid}); writeback does not replace a page it may not write`, next: "run writeback as the page's owner, or fix the page's permissions" }
  }
  if (st.nlink > 1) return { found: `has ${st.nlink} hard links; replacing it would split them`, next: 'make the page a single file (no hard links), then run again' }
  return null
}
