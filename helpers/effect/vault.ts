// --vault: the judged effect as one line under the arm's own entry on the endpoint's vault page,
// with writeback's rules: the page found as writeback finds it (front matter service:, else
// <svc>.md, or --page), only a page that already holds the arm's green entry (writeback's marker
// for that report), written under the page's lock, replaced atomically, every byte outside the
// new line kept. A second run with the same windows finds its marker and writes nothing.
// Kept small and apart from writeback so the entry's identity (its marker) is read in one place.
import { readFile } from 'node:fs/promises'
import { entryMarker } from '../writeback/entry.ts'
import { lineEnding } from '../writeback/page.ts'
import { checkPage, findPage } from '../writeback/vault.ts'
import { LockBusyError, removeLeftovers, withPageLock } from '../writeback/lock.ts'
import { replaceAtomic } from '../writeback/atomic.ts'
import type { CheckedReport } from '../writeback/report.ts'
import type { EffectResult } from './result.ts'
import { pct } from './format.ts'
import { command } from '../config/invocation.ts'

/** The page holding the arm's entry, or why not (exit 2, before anything is contacted). */
export async function vaultPage(
  vault: string,
  page: string | null,
  report: CheckedReport,
  shownVault: string,
): Promise<{ page: string } | { problem: string }> {
  const found = page === null ? await findPage(vault, report.svc, shownVault) : await checkPage(vault, page, report.svc, shownVault)
  if (found.page === undefined)
    return { problem: found.refusals.map((r) => `--vault: ${r.checked} (${r.where}): ${r.found}; next: ${r.next}`).join('\n  - ') }
  const text = await readFile(found.page, 'utf8')
  if (!text.includes(entryMarker(report))) {
    return {
      problem: `--vault: ${found.page} holds no green entry for this arm (${report.svc} ${report.knob}, report finished ${report.finishedAt}): the effect goes under the arm's entry; write it first with ${command('writeback')} --report <the same report> --vault ${shownVault}`,
    }
  }
  return { page: found.page }
}

const part = (v: string) => v.replace(/[^A-Za-z0-9_.:+-]/g, '_').replace(/-{2,}/g, '-')

/** The effect line's identity: the arm's entry, the after window and the baseline. */
export function effectMarker(report: CheckedReport, result: EffectResult): string {
  return `<!-- armproof-effect:${part(report.svc)}:${part(report.knob)}:${part(report.finishedAt)}:${part(result.windows.after.to)}:${part(result.windows.baseline.kind)} -->`
}

/** The vault names the tool that wrote the line as installed, whichever way this process was started. */
const TOOL = command('effect', 'armproof')

/** One line, indented under the entry: each metric's verdict and its shift. */
export function effectLine(report: CheckedReport, result: EffectResult): string {
  const w = result.windows
  const against =
    w.baseline.kind === 'before'
      ? 'the whole before window'
      : `the same hours ${w.baseline.kind === 'yesterday' ? 'a day' : 'a week'} before`
  const shown = result.metrics.map((m) => {
    const moved = m.verdict === 'worse' || m.verdict === 'better' || m.verdict === 'changed'
    // the statistic that moved (p95 first, then p50, for a histogram)
    const names = m.kind === 'histogram' ? ['p95', 'p50'] : ['rate']
    const name = names.find((n) => m.shifts[n]?.state === 'up' || m.shifts[n]?.state === 'down') ?? names[0]!
    const s = m.shifts[name]
    return `${m.id} ${m.verdict}${moved && s ? ` (${m.kind === 'histogram' ? `${name} ` : ''}${pct(s.relative, s.fromZero)})` : ''}`
  })
  return `  effect: ${result.verdict} · ${shown.join(' · ')} (${TOOL}, after ${w.after.from} – ${w.after.to} against ${against}) ${effectMarker(report, result)}`
}

/** The page with the line added after the arm's entry (its item and the lines indented under it). */
export function insertEffect(page: string, marker: string, line: string): string {
  const eol = lineEnding(page)
  const at = page.indexOf(marker)
  if (at < 0) throw new Error('the arm entry is gone from the page')
  let end = page.indexOf('\n', at)
  if (end < 0) return `${page}${eol}${line}`
  for (;;) {
    const next = page.indexOf('\n', end + 1)
    const text = page.slice(end + 1, next < 0 ? page.length : next).replace(/\r$/, '')
    if (!/^( {2,}|\t)\S/.test(text)) break
    if (next < 0) return `${page}${eol}${line}`
    end = next
  }
  return `${page.slice(0, end + 1)}${line}${eol}${page.slice(end + 1)}`
}

export type VaultOutcome = { written: true; already: boolean } | { written: false; why: string }

export async function writeEffect(page: string, report: CheckedReport, result: EffectResult, lockWaitMs?: number): Promise<VaultOutcome> {
  const marker = effectMarker(report, result)
  try {
    return await withPageLock(
      page,
      async () => {
        await removeLeftovers(page)
        const bytes = await readFile(page)
        const text = bytes.toString('utf8')
        if (text.includes(marker)) return { written: true, already: true } as const
        const entry = entryMarker(report)
        if (!text.includes(entry)) return { written: false, why: `${page} no longer holds the arm's entry; nothing was written` } as const
        await replaceAtomic(page, Buffer.from(insertEffect(text, entry, effectLine(report, result)), 'utf8'), bytes)
        return { written: true, already: false } as const
      },
      lockWaitMs === undefined ? {} : { waitMs: lockWaitMs },
    )
  } catch (error) {
    if (error instanceof LockBusyError)
      return { written: false, why: `${error.message} (${error.lockPath}); let the other writer finish, then run again` }
    return {
      written: false,
      why: `${page} could not be written (${error instanceof Error ? error.message : String(error)}); the page was left as it was`,
    }
  }
}
