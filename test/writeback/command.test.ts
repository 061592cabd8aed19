// `pnpm writeback`: every refusal (exit 2, vault untouched), page discovery, the entry format,
// insertion that leaves every other byte alone, idempotence, atomicity, --dry-run, the CI examples,
// and one end-to-end run from a real (replayed) green `pnpm verify` report.
import { chmod, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { execa } from 'execa'
import { afterAll, describe, expect, test } from 'vitest'
import { nodeFs, type WritebackFs } from '../../helpers/writeback/atomic.ts'
import { entryLines, insertEntry, writeback, type WritebackIo } from '../../helpers/writeback/command.ts'
import { readReport } from '../../helpers/writeback/report.ts'
import { unifiedDiff } from '../../helpers/writeback/diff.ts'
import { ROOT, cleanup, runVerify } from '../support/run-verify.ts'
import { passedSteps, sandbox as baseSandbox } from '../support/writeback-sandbox.ts'
import { DEMO_ARM } from '../support/demo-args.ts'

const FINISHED = '2026-11-30T02:31:05.120Z'
const NOW = new Date('2026-11-30T03:00:00.000Z')
const HOUR = 3_600_000
const METER = 'radiance:engine_steps_held_total'

const ENTRY = [
  `- 2026-11-30 · PREFILL_INTERLEAVE 0 → 1 · meter ${METER} 0 → 126, moved after 3m 40s (armproof green, report finished 2026-11-30T02:31:05Z) <!-- armproof:llm-7:PREFILL_INTERLEAVE:2026-11-30T02:31:05.120Z -->`,
  '  rollback: `PREFILL_INTERLEAVE=0` then redeploy `--service llm-7`',
]

const OLD_ITEM = [
  '- 2026-10-02 · BUSY_PREFILL_CHUNK default → 512 · no meter; proven by the ledger line (armproof green, report finished 2026-10-02T10:00:00Z) <!-- armproof:llm-7:BUSY_PREFILL_CHUNK:2026-10-02T10:00:00.000Z -->',
  '  rollback: `BUSY_PREFILL_CHUNK=` then redeploy `--service llm-7`',
]

/** An endpoint page with a Knob log followed by another section. */
const PAGE = [
  '---',
  'service: llm-7',
  'owner: infra',
  '---',
  '# llm-7',
  '',
  'Serves the 70B on gpu-7.',
  '',
  '## Knob log',
  '',
  ...OLD_ITEM,
  '',
  '## Contacts',
  '',
  '- oncall: #infra',
  '',
].join('\n')

function makeReport(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    svc: 'llm-7',
    knob: 'PREFILL_INTERLEAVE',
    expected: '1',
    previous: '0',
    mode: 'live',
    verdict: 'green',
    startedAt: '2026-11-30T02:26:00.000Z',
    finishedAt: FINISHED,
    steps: passedSteps(),
    meter: { name: METER, first: 0, last: 126, movedAt: '2026-11-30T02:30:40.000Z', movedAfterMs: 220_000, labels: {} },
    rollback: 'PREFILL_INTERLEAVE=0 then redeploy --service llm-7',
    error: null,
    notes: [],
    exitCode: 0,
    tool: { name: 'armproof', version: '0.1.0' },
    ...over,
  }
}

const dirs: string[] = []
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })))
})

interface Run {
  code: number
  out: string
  err: string
}

interface Sandbox {
  dir: string
  vault: string
  reportPath: string
  run(args?: readonly string[], over?: Partial<WritebackIo>): Promise<Run>
  page(rel: string): Promise<string>
  snapshot(): Promise<Record<string, string>>
}

/** The shared sandbox (test/support/writeback-sandbox.ts), removed after the file, with this file's
 * report, its clock, and a snapshot of every byte under the temp dir. */
async function sandbox(pages: Record<string, string | Buffer>, report: Record<string, unknown> | string = makeReport()): Promise<Sandbox> {
  const box = await baseSandbox(pages, report)
  dirs.push(box.dir)
  const snapshot = async () => {
    const out: Record<string, string> = {}
    for (const e of await readdir(box.dir, { recursive: true, withFileTypes: true })) {
      if (e.isFile()) out[relative(box.dir, join(e.parentPath, e.name))] = (await readFile(join(e.parentPath, e.name))).toString('base64')
    }
    return out
  }
  return { ...box, snapshot, run: (args = [], over = {}) => box.run(args, { now: () => NOW, ...over }) }
}

