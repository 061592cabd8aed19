// The writeback rows of the fault table (docs/writeback-faults.md) that issue 21 added: a page
// carries only what is true of its service. --page must be the service's own page; a fleet report
// is validated whole before any page is touched; a service whose targets are not all green gets no
// entry; each target's entry names its endpoint; a heading inside a comment or code is no heading.
import assert from 'node:assert/strict'
import { FLEET_FORMAT } from '../../helpers/fleet/report.ts'
import type { FaultRow, Outcome } from './fault-row.ts'
import { greenReport, inSandbox, PAGE, type Run } from './writeback-sandbox.ts'

const outcome = (r: Run): Outcome => ({ exit: r.code, output: `${r.out}${r.err}` })
const now = () => new Date().toISOString()
const page = (svc: string) => ['---', `service: ${svc}`, '---', `# ${svc}`, '', '## Knob log', '', '## Contacts', ''].join('\n')
/** One target's report as pnpm verify writes it now: its run identity names its endpoint. */
const target = (svc: string, baseUrl: string, over: Record<string, unknown> = {}, finishedAt = now()) =>
  greenReport(finishedAt, { svc, rollback: `PREFILL_INTERLEAVE=0 then redeploy --service ${svc}`, ...over }, { baseUrl })
const red = (svc: string, baseUrl: string) => {
  const r = target(svc, baseUrl) as { steps: Array<Record<string, unknown>> }
  return target(svc, baseUrl, {
    verdict: 'red',
    exitCode: 1,
    steps: r.steps.map((s) => (s.id === 'meter' ? { ...s, verdict: 'failed', next: 'x' } : s)),
  })
}
const fleet = (targets: Array<[string, unknown]>) => ({
  format: FLEET_FORMAT,
  verdict: 'red',
  exitCode: 1,
  startedAt: now(),
  finishedAt: now(),
  fleet: { file: 'targets.yaml', total: targets.length, shards: null, concurrency: 8 },
  targets: targets.map(([name, report], index) => ({ name, index, ...(report === undefined ? {} : { report }) })),
  tool: { name: 'armproof', version: '0.1.0' },
})

