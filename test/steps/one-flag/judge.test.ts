// Step one-flag judged directly, its host answering from a table: what it says for each kind of
// baseline (none, without a record, untrusted, a record), where the engine cannot be read, and
// that a secret on the engine's command line is never in what it keeps or says.
import { describe, expect, test } from 'vitest'
import type { ArmRecord } from '../../../helpers/config/arm-record.ts'
import type { Baseline } from '../../../helpers/config/baseline.ts'
import { checkOneFlag } from '../../../helpers/steps/one-flag/judge.ts'
import type { InputsOf } from '../../../helpers/steps/context.ts'
import { answeringHost, stepContext, stepTarget, type HostAnswer } from '../../support/step-context.ts'
import type { HostRun } from '../../../helpers/seams/host.ts'

const SECRET = 'sk-one-flag-0123456789'
const ARGV = ['/usr/bin/radiance', 'serve', '--port', '8000', '--prefill-interleave', '1', '--api-key', SECRET]
const FLAGS = [
  { name: '--port', takesValue: true },
  { name: '--prefill-interleave', takesValue: true },
  { name: '--api-key', takesValue: true },
]
const inputs: InputsOf<'one-flag'> = {
  buildFlags: FLAGS,
  engineCommand: { pid: '42', argv: ARGV },
  model: { settled: async () => 'm', get: async () => 'm', cards: async () => [], mistake: async () => undefined, replyId: async () => [] },
}
const exe = (req: HostRun): HostAnswer =>
  req.script.includes('/proc/$P/exe')
    ? { stdout: '100 1700000000\n/usr/bin/radiance\n' }
    : req.script.includes('inspect')
      ? { exitCode: 125, stderr: 'Error: no such object: "llm-7"' }
      : {}
const BEFORE: ArmRecord = {
  flags: { '--port': '8000', '--api-key': '[redacted]' },
  args: ['serve'],
  binary: { path: '/usr/bin/radiance', size: 100, mtime: 1_700_000_000 },
  image: null,
  model: 'm',
}

async function judged(baseline: Baseline | null | undefined, answer = exe, given = inputs) {
  const target = { ...stepTarget(['--knob', 'PREFILL_INTERLEAVE', '--value', '1']), baseline }
  if (baseline === undefined) delete (target as { baseline?: unknown }).baseline
  const host = answeringHost(answer)
  const j = await checkOneFlag(stepContext(target, host), given)
  expect(JSON.stringify(j)).not.toContain(SECRET)
  return { j, calls: host.calls }
}

describe('step one-flag', () => {
  test('a recording from before the law: skipped on purpose, reading nothing', async () => {
    const { j, calls } = await judged(undefined)
    expect([j.verdict, j.intendedSkip]).toEqual(['skipped', true])
    expect(calls).toEqual([])
  })

  test('no baseline: skipped on purpose, saying why, the record kept (the secret redacted)', async () => {
    const { j } = await judged(null)
    expect(j).toMatchObject({ verdict: 'skipped', intendedSkip: true })
    expect(j.observed).toBe('no earlier record of llm-7 to compare with: neither --baseline-report nor --vault was given')
    expect(j.evidence.record).toEqual({ ...BEFORE, flags: { ...BEFORE.flags, '--prefill-interleave': '1' } })
  })

  test('a baseline without a record says where and why; an untrusted one is inconclusive', async () => {
    const none = await judged({ from: '--vault v (llm-7.md)', finishedAt: null, record: null, why: 'this is its first recorded arm' })
    expect(none.j.observed).toBe('no earlier record of llm-7 to compare with: --vault v (llm-7.md): this is its first recorded arm')
    const edited = await judged({ from: '--vault v', finishedAt: null, record: null, untrusted: true, why: 'it was edited' })
    expect(edited.j.verdict).toBe('inconclusive')
    expect(edited.j.observed).toBe('the baseline cannot be trusted: --vault v: it was edited')
  })

  test('only the knob changed: passed; a second change: failed, both values named', async () => {
    const base = { from: '--baseline-report r.json', finishedAt: '2026-12-01T00:00:00Z', record: BEFORE }
    expect((await judged(base)).j.verdict).toBe('passed')
    const moved = await judged(base, (req) =>
      req.script.includes('/proc/$P/exe') ? { stdout: '101 1700000000\n/usr/bin/radiance\n' } : exe(req),
    )
    expect(moved.j.verdict).toBe('failed')
    expect(moved.j.observed).toContain(
      'binary: /usr/bin/radiance (100 bytes, modified 2023-11-14T22:13:20Z) → /usr/bin/radiance (101 bytes, modified 2023-11-14T22:13:20Z)',
    )
    expect(moved.j.next).toContain('redeploy --service llm-7 with only PREFILL_INTERLEAVE changed')
  })

  test("what cannot be read is inconclusive where there is a baseline: the exe, the image, the build's flag list", async () => {
    const base = { from: '--baseline-report r.json', finishedAt: null, record: BEFORE }
    const noExe = await judged(base, (req) =>
      req.script.includes('/proc/$P/exe') ? { exitCode: 3, stderr: 'Permission denied' } : exe(req),
    )
    expect([noExe.j.verdict, noExe.j.observed]).toEqual(['inconclusive', expect.stringContaining('could not read /proc/42/exe')])
    const noImage = await judged(base, (req) =>
      req.script.includes('inspect') ? { exitCode: 125, stderr: 'Error: permission denied' } : exe(req),
    )
    expect(noImage.j.verdict).toBe('inconclusive')
    const noHelp = await judged(base, exe, { ...inputs, buildFlags: null })
    expect(noHelp.j.observed).toContain("the build's flag list is unknown")
  })
})
