// The files an effect run writes after its verdict is printed: the pictures beside --out (one SVG
// per compared distribution, `<out>.<metric>.svg`), the JSON result, the Markdown summary (and the
// step summary), the recording of --mode record, the vault line. A write that fails is one line
// each; the verdict stands and the exit code says an output is missing (4).
import { appendFile } from 'node:fs/promises'
import { basename, dirname, join, relative } from 'node:path'
import { writeAtomic } from '../seams/atomic.ts'
import type { CheckedReport } from '../writeback/report.ts'
import { markdownEffect } from './markdown.ts'
import { resultJson, type EffectResult } from './result.ts'
import { distributionSvg } from './svg.ts'
import { writeEffect } from './vault.ts'

export interface OutputPlan {
  out: string | null
  summary: string | null
  stepSummary: string | null
  vault: { page: string; report: CheckedReport; lockWaitMs?: number } | null
  /** Written last, after the others (the recording of --mode record). */
  extra?: Array<{ what: string; path: string; write: () => Promise<void> | void }>
}

/** `<out without .json>.<metric id>.svg`, beside --out. */
export function picturePath(out: string, id: string): string {
  return join(dirname(out), `${basename(out).replace(/\.json$/i, '')}.${id}.svg`)
}

/** Writes every output; returns what could not be written (one line each) and what the vault said. */
export async function writeOutputs(result: EffectResult, plan: OutputPlan): Promise<{ unwritten: string[]; said: string[] }> {
  const unwritten: string[] = []
  const said: string[] = []
  const attempt = async (what: string, path: string, write: () => Promise<void> | void): Promise<boolean> => {
    try {
      await write()
      return true
    } catch (error) {
      unwritten.push(`could not write ${what} to ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
      return false
    }
  }
  if (plan.out) {
    for (const m of result.metrics) {
      const svg = distributionSvg(result, m)
      if (!svg) continue
      const path = picturePath(plan.out, m.id)
      if (await attempt(`the picture of ${m.id}`, path, () => writeAtomic(path, svg))) m.picture = basename(path)
    }
    await attempt('the JSON result', plan.out, () => writeAtomic(plan.out!, resultJson(result)))
  }
  const href = (from: string) => (file: string) => (plan.out ? relative(dirname(from), join(dirname(plan.out), file)) || file : null)
  if (plan.summary)
    await attempt('the Markdown summary', plan.summary, () => writeAtomic(plan.summary!, markdownEffect(result, href(plan.summary!))))
  if (plan.stepSummary) await attempt('the step summary', plan.stepSummary, () => appendFile(plan.stepSummary!, markdownEffect(result)))
  for (const x of plan.extra ?? []) await attempt(x.what, x.path, x.write)
  if (plan.vault) {
    const v = await writeEffect(plan.vault.page, plan.vault.report, result, plan.vault.lockWaitMs)
    if (!v.written) unwritten.push(`could not write the effect into the vault: ${v.why}`)
    else
      said.push(
        v.already
          ? `already there: ${plan.vault.page} has this effect under the arm's entry; nothing to do`
          : `wrote the effect under the arm's entry in ${plan.vault.page}`,
      )
  }
  return { unwritten, said }
}
