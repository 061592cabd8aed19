// `pnpm writeback` with a fleet run's combined report: each target through the one-target gate;
// every green target's page is written, a non-green one is refused for its page, and the exit
// code says which happened (0 all written, 5 some written and some refused, 2 none written).
import { describe, expect, test } from 'vitest'
import { FLEET_FORMAT } from '../../helpers/fleet/report.ts'
import { WRITEBACK_PARTIAL } from '../../helpers/writeback/fleet.ts'
import { greenReport, sandbox } from '../support/writeback-sandbox.ts'

const page = (svc: string) => ['---', `service: ${svc}`, '---', `# ${svc}`, '', '## Knob log', '', '## Contacts', ''].join('\n')
const now = () => new Date().toISOString()
const green = (svc: string) => greenReport(now(), { svc, rollback: `PREFILL_INTERLEAVE=0 then redeploy --service ${svc}` })
const red = (svc: string) => {
  const r = green(svc) as { steps: Array<Record<string, unknown>> } & Record<string, unknown>
  return { ...r, verdict: 'red', exitCode: 1, steps: r.steps.map((s) => (s.id === 'meter' ? { ...s, verdict: 'failed', next: 'x' } : s)) }
}
const fleet = (targets: Array<[string, Record<string, unknown>]>) => ({
  format: FLEET_FORMAT,
  verdict: 'red',
  exitCode: 1,
  startedAt: now(),
  finishedAt: now(),
  fleet: { file: 'targets.yaml', total: targets.length, shards: null, concurrency: 8 },
  targets: targets.map(([name, report]) => ({ name, report })),
  tool: { name: 'armproof', version: '0.1.0' },
})

describe('writeback of a fleet report', () => {
  test('each green target is written into its own page; a red one is refused for its page; exit 5', async () => {
    const box = await sandbox(
      { 'a.md': page('gpu-a'), 'b.md': page('gpu-b'), 'c.md': page('gpu-c') },
      fleet([
        ['gpu-a', green('gpu-a')],
        ['gpu-b', red('gpu-b')],
        ['gpu-c', green('gpu-c')],
      ]),
    )
    try {
      const r = await box.run()
      expect(r.code, r.err).toBe(WRITEBACK_PARTIAL)
      expect(await box.page('a.md')).toContain('PREFILL_INTERLEAVE')
      expect(await box.page('c.md')).toContain('PREFILL_INTERLEAVE')
      expect(await box.page('b.md')).toBe(page('gpu-b'))
      expect(r.err).toMatch(/not green/)
      expect(r.out).toMatch(/fleet: 2 of 3 target\(s\) written; refused: gpu-b/)
      // Again: the written ones are already there, the red one still refused.
      const again = await box.run()
      expect(again.out.match(/already there/g)).toHaveLength(2)
    } finally {
      await box.remove()
    }
  })

  test('all green: exit 0; all refused: exit 2; --svc narrows to one target; --page is refused for a fleet', async () => {
    const box = await sandbox(
      { 'a.md': page('gpu-a'), 'b.md': page('gpu-b') },
      fleet([
        ['gpu-a', green('gpu-a')],
        ['gpu-b', green('gpu-b')],
      ]),
    )
    try {
      expect((await box.run(['--svc', 'gpu-b'])).code).toBe(0)
      expect(await box.page('a.md')).toBe(page('gpu-a'))
      expect((await box.run(['--page', 'a.md'])).code).toBe(2)
      expect((await box.run()).code).toBe(0)
      expect(await box.page('a.md')).toContain('PREFILL_INTERLEAVE')
    } finally {
      await box.remove()
    }
    const none = await sandbox({ 'b.md': page('gpu-b') }, fleet([['gpu-b', red('gpu-b')]]))
    try {
      expect((await none.run()).code).toBe(2)
    } finally {
      await none.remove()
    }
  })
})
