// `pnpm writeback`: a green, fresh report → one entry in the endpoint's own vault page, under
// `## Knob log`. Exit 0 written (or already there), 2 refused or usage; never 1 or 3. Thin on
// purpose, like `helpers/cli.ts`: argv, env, streams, the clock and the fs are injectable.
import { readFile, stat } from 'node:fs/promises'
import { isAbsolute, relative } from 'node:path'
import type { Stream } from './cli.ts'
import { PageChangedError, replaceAtomic, type WritebackFs } from './writeback/atomic.ts'
import { unifiedDiff } from './writeback/diff.ts'
import { entryLines, entryMarker } from './writeback/entry.ts'
import { formatRefusals, parseWritebackOptions, writebackHelp, type Refusal } from './writeback/options.ts'
import { insertEntry } from './writeback/page.ts'
import { judgeReport, readReport } from './writeback/report.ts'
import { checkPage, findPage } from './writeback/vault.ts'

export { entryLines, entryMarker } from './writeback/entry.ts'
export { insertEntry, lineEnding } from './writeback/page.ts'
export { declaredService, findPage } from './writeback/vault.ts'
export type { WritebackFs } from './writeback/atomic.ts'

export interface WritebackIo {
  rawArgs: readonly string[]
  /** Read for WRITEBACK_* only; never printed. */
  env: Readonly<Record<string, string | undefined>>
  cwd: string
  out: Stream
  err: Stream
  now?: () => Date
  fs?: WritebackFs
}

export const WRITEBACK_EXIT = { written: 0, refused: 2 } as const

export async function writeback(io: WritebackIo): Promise<number> {
  try {
    return await run(io)
  } catch (error) {
    // Never exit 1: an unexpected failure is still "not written", and the page was not replaced.
    const message = error instanceof Error ? error.message : String(error)
    io.err.write(`${formatRefusals([{ checked: 'writeback', where: 'this run', found: `failed unexpectedly: ${message.split('\n')[0]}`, next: 'report this with the command line you ran' }])}\n`)
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
    io.err.write(`${formatRefusals(parsed.refusals)}\n`)
    return WRITEBACK_EXIT.refused
  }
  const o = parsed.options
  const show = (p: string) => {
    const rel = relative(io.cwd, p)
    return rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? p : rel
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
  let page: string | undefined
  if (report && vaultOk) {
    const found = o.page === null ? await findPage(o.vault, report.svc, show(o.vault)) : await checkPage(o.vault, o.page, report.svc, show(o.vault))
    refusals.push(...found.refusals)
    page = found.page
  }
  if (refusals.length > 0 || !report || page === undefined) return refuse(refusals)

  const shownPage = show(page)
  const bytes = await readFile(page)
  const text = bytes.toString('utf8')
  if (!Buffer.from(text, 'utf8').equals(bytes)) {
    return refuse([{ checked: 'page encoding', where: shownPage, found: 'is not valid UTF-8; writing would change bytes outside the entry', next: 'convert the page to UTF-8, then run again' }])
  }
  const marker = entryMarker(report)
  if (text.includes(marker)) {
    io.out.write(`armproof writeback: already there: ${shownPage} has the entry for ${report.svc} ${report.knob} finished ${report.finishedAt}; nothing to do.\n`)
    return WRITEBACK_EXIT.written
  }
  const next = insertEntry(text, entryLines(report))
  if (o.dryRun) {
    io.out.write(`${unifiedDiff(text, next, relative(o.vault, page))}\n`)
    io.out.write(`armproof writeback: dry run; ${shownPage} was not changed.\n`)
    return WRITEBACK_EXIT.written
  }
  try {
    await replaceAtomic(page, Buffer.from(next, 'utf8'), bytes, io.fs)
  } catch (error) {
    const changed = error instanceof PageChangedError
    const found = changed ? 'changed while writing; nothing was replaced' : `could not be written (${error instanceof Error ? error.message.split('\n')[0] : String(error)}); the page was left as it was`
    return refuse([{ checked: 'page write', where: shownPage, found, next: changed ? 'run pnpm writeback again' : 'check the vault folder is writable and has space, then run again' }])
  }
  io.out.write(`armproof writeback: wrote the ${report.knob} entry for ${report.svc} under "## Knob log" in ${shownPage}.\n`)
  return WRITEBACK_EXIT.written
}
