// The one-flag law's baseline, read before contact: a --baseline-report that is not the service's
// last green report, or a --vault that is no folder or holds two pages of the service, is the
// operator's to fix (exit 2, with the others); a source without a record is a baseline without
// one (the step is then skipped, saying why); an edited engine line is not trusted.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { recordDigest, recordText, type ArmRecord } from '../../helpers/config/arm-record.ts'
import { loadConfig } from '../../helpers/config/load.ts'
import { tempDir } from '../support/temp-dir.ts'

const dir = tempDir('armproof-baseline-')
const RECORD: ArmRecord = {
  flags: { '--port': '8000' },
  args: [],
  binary: { path: '/usr/bin/radiance', size: 5, mtime: 1_700_000_000 },
  image: null,
  model: 'm',
}
const ARGS = ['--svc', 'llm-7', '--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--base-url', 'http://gpu-7:8000']

function load(extra: string[]) {
  return loadConfig({ argv: [...ARGS, ...extra], env: { VERIFY_NO_DOTENV: '1' }, cwd: dir })
}
const problems = (extra: string[]): string[] => {
  const c = load(extra)
  return c.ok ? [] : c.problems.map((p) => p.message)
}
const baseline = (extra: string[]) => {
  const c = load(extra)
  if (!c.ok) throw new Error(c.problems.map((p) => p.message).join('\n'))
  return c.target.baseline
}
const report = (over: Record<string, unknown>, record: unknown = RECORD) => ({
  svc: 'llm-7',
  verdict: 'green',
  exitCode: 0,
  finishedAt: '2026-11-30T02:31:05.120Z',
  tool: { name: 'armproof', version: '0' },
  steps: record === 'none' ? [{ id: 'meter' }] : [{ id: 'one-flag', evidence: { record } }],
  ...over,
})
const file = (name: string, data: unknown): string => {
  writeFileSync(join(dir, name), typeof data === 'string' ? data : JSON.stringify(data))
  return name
}

describe('--baseline-report', () => {
  test("the service's green report: its one-flag record is the baseline", () => {
    expect(baseline(['--baseline-report', file('ok.json', report({}))])).toEqual({
      from: '--baseline-report ok.json',
      finishedAt: '2026-11-30T02:31:05.120Z',
      record: RECORD,
    })
  })
  test('a report from before the law: a baseline without a record, saying why', () => {
    expect(baseline(['--baseline-report', file('old.json', report({}, 'none'))])).toMatchObject({
      record: null,
      why: 'it was written by an armproof before the one-flag law: it holds no record of the engine',
    })
  })
  test.each([
    ['missing', 'nope.json', /no such file/],
    ['not JSON', file('junit.xml', '<testsuites/>'), /is not JSON/],
    ['another service', file('other.json', report({ svc: 'llm-8' })), /is the report of service "llm-8", not "llm-7"/],
    ['red', file('red.json', report({ verdict: 'red', exitCode: 1 })), /is not green \(verdict "red", exit 1\)/],
    ['not a report', file('x.json', { a: 1 }), /is not the report of one target that verify writes/],
  ])('%s: exit 2 before contact', (_name, path, message) => {
    const said = problems(['--baseline-report', path])
    expect(said).toHaveLength(1)
    expect(said[0]).toMatch(message)
  })
})

describe('--vault', () => {
  const entry = (finishedAt: string, record: ArmRecord | null, edit = (t: string) => t) =>
    [
      `- 2026-11-30 · PREFILL_INTERLEAVE 0 → 1 · meter x 0 → 1, moved after 1s (armproof green, report finished ${finishedAt}) <!-- armproof:llm-7:PREFILL_INTERLEAVE:${finishedAt}:http:__gpu-7:8000${record ? `:record=${recordDigest(record)}` : ''} -->`,
      '  rollback: `PREFILL_INTERLEAVE=0` then redeploy `--service llm-7`',
      ...(record ? [edit(`  engine: ${recordText(record)}`)] : []),
    ].join('\n')
  const vault = (name: string, pages: Record<string, string>): string => {
    mkdirSync(join(dir, name), { recursive: true })
    for (const [p, text] of Object.entries(pages)) writeFileSync(join(dir, name, p), text)
    return name
  }
  const NEWER = { ...RECORD, flags: { '--port': '9000' } }

  test('the newest armproof entry of the service (for this endpoint) is the baseline', () => {
    const v = vault('v1', {
      'llm-7.md': `# llm-7\n\n## Knob log\n\n${entry('2026-11-30T02:31:05.120Z', NEWER)}\n${entry('2026-11-29T02:31:05.120Z', RECORD)}\n`,
    })
    expect(baseline(['--vault', v])).toEqual({
      from: '--vault v1 (llm-7.md, the entry of line 5)',
      finishedAt: '2026-11-30T02:31:05.120Z',
      record: NEWER,
    })
  })
  test('no page, no entry, an entry before the law: a baseline without a record, each saying why', () => {
    expect(baseline(['--vault', vault('v2', { 'other.md': '# x\n' })])).toMatchObject({
      record: null,
      why: expect.stringContaining('no page of llm-7 in it'),
    })
    expect(baseline(['--vault', vault('v3', { 'llm-7.md': '# llm-7\n' })])).toMatchObject({
      record: null,
      why: 'llm-7.md holds no armproof entry of llm-7 for this endpoint: this is its first recorded arm',
    })
    expect(baseline(['--vault', vault('v4', { 'llm-7.md': `## Knob log\n\n${entry('2026-11-30T02:31:05.120Z', null)}\n` })])).toMatchObject(
      {
        record: null,
        why: 'its newest entry was written before the one-flag law: it holds no record of the engine',
      },
    )
  })
  test('an engine line edited after writeback wrote it is not trusted', () => {
    const v = vault('v5', {
      'llm-7.md': `## Knob log\n\n${entry('2026-11-30T02:31:05.120Z', RECORD, (t) => t.replace('--port=8000', '--port=8001'))}\n`,
    })
    expect(baseline(['--vault', v])).toMatchObject({
      record: null,
      untrusted: true,
      why: expect.stringContaining('was edited after armproof wrote it'),
    })
  })
  test('no folder, or two pages of the service: exit 2 before contact', () => {
    expect(problems(['--vault', 'nowhere'])[0]).toMatch(/"nowhere": no such folder/)
    const v = vault('v6', { 'a.md': '---\nservice: llm-7\n---\n', 'b.md': '---\nservice: llm-7\n---\n' })
    expect(problems(['--vault', v])[0]).toMatch(/2 pages are llm-7's \(a\.md, b\.md\)/)
  })
  test('neither option: no baseline (the step is skipped, saying so); a replay takes its recording’s', () => {
    expect(baseline([])).toBeNull()
  })
})
