// `pnpm writeback --report <fleet report>`: a fleet run's combined report. It is validated whole
// before any page is touched (each target an armproof report of the report's type); then each
// target passes the gate a one-target report passes (./gate.ts: green by the one green rule,
// fresh, its page found by its service). A page carries only what is true of its service: when any
// target of a service is refused (not green, stale, no page), that service's page takes no entry,
// and the refusal names the target; the page of a service whose targets all passed takes one entry
// per target, each naming its endpoint, in one write. One page's refusal never stops another's.
//
// Exit codes: 0 every target written (or already there); 2 nothing written (every page refused, or
// the report refused whole, or a usage problem); 5 some pages written and some refused: the lines
// say which pages took which targets' entries.
import type { FleetReport } from '../fleet/report.ts'
import { entryLines, entryMarker } from './entry.ts'
import { escapeControls, showText } from './escape.ts'
import { formatRefusals, refusalLine, type Refusal, type WritebackOptions } from './options.ts'
import { writeEntries, type PageWriteIo } from './page-write.ts'
import { checkReport, type CheckedReport } from './report.ts'
import { gateReport, isFolder } from './gate.ts'
import { command } from '../config/invocation.ts'

export const WRITEBACK_PARTIAL = 5

export interface FleetWritebackIo extends PageWriteIo {
  err: { write(text: string): unknown }
  now?: () => Date
}

interface Checked {
  name: string
  at: string
  report: CheckedReport
}

/** Every target of the fleet report checked against the report's type; the refusals when any is not (nothing is written then). */
function checkWhole(fleet: FleetReport, shownPath: string): { targets: Checked[] } | { refusals: Refusal[] } {
  const refusals: Refusal[] = []
  const targets: Checked[] = []
  const list: unknown = fleet.targets
  if (!Array.isArray(list) || list.length === 0)
    return {
      refusals: [
        {
          checked: 'fleet report',
          where: shownPath,
          found: 'holds no targets list',
          next: `pass the --report file of ${command('verify')} --targets`,
        },
      ],
    }
  for (const [i, entry] of (list as unknown[]).entries()) {
    const e = entry as { name?: unknown; report?: unknown } | null
    const name = e && typeof e === 'object' && typeof e.name === 'string' ? e.name : null
    const at = `${shownPath} targets[${i}]${name !== null ? ` (${showText(name, 60)})` : ''}`
    if (name === null) {
      refusals.push({
        checked: 'fleet report',
        where: at,
        found: 'a target without a name',
        next: `pass the --report file ${command('verify')} --targets wrote, unedited`,
      })
      continue
    }
    if (e!.report === undefined) {
      refusals.push({
        checked: 'fleet report',
        where: at,
        found: 'a target without a report',
        next: `pass the --report file ${command('verify')} --targets wrote, unedited`,
      })
      continue
    }
    const read = checkReport(e!.report, at)
    if (read.report) targets.push({ name, at, report: read.report })
    refusals.push(...read.refusals)
  }
  return refusals.length ? { refusals } : { targets }
}