export const PAGE_FAULTS: readonly FaultRow[] = [
  {
    area: 'writeback',
    fault: "--page endpoints/acc.md (no front matter: acc's page by its name) with llm-7's report",
    expected: 'refused: a page belongs to a service by its front matter, else by its file name',
    exit: 2,
    message: 'belongs to service "acc" by its file name',
    run: () =>
      inSandbox(
        async (box) => {
          const r = await box.run(['--page', 'endpoints/acc.md'])
          assert.equal(await box.page('endpoints/acc.md'), '# acc\n\n## Knob log\n')
          return outcome(r)
        },
        { 'endpoints/acc.md': '# acc\n\n## Knob log\n' },
      ),
  },
  {
    area: 'writeback',
    fault: 'a fleet report: web@A green, web@B red, api green',
    expected:
      "web.md refused, naming web@B (an entry for web@A would read as web's arm being green); api.md written; exit 5, the lines say which page took which entries",
    exit: 5,
    message: 'web@B is refused, so no entry is written for web@A either',
    run: () =>
      inSandbox(
        async (box) => {
          const r = await box.run()
          assert.equal(await box.page('web.md'), page('web'), 'web.md was written although one of its targets is red')
          assert.match(await box.page('api.md'), /PREFILL_INTERLEAVE 0 → 1 on `http:\/\/api-1:8000`/)
          assert.match(r.out, /api\.md: wrote 1 new entry for api under "## Knob log"/)
          assert.match(r.out, /fleet: 1 of 3 target\(s\) written; refused: web@A, web@B \(vault\/web\.md not changed\)/)
          assert.doesNotMatch(r.err, /the vault was not changed/)
          return outcome(r)
        },
        { 'web.md': page('web'), 'api.md': page('api') },
        fleet([
          ['web@A', target('web', 'http://gpu-a:8000')],
          ['web@B', red('web', 'http://gpu-b:8000')],
          ['api', target('api', 'http://api-1:8000')],
        ]),
      ),
  },
  {
    area: 'writeback',
    fault: 'a fleet report: two green targets of one service that finished at the same moment',
    expected: 'two entries in one write, each naming its endpoint (the marker includes it); written again: both already there',
    exit: 0,
    message: 'wrote 2 new entries for web@A, web@B',
    run: () => {
      const at = now()
      return inSandbox(
        async (box) => {
          const r = await box.run()
          const text = await box.page('web.md')
          assert.equal(text.match(/<!-- armproof:web:PREFILL_INTERLEAVE:/g)?.length, 2, 'not one entry per target')
          assert.match(text, /on `http:\/\/gpu-a:8000`[^\n]*\n[^\n]*\n- [^\n]*on `http:\/\/gpu-b:8000`/)
          const again = await box.run()
          assert.match(again.out, /already there: 2 entries for web@A, web@B/)
          assert.equal(await box.page('web.md'), text)
          return outcome(r)
        },
        { 'web.md': page('web') },
        fleet([
          ['web@A', target('web', 'http://gpu-a:8000', {}, at)],
          ['web@B', target('web', 'http://gpu-b:8000', {}, at)],
        ]),
      )
    },
  },
  {
    area: 'writeback',
    fault: 'a fleet report with a target entry that has no report, beside a green one',
    expected:
      'refused whole before any page is touched: solo.md is not written (it once was, then a crash, then "the vault was not changed")',
    exit: 2,
    message: 'a target without a report; the fleet report is refused whole, before any page is touched',
    run: () =>
      inSandbox(
        async (box) => {
          const r = await box.run()
          assert.equal(await box.page('solo.md'), page('solo'))
          assert.deepEqual(await box.files(), ['solo.md'])
          return outcome(r)
        },
        { 'solo.md': page('solo') },
        fleet([
          ['solo', target('solo', 'http://solo:8000')],
          ['ghost', undefined],
        ]),
      ),
  },
  {
    area: 'writeback',
    fault: 'a fleet report whose one target has a malformed report (verdict "RED")',
    expected: 'refused whole, naming the target and the field',
    exit: 2,
    message: 'targets[1] ("web@B")',
    run: () =>
      inSandbox(
        async (box) => outcome(await box.run()),
        { 'web.md': page('web') },
        fleet([
          ['web@A', target('web', 'http://gpu-a:8000')],
          ['web@B', target('web', 'http://gpu-b:8000', { verdict: 'RED' })],
        ]),
      ),
  },
  {
    area: 'writeback',
    fault: 'a "## Knob log" heading inside an HTML comment, the real one further down',
    expected: 'the comment is no heading: the entry goes under the real one, the comment is left as it was',
    exit: 0,
    message: 'wrote the PREFILL_INTERLEAVE entry',
    run: () => {
      const text = [
        '---',
        'service: llm-7',
        '---',
        '# llm-7',
        '',
        '<!--',
        '## Knob log',
        'old notes, kept out of the page',
        '-->',
        '',
        '## Knob log',
        '',
        '## Contacts',
        '',
      ].join('\n')
      return inSandbox(
        async (box) => {
          const r = await box.run()
          const after = await box.page('llm-7.md')
          assert.ok(after.startsWith(text.split('\n').slice(0, 12).join('\n')), 'the comment was changed')
          assert.ok(after.indexOf('<!-- armproof:llm-7') > after.lastIndexOf('## Knob log'), 'the entry went into the comment')
          return outcome(r)
        },
        { 'llm-7.md': text },
      )
    },
  },
  {
    area: 'writeback',
    fault: 'the only "## Knob log" heading inside an HTML comment',
    expected: 'no heading: a real one is appended with the entry',
    exit: 0,
    message: 'wrote the PREFILL_INTERLEAVE entry',
    run: () =>
      inSandbox(
        async (box) => {
          const r = await box.run()
          const after = await box.page('llm-7.md')
          assert.match(after, /<!-- ## Knob log -->\n\n## Knob log\n\n- /)
          return outcome(r)
        },
        { 'llm-7.md': `${PAGE.replace('## Knob log\n\n', '')}<!-- ## Knob log -->\n` },
      ),
  },
  {
    area: 'writeback',
    fault: 'a "## Knob log" heading inside a fenced code block',
    expected: 'no heading: a real one is appended; the code block is left as it was',
    exit: 0,
    message: 'wrote the PREFILL_INTERLEAVE entry',
    run: () =>
      inSandbox(
        async (box) => {
          const r = await box.run()
          assert.match(await box.page('llm-7.md'), /```md\n## Knob log\n```\n\n## Knob log\n\n- /)
          return outcome(r)
        },
        { 'llm-7.md': '---\nservice: llm-7\n---\n# llm-7\n\n```md\n## Knob log\n```\n' },
      ),
  },
  {
    area: 'writeback',
    fault: 'a setext heading (Contacts underlined with ---) after the Knob log, a list under it',
    expected: 'a heading ends the Knob log as an ATX one does: the entry goes under the Knob log, never under Contacts',
    exit: 0,
    message: 'wrote the PREFILL_INTERLEAVE entry',
    run: () => {
      const text = [
        '---',
        'service: llm-7',
        '---',
        '# llm-7',
        '',
        '## Knob log',
        '',
        '- 2026-01-02 older entry',
        '',
        'Contacts',
        '--------',
        '',
        '- oncall: #infra',
        '',
      ].join('\n')
      return inSandbox(
        async (box) => {
          const r = await box.run()
          const after = await box.page('llm-7.md')
          const entry = after.indexOf('<!-- armproof:llm-7')
          assert.ok(
            entry > after.indexOf('- 2026-01-02 older entry') && entry < after.indexOf('Contacts\n--------'),
            `the entry is not in the Knob log:\n${after}`,
          )
          assert.ok(after.includes('\n\nContacts\n--------\n\n- oncall: #infra\n'), 'the Contacts heading was changed')
          return outcome(r)
        },
        { 'llm-7.md': text },
      )
    },
  },
  {
    area: 'writeback',
    fault: 'the Knob log itself a setext heading (Knob log underlined with ---)',
    expected: 'it is the Knob log: the entry goes under it, no second Knob log is appended',
    exit: 0,
    message: 'wrote the PREFILL_INTERLEAVE entry',
    run: () =>
      inSandbox(
        async (box) => {
          const r = await box.run()
          const after = await box.page('llm-7.md')
          assert.match(after, /\nKnob log\n--------\n\n- .*armproof:llm-7.*\n {2}rollback: .*\n\n# Contacts\n/)
          assert.ok(!after.includes('## Knob log'), 'a second Knob log was appended')
          return outcome(r)
        },
        { 'llm-7.md': ['---', 'service: llm-7', '---', '# llm-7', '', 'Knob log', '--------', '', '# Contacts', ''].join('\n') },
      ),
  },
  {
    area: 'writeback',
    fault: 'an HTML comment opened before the Knob log and never closed',
    expected: 'refused with the line: an entry written after it would not show',
    exit: 2,
    message: 'has an HTML comment opened at line 5 that never closes',
    run: () =>
      inSandbox(async (box) => outcome(await box.run()), { 'llm-7.md': '---\nservice: llm-7\n---\n# llm-7\n<!-- draft\n\n## Knob log\n' }),
  },
]
