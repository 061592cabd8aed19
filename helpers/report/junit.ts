// The report as JUnit XML for CI: one testsuite, one testcase per proof step in the contract's
// order. failed → <failure>, inconclusive → <error>, skipped → <skipped>.
import type { Report, ReportStep } from './json.ts'

// Characters XML 1.0 cannot hold at all, even escaped (C0 controls but tab/LF/CR, lone surrogates, U+FFFE/U+FFFF).
const ILLEGAL_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu

/** Text content: illegal characters removed, `& < >` escaped. */
export function xmlText(text: string): string {
  return text.replace(ILLEGAL_XML, '').replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')
}

/** An attribute value: as text, plus quotes, and tab/newlines as references so parsers keep them. */
export function xmlAttr(text: string): string {
  return xmlText(text)
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&apos;')
    .replaceAll('\t', '&#9;')
    .replaceAll('\n', '&#10;')
    .replaceAll('\r', '&#13;')
}

function seconds(ms: number): string {
  return (Math.max(0, ms) / 1000).toFixed(3)
}

function body(s: ReportStep): string {
  const lines = [`expected: ${s.expected}`, `observed: ${s.observed}`, `where:    ${s.where}`]
  if (s.next) lines.push(`next:     ${s.next}`)
  return xmlText(lines.join('\n'))
}

function testcase(s: ReportStep, svc: string): string {
  const open = `    <testcase name="${xmlAttr(s.id)}" classname="${xmlAttr(`armproof.${svc}`)}" time="${seconds(s.durationMs)}">`
  const close = '    </testcase>'
  switch (s.verdict) {
    case 'passed':
      return `${open}\n      <system-out>${xmlText(`${s.title}\nobserved: ${s.observed}\nwhere:    ${s.where}`)}</system-out>\n${close}`
    case 'failed':
      return `${open}\n      <failure message="${xmlAttr(s.observed)}" type="failed">${body(s)}</failure>\n${close}`
    case 'inconclusive':
      return `${open}\n      <error message="${xmlAttr(s.observed)}" type="inconclusive">${body(s)}</error>\n${close}`
    case 'skipped':
      return `${open}\n      <skipped message="${xmlAttr(s.observed)}"/>\n${close}`
  }
}

/** One report as a `<testsuite>` (indented for a `<testsuites>` document); `name` defaults to `armproof <svc> <knob>`. */
export function testsuiteXml(report: Report, name = `armproof ${report.svc} ${report.knob}`): string {
  const steps = report.steps
  const properties: Array<[string, string]> = [
    ['verdict', report.verdict],
    ['knob', report.knob],
    ['expected', report.expected ?? ''],
    ['previous', report.previous ?? ''],
    ['mode', report.mode],
    ['rollback', report.rollback],
    ['armproof', report.tool.version],
  ]
  const notes = [...(report.error ? [`error: ${report.error}`] : []), ...report.notes]
  return [
    `  <testsuite name="${xmlAttr(name)}" ${suiteCounts(report)} timestamp="${xmlAttr(report.startedAt)}">`,
    '    <properties>',
    ...properties.map(([k, v]) => `      <property name="${xmlAttr(k)}" value="${xmlAttr(v)}"/>`),
    '    </properties>',
    ...steps.map((s) => testcase(s, report.svc)),
    ...(notes.length ? [`    <system-err>${xmlText(notes.join('\n'))}</system-err>`] : []),
    '  </testsuite>',
  ].join('\n')
}

function counts(steps: readonly ReportStep[]): { tests: number; failures: number; errors: number; skipped: number } {
  const count = (v: ReportStep['verdict']) => steps.filter((s) => s.verdict === v).length
  return { tests: steps.length, failures: count('failed'), errors: count('inconclusive'), skipped: count('skipped') }
}

function reportSeconds(report: Report): number {
  return (Date.parse(report.finishedAt) - Date.parse(report.startedAt) || report.steps.reduce((t, s) => t + s.durationMs, 0)) / 1000
}

function suiteCounts(report: Report): string {
  const c = counts(report.steps)
  return `tests="${c.tests}" failures="${c.failures}" errors="${c.errors}" skipped="${c.skipped}" time="${seconds(reportSeconds(report) * 1000)}"`
}

export function junitXml(report: Report): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="armproof" ${suiteCounts(report)}>`,
    testsuiteXml(report),
    '</testsuites>',
    '',
  ].join('\n')
}

/** A fleet run: one `<testsuite>` per target, named by its label; the totals over all of them. */
export function junitFleetXml(targets: ReadonlyArray<{ name: string; report: Report }>, wallMs: number): string {
  const all = counts(targets.flatMap((t) => t.report.steps))
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="armproof fleet" tests="${all.tests}" failures="${all.failures}" errors="${all.errors}" skipped="${all.skipped}" time="${seconds(wallMs)}">`,
    ...targets.map((t) => testsuiteXml(t.report, `armproof ${t.name} ${t.report.knob}`)),
    '</testsuites>',
    '',
  ].join('\n')
}
