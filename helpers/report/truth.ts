// The argv-vs-default truth table for the knob: what was expected, what the catalog and the
// build's --help say the default is, what argv carries and what the ledger resolved, each with
// the verdict of its comparison. Built from the steps' evidence alone.
import type { Target } from '../config/load.ts'
import { targetProfile } from '../profiles/target.ts'
import { stepOf, type StepResult } from '../steps/verdict.ts'

export type TruthVerdict = 'holds' | 'differs' | 'unknown' | 'info'

export interface TruthRow {
  source: 'expected' | 'default (catalog)' | 'default (--help)' | 'argv' | 'ledger'
  value: string
  verdict: TruthVerdict
}

export interface TruthTable {
  knob: string
  flag: string
  rows: TruthRow[]
  notes: string[]
}

function stepVerdict(step: StepResult | undefined): TruthVerdict {
  if (!step) return 'unknown'
  return step.verdict === 'passed' ? 'holds' : step.verdict === 'failed' ? 'differs' : 'unknown'
}

export function truthTable(target: Target, steps: readonly StepResult[]): TruthTable {
  const { spec } = targetProfile(target)
  const help = stepOf(steps, 'help')
  const argv = stepOf(steps, 'argv')
  const ledger = stepOf(steps, 'ledger')
  const helpDefault = help?.buildDefault ?? null
  const fallback = spec.default ?? helpDefault
  const expected = target.value ?? fallback
  const atDefault = expected !== null && expected === fallback
  const written = argv?.evidence.flag ?? null
  const occurrences = argv?.evidence.occurrences ?? []
  const resolved = ledger?.evidence.value ?? null
  const auto = ledger?.evidence.auto === true
  const boundBy = ledger?.evidence.boundBy ?? null
  // Another engine than radiance: the source the ledger passed on (what the engine runs over what its parser resolved).
  const strongest = ledger?.evidence.strongest

  const rows: TruthRow[] = [
    {
      source: 'expected',
      value: expected === null ? 'the default (unknown)' : `${expected}${atDefault ? ' (the default)' : ''}`,
      verdict: 'info',
    },
    { source: 'default (catalog)', value: spec.default ?? 'from the build (--help)', verdict: 'info' },
    {
      source: 'default (--help)',
      value: help === undefined || help.verdict === 'skipped' ? 'not read' : (helpDefault ?? 'not printed'),
      verdict: helpDefault === null || spec.default === null ? 'info' : helpDefault === spec.default ? 'holds' : 'differs',
    },
    {
      source: 'argv',
      value:
        written === null
          ? argv
            ? argv.observed
            : 'not read'
          : occurrences.length
            ? occurrences
                .map(
                  (o) =>
                    `${o.written}${o.source === 'config' ? ` (in ${argv?.evidence.configFile ?? 'the config file'})` : ''}${occurrences.length > 1 && o.won ? ' ← wins' : ''}`,
                )
                .join(', ')
            : written.length
              ? written.join(' ')
              : `no ${spec.flag}`,
      verdict: stepVerdict(argv),
    },
    {
      source: 'ledger',
      value:
        resolved === null
          ? ledger
            ? ledger.observed
            : 'not read'
          : strongest !== undefined
            ? `${resolved}, from ${strongest}${(ledger?.evidence.sources?.length ?? 0) > 1 ? ` (${ledger!.evidence.sources!.filter((s) => s.standing === 'agrees' || s.standing === 'allowed').length} of the ${ledger!.evidence.sources!.length} sources the profile names agree)` : ''}`
            : `${resolved}${auto ? ' [auto]' : ''}, bound by ${boundBy ?? 'None'}`,
      verdict: stepVerdict(ledger),
    },
  ]
  const notes: string[] = []
  if (helpDefault !== null && spec.default !== null && helpDefault !== spec.default) {
    notes.push(
      `the catalog's default for ${spec.env} is ${spec.default}, but this build's --help says ${helpDefault}: "unset means default" means ${helpDefault} here`,
    )
  }
  if (spec.passedOnlyWhenNonDefault && written !== null) {
    if (!atDefault && written.length > 0)
      notes.push(
        `conditional flag: the serve script passes ${spec.flag} only when ${spec.env} differs from ${fallback}, so this arm added "${written.join(' ')}" to argv`,
      )
    if (atDefault && written.length === 0)
      notes.push(`${spec.env} is at its default ${expected}: argv rightly lacks ${spec.flag} (unset means default)`)
  }
  const spelled = occurrences
    .filter((o) => o.spelling !== 'exact')
    .map(
      (o) =>
        `${o.source === 'config' ? `${o.written.split(':')[0]} in the config file` : o.written.split(/[ =]/)[0]} is ${spec.flag} (${o.spelling === 'prefix' ? 'a unique prefix' : '_ read as -'})`,
    )
  if (occurrences.length > 1 || spelled.length > 0) {
    const order = occurrences.some((o) => o.source === 'config') ? "the config file's flags come before the command line's, and " : ''
    notes.push(
      `argv read as the engine's parser reads it: ${[...spelled, ...(occurrences.length > 1 ? [`${order}the last occurrence wins (${occurrences.find((o) => o.won)?.written})`] : [])].join('; ')}`,
    )
  }
  if (auto) notes.push(`the engine chose the value itself ([auto])`)
  if (boundBy !== null) notes.push(`the resolved value is bound by ${boundBy}`)
  return { knob: spec.env, flag: spec.flag, rows, notes }
}

const MARK: Record<TruthVerdict, string> = { holds: '✓', differs: '✗', unknown: '?', info: ' ' }

/** The table as the runbook prints it, a few indented lines. */
export function formatTruth(t: TruthTable): string {
  const width = Math.max(...t.rows.map((r) => r.source.length))
  return [
    `truth table for ${t.knob} (${t.flag}):`,
    ...t.rows.map((r) => `  ${MARK[r.verdict]} ${r.source.padEnd(width)}  ${r.value}`),
    ...t.notes.map((n) => `  · ${n}`),
  ].join('\n')
}
