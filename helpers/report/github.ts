// GitHub Actions workflow commands for a finished run (printed only when GITHUB_ACTIONS=true): an
// `::error` per failed step and per red or error run, a `::warning` per inconclusive step, so the
// run's page shows what failed without opening the log. Every value is escaped as the runner's
// toolkit escapes it: text an endpoint sent back (a reply, a ledger line) can hold newlines and
// `::`, and unescaped it would be read as a command of its own (`::add-mask::`, `::stop-commands::`).
import type { Report } from './json.ts'

/** The message part of a command: %, CR and LF escaped (as @actions/core's escapeData). */
export function escapeData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A')
}

/** A property value (title=…): also `:` and `,` (as @actions/core's escapeProperty). */
export function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C')
}

const cut = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text)

/** The annotation lines for one target's report; `label` names the target in a fleet. */
export function annotations(report: Report, label: string = report.svc): string[] {
  const lines: string[] = []
  const command = (kind: 'error' | 'warning', title: string, message: string) =>
    lines.push(`::${kind} title=${escapeProperty(cut(title, 200))}::${escapeData(cut(message, 4000))}`)
  for (const s of report.steps) {
    if (s.verdict !== 'failed' && s.verdict !== 'inconclusive') continue
    const message = [
      `expected: ${s.expected}`,
      `observed: ${s.observed}`,
      `where: ${s.where}`,
      ...(s.next ? [`next: ${s.next}`] : []),
    ].join('\n')
    command(s.verdict === 'failed' ? 'error' : 'warning', `armproof ${label}: ${s.id} ${s.verdict}`, message)
  }
  if (report.verdict === 'red' || report.verdict === 'error') {
    const expected = report.expected ?? '(the default)'
    command(
      'error',
      `armproof ${label}: ${report.verdict}`,
      report.verdict === 'error' && report.error
        ? `${report.knob}=${expected} not verified: ${report.error}`
        : `${report.knob}=${expected} is not proven on ${report.svc}: ${report.steps
            .filter((s) => s.verdict === 'failed')
            .map((s) => s.id)
            .join(', ')} failed`,
    )
  }
  return lines
}

/** The lines to print under GitHub Actions (GITHUB_ACTIONS=true), none elsewhere. */
export function githubAnnotations(
  env: Readonly<Record<string, string | undefined>>,
  reports: ReadonlyArray<{ report: Report; label?: string }>,
): string[] {
  if (env.GITHUB_ACTIONS !== 'true') return []
  return reports.flatMap((r) => annotations(r.report, r.label))
}
