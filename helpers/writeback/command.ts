// `pnpm writeback`: a green, fresh report → one entry in the endpoint's own vault page, under
// `## Knob log`. Exit 0 written (or already there), 2 refused or usage; never 1 or 3. Thin on
// purpose, like `helpers/cli/verify.ts`: argv, env, streams, the clock and the fs are injectable.
import { isAbsolute, relative } from 'node:path'
import type { OutStream } from '../cli/streams.ts'
import type { WritebackFs } from './atomic.ts'
import { entryLines, entryMarker } from './entry.ts'
import { escapeControls } from './escape.ts'
import { gateReport, isFolder } from './gate.ts'
import { formatRefusals, parseWritebackOptions, writebackHelp, type Refusal, type WritebackOptions } from './options.ts'
import { writeEntries } from './page-write.ts'
import { checkReport, readReportFile } from './report.ts'
import { writebackFleet } from './fleet.ts'
import { isFleetReport } from '../fleet/report.ts'
import { VERSION_TEXT } from '../config/invocation.ts'

export { entryLines, entryMarker } from './entry.ts'
export { insertEntry, lineEnding } from './page.ts'
export { declaredService, findPage } from './vault.ts'
export type { WritebackFs } from './atomic.ts'

export interface WritebackIo {
  rawArgs: readonly string[]
  /** Read for WRITEBACK_* only; never printed. */
  env: Readonly<Record<string, string | undefined>>
  cwd: string
  out: OutStream
  err: OutStream
  now?: () => Date
  fs?: WritebackFs
  /** How long to wait for another writeback holding the page's lock (default 30 s). */
  lockWaitMs?: number
}

export const WRITEBACK_EXIT = { written: 0, refused: 2 } as const

export async function writeback(io: WritebackIo): Promise<number> {
  try {
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
    const read = await readReportFile(o.report, show(o.report))
    // A fleet run's combined report: validated whole, then each target through this same gate (./fleet.ts).
    if ('data' in read && isFleetReport(read.data))
      return await writebackFleet(read.data, o, { ...io, show, say: (text) => io.out.write(`${text}\n`) })
    return await run(io, o, show, read)
  } catch (error) {
    // Never exit 1: an unexpected failure is still "not written", and the page was not replaced.
    const message = error instanceof Error ? error.message : String(error)
    io.err.write(
      `${formatRefusals([{ checked: 'writeback', where: 'this run', found: `failed unexpectedly: ${message}`, next: 'report this with the command line you ran' }])}\n`,
    )
    return WRITEBACK_EXIT.refused
  }
}

async function run(
  io: WritebackIo,
  o: WritebackOptions,
  show: (p: string) => string,
  file: Awaited<ReturnType<typeof readReportFile>>,
): Promise<number> {
  const refuse = (refusals: readonly Refusal[]) => {
    io.err.write(`${formatRefusals(refusals)}\n`)
    return WRITEBACK_EXIT.refused
  }

  const refusals: Refusal[] = []
  const vaultOk = await isFolder(o.vault)
  if (!vaultOk)
    refusals.push({
      checked: '--vault',
      where: show(o.vault),
      found: 'is not an existing folder',
      next: 'check out the vault repo and pass its folder',
    })
  const read = 'refusals' in file ? { report: undefined, refusals: file.refusals } : checkReport(file.data, show(o.report))
  refusals.push(...read.refusals)
  const report = read.report
  const gated = report ? await gateReport(report, o, show(o.report), { now: io.now?.() ?? new Date(), show, vaultOk }) : { refusals: [] }
  refusals.push(...gated.refusals)
  if (refusals.length > 0 || !report || gated.page === undefined) return refuse(refusals)

  const page = gated.page
  const shownPage = show(page)
  const say = (text: string) => io.out.write(`${text}\n`)
  const finishedText = escapeControls(report.finishedAt)
  const outcome = await writeEntries(page, o.vault, [{ marker: entryMarker(report), lines: entryLines(report) }], o.dryRun, {
    fs: io.fs,
    lockWaitMs: io.lockWaitMs,
    say,
    show,
  })
  if ('refusal' in outcome) return refuse([outcome.refusal])
  if (outcome.done === 'already') {
    say(
      `armproof writeback: already there: ${shownPage} has the entry for ${report.svc} ${escapeControls(report.knob)} finished ${finishedText}; nothing to do.`,
    )
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