/** Writes each service's page of a fleet report; see the file's head. */
export async function writebackFleet(fleet: FleetReport, o: WritebackOptions, io: FleetWritebackIo): Promise<number> {
  const shownPath = io.show(o.report)
  const refuseAll = (refusals: Refusal[]) => {
    io.err.write(`${formatRefusals(refusals)}\n`)
    return 2
  }
  if (o.page !== null)
    return refuseAll([
      {
        checked: '--page',
        where: shownPath,
        found: 'is a fleet report: each target is written into its own page, found by its service',
        next: "drop --page (or pass one target's own report with it)",
      },
    ])
  const whole = checkWhole(fleet, shownPath)
  if ('refusals' in whole)
    return refuseAll(
      whole.refusals.map((r) => ({ ...r, found: `${r.found}; the fleet report is refused whole, before any page is touched` })),
    )
  const chosen = whole.targets.filter((t) => o.svc === null || t.report.svc === o.svc)
  if (chosen.length === 0)
    return refuseAll([
      {
        checked: '--svc',
        where: shownPath,
        found: `no target of the fleet report is for service ${JSON.stringify(o.svc)}`,
        next: 'pass the report of the fleet run that verified it',
      },
    ])
  const vaultOk = await isFolder(o.vault)
  if (!vaultOk)
    return refuseAll([
      {
        checked: '--vault',
        where: io.show(o.vault),
        found: 'is not an existing folder',
        next: 'check out the vault repo and pass its folder',
      },
    ])

  // Every target through the gate before any page is touched; then one group per service.
  const now = io.now?.() ?? new Date()
  const gated = await Promise.all(
    chosen.map(async (t) => ({ ...t, ...(await gateReport(t.report, o, t.at, { now, show: io.show, vaultOk })) })),
  )
  const services = [...new Set(gated.map((t) => t.report.svc))]
  let written = 0
  let refusedTargets = 0
  /** Per refused page, the targets whose entries it did not take. */
  const refusedPages: string[] = []
  for (const svc of services) {
    const group = gated.filter((t) => t.report.svc === svc)
    const names = group.map((t) => escapeControls(t.name)).join(', ')
    const page = group.find((t) => t.page !== undefined)?.page
    const shownPage = page !== undefined ? io.show(page) : `the page of ${svc}`
    const refusedHere = group.filter((t) => t.refusals.length > 0)
    if (refusedHere.length > 0) {
      // An entry for the targets that held would read as the service's green: none is written.
      const lines = [
        ...refusedHere.flatMap((t) => t.refusals),
        ...(refusedHere.length < group.length
          ? [
              {
                checked: `service ${svc}`,
                where: shownPage,
                found: `${refusedHere.map((t) => escapeControls(t.name)).join(', ')} ${refusedHere.length === 1 ? 'is' : 'are'} refused, so no entry is written for ${group
                  .filter((t) => t.refusals.length === 0)
                  .map((t) => escapeControls(t.name))
                  .join(', ')} either: an entry would read as ${svc}'s arm being green`,
                next: `fix ${refusedHere.map((t) => escapeControls(t.name)).join(', ')}, verify again, then write the fleet's report back`,
              },
            ]
          : []),
      ]
      io.err.write(
        `armproof writeback: refused for ${shownPage} (service ${svc}: ${names}); that page was not changed.\n${lines.map(refusalLine).join('\n')}\n`,
      )
      refusedTargets += group.length
      refusedPages.push(`${names} (${shownPage} not changed)`)
      continue
    }
    const entries = group.map((t) => ({ marker: entryMarker(t.report), lines: entryLines(t.report) }))
    const outcome = await writeEntries(page!, o.vault, entries, o.dryRun, io)
    if ('refusal' in outcome) {
      io.err.write(
        `armproof writeback: refused for ${shownPage} (service ${svc}: ${names}); that page was not changed.\n${refusalLine(outcome.refusal)}\n`,
      )
      refusedTargets += group.length
      refusedPages.push(`${names} (${shownPage} not changed)`)
      continue
    }
    written += group.length
    if (outcome.done === 'dry') io.say(outcome.diff!.split('\n').map(escapeControls).join('\n'))
    const what = `${outcome.added} new entr${outcome.added === 1 ? 'y' : 'ies'}${outcome.present ? `, ${outcome.present} already there` : ''}`
    const line =
      outcome.done === 'dry'
        ? `dry run: would write ${what} for ${names}; not changed`
        : outcome.done === 'already'
          ? `already there: ${outcome.present} entr${outcome.present === 1 ? 'y' : 'ies'} for ${names}`
          : `wrote ${what} for ${names} under "## Knob log"`
    io.say(`armproof writeback: ${shownPage}: ${line}.`)
  }
  // Exactly what was written: the pages named above took those entries; no other page was changed.
  io.say(
    `armproof writeback: fleet: ${written} of ${written + refusedTargets} target(s) written${refusedPages.length ? `; refused: ${refusedPages.join('; ')}` : ''}`,
  )
  if (refusedTargets === 0) return 0
  return written === 0 ? 2 : WRITEBACK_PARTIAL
}
