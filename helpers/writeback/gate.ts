// The gate one report passes before any page is touched: the report's own checks (./report.ts:
// green by the one green rule, fresh, its run identity its own, a replay only with --allow-replay
// and an unedited recording), and its page: found by its service, or the --page given, which must
// be that service's (by its front matter, else by its file name).
import { stat } from 'node:fs/promises'
import { verifyRecording } from '../seams/recording.ts'
import type { Refusal, WritebackOptions } from './options.ts'
import { judgeReport, type CheckedReport } from './report.ts'
import { checkPage, findPage } from './vault.ts'
import { command } from '../config/invocation.ts'

export interface GateIo {
  now: Date
  show(path: string): string
  /** Whether --vault is an existing folder (else its refusal is the caller's). */
  vaultOk: boolean
}

/** Every reason `report` must not be written, and its page when there is none. */
export async function gateReport(
  report: CheckedReport,
  o: WritebackOptions,
  shownReport: string,
  io: GateIo,
): Promise<{ page?: string; refusals: Refusal[] }> {
  const refusals = judgeReport(report, o, io.now, shownReport)
  if (report.mode === 'replay' && o.allowReplay && report.report.recording) {
    // A replay is only as good as its recording: verify the fixtures again, now.
    const rec = report.report.recording
    const problem = verifyRecording(rec.fixtures, rec.digest)
    if (problem)
      refusals.push({
        checked: 'recording',
        where: io.show(rec.fixtures),
        found: problem,
        next: `replay an unedited recording, or run ${command('verify')} live`,
      })
  }
  if (!io.vaultOk) return { refusals }
  const found =
    o.page === null ? await findPage(o.vault, report.svc, io.show(o.vault)) : await checkPage(o.vault, o.page, report.svc, io.show(o.vault))
  refusals.push(...found.refusals)
  return refusals.length ? { refusals } : { page: found.page!, refusals }
}

/** Whether `path` is an existing folder. */
export async function isFolder(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory()
  } catch {
    return false
  }
}