/** Asserts a refusal: exit 2, every line after the header is one "- checked (where): found; next: ..." line, vault untouched. */
async function expectRefused(box: Sandbox, run: Run, before: Record<string, string>, ...patterns: RegExp[]) {
  expect(run.code).toBe(2)
  expect(run.out).toBe('')
  const lines = run.err.trimEnd().split('\n')
  expect(lines[0]).toMatch(/^armproof writeback: refused \(\d+ problems?\); the vault was not changed\.$/)
  for (const line of lines.slice(1)) expect(line).toMatch(/^ {2}- .+ \(.+\): .+; next: .+$/)
  for (const p of patterns) expect(run.err).toMatch(p)
  expect(await box.snapshot()).toEqual(before)
}

describe('refusals: exit 2, one line each naming what was checked, where, and the next step; the vault untouched', () => {
  test.each<[string, Record<string, unknown> | string, string[], Date, RegExp[]]>([
    [
      'a red report',
      makeReport({ verdict: 'red', exitCode: 1 }),
      [],
      NOW,
      [/verdict and exitCode \(report\.json\): verdict "red", exitCode 1: not green; next: .*pnpm verify again/],
    ],
    ['a green verdict with a non-zero exit code', makeReport({ exitCode: 3 }), [], NOW, [/exitCode 3: not green/]],
    ['an inconclusive report', makeReport({ verdict: 'inconclusive', exitCode: 3 }), [], NOW, [/verdict "inconclusive"/]],
    [
      'a replay without --allow-replay',
      makeReport({ mode: 'replay' }),
      [],
      NOW,
      [/mode \(report\.json\): mode "replay": a replay re-judges an old recorded run, it is not a fresh proof; next: .*--allow-replay/],
    ],
    [
      'a report older than the default max age',
      makeReport(),
      [],
      new Date(Date.parse(FINISHED) + 25 * HOUR),
      [/finishedAt \(report\.json\): finished 2026-11-30T02:31:05\.120Z, 1d 1h ago, older than --max-age 24h; next: run pnpm verify again/],
    ],
    [
      'a report older than --max-age 90m',
      makeReport(),
      ['--max-age', '90m'],
      new Date(Date.parse(FINISHED) + 2 * HOUR),
      [/2h 0m ago, older than --max-age 90m/],
    ],
    ['a report from the future', makeReport(), [], new Date(Date.parse(FINISHED) - HOUR), [/in the future; next: check the clocks/]],
    [
      'a report for another service (--svc)',
      makeReport(),
      ['--svc', 'llm-8'],
      NOW,
      [/svc \(report\.json\): report is for service "llm-7", not "llm-8" \(--svc\)/],
    ],
    ['a missing report', '', [], NOW, []],
    ['a report that is not JSON', '<testsuites/>', [], NOW, [/report \(report\.json\): is not JSON; next: .*not the JUnit file/]],
    [
      'a report that is not an armproof report',
      { svc: 'llm-7; rm -rf /', verdict: 'green' },
      [],
      NOW,
      [
        /is not an armproof report: missing or malformed svc, knob, expected, previous, mode, startedAt, finishedAt, steps, meter, rollback, error, notes, exitCode, tool \(svc must be a service name/,
      ],
    ],
    ['a report with an unparseable finishedAt', makeReport({ finishedAt: 'yesterday' }), [], NOW, [/malformed finishedAt/]],
  ])('%s', async (name, report, args, now, patterns) => {
    const box = await sandbox({ 'endpoints/llm-7.md': PAGE }, report)
    if (name === 'a missing report') await rm(box.reportPath)
    const before = await box.snapshot()
    const run = await box.run(args, { now: () => now })
    await expectRefused(
      box,
      run,
      before,
      ...(name === 'a missing report' ? [/report \(report\.json\): no such file; next: pass the file pnpm verify wrote/] : patterns),
    )
  })

  test('several reasons at once are all listed, one line each', async () => {
    const box = await sandbox({ 'llm-7.md': PAGE }, makeReport({ verdict: 'red', exitCode: 1, mode: 'replay' }))
    const before = await box.snapshot()
    const run = await box.run(['--svc', 'llm-9'], { now: () => new Date(Date.parse(FINISHED) + 48 * HOUR) })
    await expectRefused(box, run, before, /refused \(4 problems\)/, /not green/, /"replay"/, /not "llm-9"/, /older than --max-age 24h/)
  })

  test('no page for the service: names the vault and both rules it looked by, and creates nothing', async () => {
    const box = await sandbox({ 'endpoints/llm-8.md': PAGE.replace('service: llm-7', 'service: llm-8'), 'README.md': '# vault\n' })
    const before = await box.snapshot()
    const run = await box.run()
    await expectRefused(
      box,
      run,
      before,
      /vault page for service "llm-7" \(vault\): none: looked for front matter service: llm-7 and for a file named llm-7\.md in 2 Markdown files \(skipped \.git, node_modules, hidden folders and symlinks\); next: .*writeback never creates a page/,
    )
  })

  test('two pages claiming the service: ambiguous owner, both listed', async () => {
    const box = await sandbox({ 'a/gpu-7.md': PAGE, 'b/llm7-old.md': PAGE })
    const before = await box.snapshot()
    await expectRefused(
      box,
      await box.run(),
      before,
      /2 pages claim it in front matter \(ambiguous owner\): a\/gpu-7\.md, b\/llm7-old\.md; next: keep service: llm-7 on one page only, or pass --page/,
    )
  })

  test('two pages named llm-7.md without front matter: ambiguous too', async () => {
    const box = await sandbox({ 'a/llm-7.md': '# a\n', 'b/llm-7.md': '# b\n' })
    const before = await box.snapshot()
    await expectRefused(box, await box.run(), before, /2 pages are named llm-7\.md \(ambiguous owner\): a\/llm-7\.md, b\/llm-7\.md/)
  })

  test('--page escaping the vault (../x.md) is refused even when the file exists', async () => {
    const box = await sandbox({ 'llm-7.md': PAGE })
    await writeFile(join(box.dir, 'x.md'), PAGE)
    const before = await box.snapshot()
    await expectRefused(
      box,
      await box.run(['--page', '../x.md']),
      before,
      /--page \("\.\.\/x\.md" under vault\): is outside the vault; next: pass a page inside the vault/,
    )
  })

  test('--page through a symlink out of the vault is refused', async () => {
    const box = await sandbox({})
    await writeFile(join(box.dir, 'outside.md'), PAGE)
    await symlink(join(box.dir, 'outside.md'), join(box.vault, 'llm-7.md'))
    const before = await box.snapshot()
    await expectRefused(box, await box.run(['--page', 'llm-7.md']), before, /resolves outside the vault/)
  })

  test('--page that does not exist is refused and not created', async () => {
    const box = await sandbox({ 'llm-7.md': PAGE })
    const before = await box.snapshot()
    await expectRefused(
      box,
      await box.run(['--page', 'endpoints/llm-7.md']),
      before,
      /--page \("endpoints\/llm-7\.md" under vault\): does not exist \(looked at .*endpoints\/llm-7\.md\); next: .*never creates a page/,
    )
  })

  test('--page owned by another service is refused', async () => {
    const box = await sandbox({ 'llm-8.md': PAGE.replace('service: llm-7', 'service: llm-8') })
    const before = await box.snapshot()
    await expectRefused(
      box,
      await box.run(['--page', 'llm-8.md']),
      before,
      /belongs to service "llm-8" \(front matter\), the report is for "llm-7"/,
    )
  })

  test('--page that is not Markdown is refused', async () => {
    const box = await sandbox({ 'llm-7.txt': PAGE })
    const before = await box.snapshot()
    await expectRefused(box, await box.run(['--page', 'llm-7.txt']), before, /is not a Markdown \(\.md\) file/)
  })

  test('a vault that is not a folder is refused', async () => {
    const box = await sandbox({})
    const before = await box.snapshot()
    await expectRefused(
      box,
      await box.run(['--vault', join(box.dir, 'no-vault')]),
      before,
      /--vault \(no-vault\): is not an existing folder/,
    )
  })

  test('a page that is not UTF-8 is refused rather than re-encoded', async () => {
    const box = await sandbox({ 'llm-7.md': Buffer.concat([Buffer.from('# llm-7\n\xff'), Buffer.from([0xff, 0xfe]), Buffer.from('\n')]) })
    const before = await box.snapshot()
    await expectRefused(box, await box.run(), before, /page encoding \(vault\/llm-7\.md\): is not valid UTF-8/)
  })

  test.each<[string, string[], RegExp]>([
    [
      'no flags',
      [],
      /--report \(command line and WRITEBACK_REPORT\): is required[\s\S]*--vault \(command line and WRITEBACK_VAULT\): is required/,
    ],
    [
      'a bad --max-age',
      ['--report', 'r.json', '--vault', '.', '--max-age', '1d'],
      /--max-age \(command line\): "1d" is not a positive duration; next: write it like 24h, 90m or 1h30m/,
    ],
    ['an unknown option', ['--report', 'r.json', '--vault', '.', '--force'], /unknown option "--force"/],
    ['a stray argument', ['--report', 'r.json', '--vault', '.', 'extra'], /unexpected argument "extra"/],
  ])('usage: %s → exit 2', async (_name, rawArgs, pattern) => {
    let err = ''
    const code = await writeback({ rawArgs, env: {}, cwd: tmpdir(), out: { write: () => true }, err: { write: (t: string) => (err += t) } })
    expect(code).toBe(2)
    expect(err).toMatch(pattern)
  })

  test('--help prints every option with its env twin and exits 0', async () => {
    let out = ''
    const code = await writeback({
      rawArgs: ['--help'],
      env: {},
      cwd: tmpdir(),
      out: { write: (t: string) => (out += t) },
      err: { write: () => true },
    })
    expect(code).toBe(0)
    for (const t of [
      '--report',
      'WRITEBACK_REPORT',
      '--vault',
      'WRITEBACK_VAULT',
      '--page',
      '--max-age',
      '--dry-run',
      '--allow-replay',
      '2 refused',
    ])
      expect(out).toContain(t)
  })
})

describe('page discovery', () => {
  test('front matter (quoted, in a sub-folder) names the owner; hidden folders, .git and node_modules are skipped', async () => {
    const quoted = PAGE.replace('service: llm-7', "service: 'llm-7'  # the 70B")
    const box = await sandbox({
      'infra/gpu/gpu-7.md': quoted,
      '.git/llm-7.md': PAGE,
      '.obsidian/llm-7.md': PAGE,
      'node_modules/x/llm-7.md': PAGE,
      'other.md': PAGE.replace('service: llm-7', 'service: llm-70'),
      'indented.md': PAGE.replace('service: llm-7', 'meta:\n  service: llm-7'),
    })
    const run = await box.run()
    expect(run.err).toBe('')
    expect(run.code).toBe(0)
    expect(run.out).toContain('vault/infra/gpu/gpu-7.md')
    expect(await box.page('infra/gpu/gpu-7.md')).toContain(ENTRY[0])
    expect(await box.page('other.md')).not.toContain('PREFILL_INTERLEAVE')
  })

  test('<svc>.md anywhere is the owner when no front matter claims the service, unless it claims another', async () => {
    const box = await sandbox({ 'endpoints/llm-7.md': '# llm-7\n', 'old/llm-7.md': '---\nservice: llm-7-old\n---\n# old\n' })
    const run = await box.run()
    expect(run.code).toBe(0)
    expect(await box.page('endpoints/llm-7.md')).toBe(`# llm-7\n\n## Knob log\n\n${ENTRY.join('\n')}\n`)
    expect(await box.page('old/llm-7.md')).toBe('---\nservice: llm-7-old\n---\n# old\n')
  })

  test('--page picks the owner when discovery is ambiguous', async () => {
    const box = await sandbox({ 'a/gpu-7.md': PAGE, 'b/llm7-old.md': PAGE })
    const run = await box.run(['--page', 'a/gpu-7.md'])
    expect(run.code).toBe(0)
    expect(await box.page('a/gpu-7.md')).toContain(ENTRY[0])
    expect(await box.page('b/llm7-old.md')).toBe(PAGE)
  })
})

describe('the entry', () => {
  const facts = async (over: Record<string, unknown> = {}) => {
    const box = await sandbox({}, makeReport(over))
    const r = await readReport(box.reportPath, 'report.json')
    expect(r.refusals).toEqual([])
    return r.report!
  }

  test('date, knob previous → new, the meter first → last and when it moved, the marker, and the rollback line', async () => {
    expect(entryLines(await facts())).toEqual(ENTRY)
  })

  test('no meter: proven by the ledger line; previous unknown: the default, and an empty rollback value', async () => {
    const [first, rollback] = entryLines(await facts({ knob: 'BUSY_PREFILL_CHUNK', expected: '512', previous: null, meter: null }))
    expect(first).toBe(
      '- 2026-11-30 · BUSY_PREFILL_CHUNK default → 512 · no meter; proven by the ledger line (armproof green, report finished 2026-11-30T02:31:05Z) <!-- armproof:llm-7:BUSY_PREFILL_CHUNK:2026-11-30T02:31:05.120Z -->',
    )
    expect(rollback).toBe('  rollback: `BUSY_PREFILL_CHUNK=` then redeploy `--service llm-7`')
  })

  test('a rollback run whose meter stayed at zero, and a replay, say so', async () => {
    const [first] = entryLines(
      await facts({
        expected: '0',
        previous: '1',
        mode: 'replay',
        meter: { name: METER, first: 0, last: 0, movedAt: null, movedAfterMs: null, labels: { engine: '0' } },
      }),
    )
    expect(first).toContain(
      `PREFILL_INTERLEAVE 1 → 0 · meter ${METER}{engine="0"} 0 → 0, stayed at zero while traffic flowed (armproof green, replay of a recorded run,`,
    )
  })

  test('a meter above zero since before the run says so, not "did not move"; an unknown proof word is refused', async () => {
    const [first] = entryLines(
      await facts({ meter: { name: METER, first: 7, last: 7, movedAt: null, movedAfterMs: null, labels: {}, proof: 'before-run' } }),
    )
    expect(first).toContain(`meter ${METER} 7 → 7, above zero since before this run, in the process argv read (armproof green`)
    const box = await sandbox(
      {},
      makeReport({ meter: { name: METER, first: 7, last: 7, movedAt: null, movedAfterMs: null, labels: {}, proof: 'trust me' } }),
    )
    expect((await readReport(box.reportPath, 'report.json')).refusals.map((r) => r.found)).toEqual([
      'is not an armproof report: missing or malformed meter (meter.proof must be one of "rose", "before-run", "stayed-at-zero", found "trust me")',
    ])
  })

  test('untrusted report text cannot break the page: no newlines, control characters, backticks or comment ends', async () => {
    const evil = 'x`\n## Owned\r\n<!-- -->\u0007\u2028'
    // The gate refuses such a report (the schema); the entry is safe even for facts that bypass it.
    const base = await facts()
    const lines = entryLines({
      ...base,
      knob: `PI${evil}`,
      expected: `1${evil}`,
      previous: `0${evil}`,
      meter: { name: `m${evil}`, first: 0, last: 1, movedAt: null, movedAfterMs: 5, labels: { [`k${evil}`]: `v${evil}` } },
    })
    expect(lines).toHaveLength(2)
    for (const line of lines) expect(line).not.toMatch(/[\u0000-\u001f\u2028\u2029]/)
    expect(lines[0]!.match(/<!--/g)).toHaveLength(1)
    expect(lines[0]!.match(/-->/g)).toHaveLength(1)
    // Untrusted text sits in code spans, where Markdown parses nothing; no backtick of its own survives.
    expect(lines[0]!.match(/`/g)!.length % 2).toBe(0)
    expect(lines[1]!.match(/`/g)).toHaveLength(4)
    expect(lines[0]).toMatch(/<!-- armproof:llm-7:PI[A-Za-z0-9_.:+-]+:2026-11-30T02:31:05\.120Z -->$/)
  })
})

describe('insertion leaves every byte outside the entry as it was', () => {
  const entryAt = (before: string, after: string, inserted: string) => {
    const k = after.indexOf(inserted)
    expect(k).toBeGreaterThan(-1)
    expect(after.slice(0, k) + after.slice(k + inserted.length)).toBe(before)
  }

  test('under an existing Knob log: after its last item, before the next heading', async () => {
    const box = await sandbox({ 'llm-7.md': PAGE })
    expect((await box.run()).code).toBe(0)
    const after = await box.page('llm-7.md')
    expect(after).toBe(PAGE.replace(`${OLD_ITEM[1]}\n`, `${OLD_ITEM[1]}\n${ENTRY.join('\n')}\n`))
    entryAt(PAGE, after, `${ENTRY.join('\n')}\n`)
  })

  test('no Knob log: the heading and the entry are appended at the end', async () => {
    const page = '---\nservice: llm-7\n---\n# llm-7\n\nNotes.\n'
    expect(insertEntry(page, ENTRY)).toBe(`${page}\n## Knob log\n\n${ENTRY.join('\n')}\n`)
    expect(insertEntry('# llm-7\n\n', ENTRY)).toBe(`# llm-7\n\n## Knob log\n\n${ENTRY.join('\n')}\n`)
    expect(insertEntry('', ENTRY)).toBe(`## Knob log\n\n${ENTRY.join('\n')}\n`)
  })

  test('a page without a trailing newline stays without one', () => {
    expect(insertEntry('# llm-7\n\nNotes.', ENTRY)).toBe(`# llm-7\n\nNotes.\n\n## Knob log\n\n${ENTRY.join('\n')}`)
    const log = `# llm-7\n\n## Knob log\n\n${OLD_ITEM.join('\n')}`
    expect(insertEntry(log, ENTRY)).toBe(`${log}\n${ENTRY.join('\n')}`)
  })

  test('CRLF stays CRLF', async () => {
    const crlf = PAGE.replaceAll('\n', '\r\n')
    const box = await sandbox({ 'llm-7.md': crlf })
    expect((await box.run()).code).toBe(0)
    const after = await box.page('llm-7.md')
    expect(after.match(/(?<!\r)\n/g)).toBeNull()
    entryAt(crlf, after, `${ENTRY.join('\r\n')}\r\n`)
  })

  test('an empty Knob log section, a Knob log heading inside a code fence, and front matter are handled', () => {
    const empty = '# llm-7\n\n## Knob log\n\n## Contacts\n- x\n'
    expect(insertEntry(empty, ENTRY)).toBe(`# llm-7\n\n## Knob log\n\n${ENTRY.join('\n')}\n\n## Contacts\n- x\n`)
    const tight = '## Knob log\n## Contacts\n'
    expect(insertEntry(tight, ENTRY)).toBe(`## Knob log\n\n${ENTRY.join('\n')}\n\n## Contacts\n`)
    const fenced = '# llm-7\n\n```md\n## Knob log\n- fake\n```\n'
    expect(insertEntry(fenced, ENTRY)).toBe(`${fenced}\n## Knob log\n\n${ENTRY.join('\n')}\n`)
    const withText = '## Knob log\n\nArms of this endpoint, newest last.\n'
    expect(insertEntry(withText, ENTRY)).toBe(`${withText}\n${ENTRY.join('\n')}\n`)
  })

  test('an entry never lands inside the last item: its continuation paragraphs, nested lists and code stay with it', () => {
    const E = ENTRY.join('\n')
    const para = '## Knob log\n\n- old\n  rollback: x\n\n  Rolled back the next day.\n\n## Contacts\n'
    expect(insertEntry(para, ENTRY)).toBe(`## Knob log\n\n- old\n  rollback: x\n\n  Rolled back the next day.\n${E}\n\n## Contacts\n`)
    const nested = '## Knob log\n\n1. old\n   - why: bench\n\n     more on why\n'
    expect(insertEntry(nested, ENTRY)).toBe(`${nested}${E}\n`)
    const code = '## Knob log\n\n- old\n\n  ```sh\n  # not a heading\n\n  - not an item\n  ```\n\nNotes after the list.\n'
    expect(insertEntry(code, ENTRY)).toBe(code.replace('  ```\n\n', `  \`\`\`\n${E}\n\n`))
    const lazy = '## Knob log\n\n- old\nlazy continuation\n'
    expect(insertEntry(lazy, ENTRY)).toBe(`${lazy}${E}\n`)
  })

  test('a code fence that never closes: refused with its line when the entry would go after it, fine when it comes later', () => {
    expect(() => insertEntry('# llm-7\n\n~~~\ncode\n', ENTRY)).toThrow(/code fence opened at line 3 that never closes/)
    expect(() => insertEntry('## Knob log\n\n- old\n```\n', ENTRY)).toThrow(/line 4/)
    const later = '## Knob log\n\n- old\n\n## Notes\n\n```\nunclosed\n'
    expect(insertEntry(later, ENTRY)).toBe(later.replace('- old\n', `- old\n${ENTRY.join('\n')}\n`))
  })

  test("the page's file mode is kept", async () => {
    const box = await sandbox({ 'llm-7.md': PAGE })
    await chmod(join(box.vault, 'llm-7.md'), 0o640)
    expect((await box.run()).code).toBe(0)
    expect((await stat(join(box.vault, 'llm-7.md'))).mode & 0o777).toBe(0o640)
  })
})

describe('idempotence', () => {
  test('writing the same report twice leaves one entry; the second run exits 0 with nothing to do', async () => {
    const box = await sandbox({ 'llm-7.md': PAGE })
    expect((await box.run()).code).toBe(0)
    const once = await box.page('llm-7.md')
    const again = await box.run()
    expect(again.code).toBe(0)
    expect(again.out).toMatch(
      /already there: vault\/llm-7\.md has the entry for llm-7 PREFILL_INTERLEAVE finished 2026-11-30T02:31:05\.120Z; nothing to do/,
    )
    expect(await box.page('llm-7.md')).toBe(once)
    expect(once.split('armproof:llm-7:PREFILL_INTERLEAVE:').length - 1).toBe(1)
  })

  test('a different report for the same knob adds a second entry after the first', async () => {
    const box = await sandbox({ 'llm-7.md': PAGE })
    expect((await box.run()).code).toBe(0)
    await writeFile(box.reportPath, JSON.stringify(makeReport({ finishedAt: '2026-11-30T02:50:00.000Z', expected: '0', previous: '1' })))
    expect((await box.run()).code).toBe(0)
    const page = await box.page('llm-7.md')
    const first = page.indexOf('2026-11-30T02:31:05.120Z -->')
    const second = page.indexOf('2026-11-30T02:50:00.000Z -->')
    expect(first).toBeGreaterThan(-1)
    expect(second).toBeGreaterThan(first)
    expect(second).toBeLessThan(page.indexOf('## Contacts'))
  })
})

describe('atomicity: a failure mid-write leaves the page as it was and no temp file behind', () => {
  const failing = (over: Partial<WritebackFs>): WritebackFs => ({ ...nodeFs, ...over })

  test.each<[string, WritebackFs, RegExp]>([
    [
      'the write dies half way',
      failing({
        async open(path, flags, mode) {
          const handle = await nodeFs.open(path, flags, mode)
          return {
            async writeFile(data) {
              await handle.writeFile(data.subarray(0, data.length >> 1))
              throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
            },
            sync: () => handle.sync(),
            close: () => handle.close(),
          }
        },
      }),
      /could not be written \(ENOSPC: no space left on device, write\); the page was left as it was; next: check the vault folder is writable/,
    ],
    [
      'the rename fails',
      failing({
        rename: async () => {
          throw new Error('EXDEV: cross-device link not permitted')
        },
      }),
      /could not be written \(EXDEV/,
    ],
    [
      'the page changed while writing',
      failing({ readFile: async () => Buffer.from('someone else wrote this') }),
      /page write \(vault\/llm-7\.md\): changed while writing; nothing was replaced; next: run pnpm writeback again/,
    ],
  ])('%s', async (_name, fs, pattern) => {
    const box = await sandbox({ 'llm-7.md': PAGE })
    const before = await box.snapshot()
    const run = await box.run([], { fs })
    await expectRefused(box, run, before, pattern)
    expect(await readdir(box.vault)).toEqual(['llm-7.md'])
  })
})

describe('--dry-run', () => {
  test('prints a unified diff of the one inserted entry and writes nothing', async () => {
    const box = await sandbox({ 'llm-7.md': PAGE })
    const before = await box.snapshot()
    const run = await box.run(['--dry-run'])
    expect(run.code).toBe(0)
    expect(run.out).toContain('--- a/llm-7.md\n+++ b/llm-7.md\n@@ -10,6 +10,8 @@\n')
    expect(run.out).toContain(`\n+${ENTRY[0]}\n+${ENTRY[1]}\n \n ## Contacts\n`)
    expect(run.out).toMatch(/dry run; vault\/llm-7\.md was not changed/)
    expect(await box.snapshot()).toEqual(before)
  })

  test('the diff of an append shows the new heading', () => {
    expect(unifiedDiff('a\nb\n', 'a\nb\n\n## Knob log\n', 'p.md')).toBe('--- a/p.md\n+++ b/p.md\n@@ -1,2 +1,4 @@\n a\n b\n+\n+## Knob log')
  })
})

describe('options from env', () => {
  test('WRITEBACK_* work without flags, a flag beats env, and no env value is ever printed', async () => {
    const box = await sandbox({ 'llm-7.md': PAGE })
    const secret = 'sk-live-writeback-93f1'
    let out = ''
    let err = ''
    const io = (rawArgs: string[], env: Record<string, string>) => ({
      rawArgs,
      env: { VERIFY_API_KEY: secret, ...env },
      cwd: box.dir,
      now: () => NOW,
      out: { write: (t: string) => (out += t) },
      err: { write: (t: string) => (err += t) },
    })
    expect(await writeback(io([], { WRITEBACK_REPORT: 'report.json', WRITEBACK_VAULT: 'vault', WRITEBACK_MAX_AGE: '10m' }))).toBe(2)
    expect(err).toMatch(/older than --max-age 10m/)
    expect(
      await writeback(
        io(['--max-age', '1h'], {
          WRITEBACK_REPORT: 'report.json',
          WRITEBACK_VAULT: 'vault',
          WRITEBACK_MAX_AGE: '10m',
          WRITEBACK_DRY_RUN: '1',
        }),
      ),
    ).toBe(0)
    expect(out).toMatch(/dry run/)
    expect(await writeback(io([], { WRITEBACK_REPORT: 'report.json', WRITEBACK_VAULT: 'vault', WRITEBACK_DRY_RUN: 'maybe' }))).toBe(2)
    expect(err).toMatch(/WRITEBACK_DRY_RUN \(env\): "maybe" is not 1\/0\/true\/false/)
    expect(`${out}${err}`).not.toContain(secret)
  })
})

describe('end to end: pnpm verify (replay) then pnpm writeback', () => {
  test('a real green report is refused as a replay, written with --allow-replay, and a second write is a no-op', async () => {
    const verify = await runVerify([...DEMO_ARM, '--mode', 'replay'])
    try {
      expect(verify.exitCode).toBe(0)
      const box = await sandbox({ 'endpoints/demo.md': '# demo\n\nThe demo endpoint.\n' })
      const wb = (args: string[]) =>
        execa(process.execPath, [join(ROOT, 'bin/writeback.ts'), '--report', verify.reportPath, '--vault', box.vault, ...args], {
          cwd: box.dir,
          reject: false,
          env: { CI: 'true' },
        })
      const refused = await wb([])
      expect(refused.exitCode).toBe(2)
      expect(refused.stderr).toMatch(/mode "replay".*--allow-replay/)
      // --max-age measures a replay from its recording's recordedAt; the committed demo recording is old.
      // The demo recording holds the engine's record (one-flag), so the entry carries its engine line.
      const written = await wb(['--allow-replay', '--max-age', '100000h'])
      expect(written.exitCode).toBe(0)
      const page = await box.page('endpoints/demo.md')
      expect(page).toMatch(
        /^# demo\n\nThe demo endpoint\.\n\n## Knob log\n\n- \d{4}-\d{2}-\d{2} · PREFILL_INTERLEAVE 0 → 1 on `http:\/\/127\.0\.0\.1:\d+` · meter radiance:engine_steps_held_total 0 → \d+, moved after .+ \(armproof green, replay of a recorded run, report finished .+Z\) <!-- armproof:demo:PREFILL_INTERLEAVE:.+:http:__127\.0\.0\.1:\d+:record=[0-9a-f]{16} -->\n {2}rollback: `PREFILL_INTERLEAVE=0` then redeploy `--service demo`\n {2}engine: model `radiance-ref-8b` · image none · binary .+ command line .*--prefill-interleave=1`\n$/,
      )
      const again = await wb(['--allow-replay', '--max-age', '100000h'])
      expect(again.exitCode).toBe(0)
      expect(again.stdout).toMatch(/already there/)
      expect(await box.page('endpoints/demo.md')).toBe(page)
    } finally {
      cleanup(verify)
    }
  })
})

describe('CI examples', () => {
  test.each(['github-actions.yml', 'gitlab-ci.yml'])(
    'examples/ci/%s runs armproof verify per service and armproof writeback only for exit 0',
    async (name) => {
      const text = await readFile(join(ROOT, 'examples/ci', name), 'utf8')
      expect(text.trim().length).toBeGreaterThan(200)
      expect(text).not.toMatch(/\t/)
      // The installed command (the packed tool or the image), no longer pnpm in a checkout of armproof.
      for (const t of ['armproof verify', 'armproof writeback', 'VERIFY_API_KEY', 'reports/', 'commit -m', 'push', '.exit'])
        expect(text).toContain(t)
      for (const line of text.split('\n'))
        if (line.trim() !== '' && !line.trimStart().startsWith('#')) expect((line.length - line.trimStart().length) % 2).toBe(0)
      // Stage only the pages writeback changed: `add -A` would commit a temp or lock file a killed writeback left.
      expect(text).toContain('git -C vault add -u')
      expect(text).not.toMatch(/git -C vault add (-A|--all|\.)/)
      if (name === 'github-actions.yml') {
        for (const t of [
          'matrix:',
          'fail-fast: false',
          'actions/upload-artifact',
          'actions/download-artifact',
          'needs: verify',
          'if: always()',
          `if: \${{ !cancelled() }}`,
          '--summary',
        ])
          expect(text).toContain(t)
        // A red or inconclusive service must make the workflow red: no step may swallow verify's exit code.
        expect(text).not.toMatch(/continue-on-error:\s*true/)
        expect(text).toMatch(/exit "\$code"/)
      } else {
        for (const t of ['parallel:', 'matrix:', 'artifacts:', 'when: always', 'needs:']) expect(text).toContain(t)
        // A red or inconclusive service must make the pipeline red.
        expect(text).not.toMatch(/^\s*allow_failure:/m)
      }
    },
  )
})
