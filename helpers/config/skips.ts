// `--skip`: the behaviour probes the served model cannot take (a text-only model takes no image, an
// endpoint served without a tool parser makes no tool call). A skipped probe is shown skipped with
// this reason, never passed; the run declares it (helpers/steps/verdict.ts `declaredSkips`), so the
// green rule, merge-reports and writeback allow exactly it. No other step can be skipped this way.
import { showValue } from './shell.ts'
import type { StepId } from './step-ids.ts'

/** The probes `--skip` takes, in the steps' order, each with why a model may not take it and what to check by hand. */
export const SKIPPABLE = {
  'probe.tools': {
    why: 'the endpoint serves no tool calls (no tool parser configured)',
    next: 'when this endpoint should call tools, start the engine with its tool parser and run again without --skip probe.tools',
  },
  'probe.vision': {
    why: 'the served model takes no images (a text-only model)',
    next: 'when this endpoint should take images, serve a vision model and run again without --skip probe.vision',
  },
} as const satisfies Partial<Record<StepId, { why: string; next: string }>>

export type SkippableProbe = keyof typeof SKIPPABLE
export const SKIPPABLE_IDS = Object.keys(SKIPPABLE) as SkippableProbe[]

/** Why other step ids are not skippable, where there is more to say than "not a probe". */
const NOT_SKIPPABLE: Readonly<Record<string, string>> = {
  'probe.exact': 'every chat model must answer the exact word: a model that cannot is not serving',
  dropins: 'the drop-in gate is skipped with --no-dropin-check (VERIFY_DROPIN_CHECK=0)',
}

/** `probe.vision,probe.tools` (spaces around commas allowed, repeats folded), or every problem. */
export function parseSkip(text: string): { skip: SkippableProbe[] } | { problems: string[] } {
  const words = text.split(',').map((w) => w.trim())
  const problems: string[] = []
  const seen = new Set<SkippableProbe>()
  for (const w of words) {
    if (w === '') continue
    if ((SKIPPABLE_IDS as readonly string[]).includes(w)) seen.add(w as SkippableProbe)
    else
      problems.push(
        `${showValue(w)} cannot be skipped: ${NOT_SKIPPABLE[w] ?? `only the probes a served model may not take can be (${SKIPPABLE_IDS.join(', ')})`}`,
      )
  }
  return problems.length ? { problems } : { skip: SKIPPABLE_IDS.filter((id) => seen.has(id)) }
}
