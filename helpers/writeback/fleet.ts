// `pnpm writeback --report <fleet report>`: a fleet run's combined report is written target by
// target, each through the very gate a one-target report passes (schema, green re-derived from
// its steps, freshness, replay rules, its own vault page found by its service, the page's lock):
// every green target's page is written, a non-green one is refused for its page, and one target's
// refusal never stops another's write.
//
// Exit codes: 0 every target written (or already there); 2 nothing written (every target refused,
// or a usage problem); 5 some targets written and some refused (the lines say which).
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isFleetReport, type FleetReport } from '../fleet/report.ts'
import { escapeControls } from './escape.ts'
import { formatRefusals } from './options.ts'
import { MAX_REPORT_BYTES } from './report.ts'

export const WRITEBACK_PARTIAL = 5

/** The combined report at `path`, when it is one; null for anything else (the one-target path reads it). */
export function readFleetReport(path: string): FleetReport | null {
  try {
    const st = statSync(path)
    if (!st.isFile() || st.size > MAX_REPORT_BYTES) return null
    const data: unknown = JSON.parse(readFileSync(path, 'utf8'))
    return isFleetReport(data) && Array.isArray(data.targets) ? data : null
  } catch {
    return null
  }
}

export interface FleetWritebackIo {
  rawArgs: readonly string[]
  out: { write(text: string): unknown }
  err: { write(text: string): unknown }
}

/**
 * Runs the one-target writeback (`one`) for each target of the fleet report, its report handed
 * over as a file of its own. `svc` (--svc) narrows the fleet to that service's targets.
 */
export async function writebackFleet(fleet: FleetReport, shownPath: string, svc: string | null, page: string | null, io: FleetWritebackIo, one: (rawArgs: readonly string[]) => Promise<number>): Promise<number> {
  if (page !== null) {
    io.err.write(`${formatRefusals([{ checked: '--page', where: shownPath, found: 'is a fleet report: each target is written into its own page, found by its service', next: 'drop --page (or pass one target\'s own report with it)' }])}\n`)
    return 2
  }
  const chosen = fleet.targets.map((t, i) => ({ ...t, i })).filter((t) => svc === null || t.report?.svc === svc)
  if (chosen.length === 0) {
    io.err.write(`${formatRefusals([{ checked: '--svc', where: shownPath, found: svc === null ? 'the fleet report holds no target' : `no target of the fleet report is for service ${JSON.stringify(svc)}`, next: 'pass the report of the fleet run that verified it' }])}\n`)
    return 2
  }
  const dir = mkdtempSync(join(tmpdir(), 'armproof-writeback-fleet-'))
  const outcomes: Array<{ name: string; code: number }> = []
  try {
    for (const t of chosen) {
      const name = escapeControls(String(t.name))
      io.out.write(`armproof writeback: target ${name} (targets[${t.i}] of ${shownPath})\n`)
      const file = join(dir, `target-${t.i}.json`)
      writeFileSync(file, JSON.stringify(t.report), { mode: 0o600 })
      outcomes.push({ name, code: await one([...io.rawArgs, '--report', file]) })
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  const written = outcomes.filter((o) => o.code === 0)
  const refused = outcomes.filter((o) => o.code !== 0)
  io.out.write(`armproof writeback: fleet: ${written.length} of ${outcomes.length} target(s) written${refused.length ? `; refused: ${refused.map((o) => o.name).join(', ')}` : ''}\n`)
  if (refused.length === 0) return 0
  return written.length === 0 ? 2 : WRITEBACK_PARTIAL
}
