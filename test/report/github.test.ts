// The `::error` / `::warning` workflow commands armproof prints under GitHub Actions: one per failed
// or inconclusive step and one per red run, none elsewhere, and never a command smuggled in by
// what an endpoint sent back (its text is escaped exactly as the runner's toolkit escapes it).
import { describe, expect, test } from 'vitest'
import type { Report } from '../../helpers/report/json.ts'
import { annotations, escapeData, githubAnnotations } from '../../helpers/report/github.ts'
import { pick, prng } from '../support/prng.ts'

const step = (id: string, verdict: string, observed: string) => ({
  id,
  title: id,
  verdict,
  expected: `the ${id} holds`,
  observed,
  where: 'GET http://gpu-7:8000/metrics',
  next: 'look at argv',
  durationMs: 3,
  evidence: {},
})
const report = (steps: ReturnType<typeof step>[], verdict = 'red'): Report =>
  ({ svc: 'llm-7', knob: 'PREFILL_INTERLEAVE', expected: '1', verdict, steps, error: null }) as unknown as Report

/** What the runner reads back from a message or property (the toolkit's escaping, undone). */
const decodeAnnotation = (text: string): string =>
  text.replace(/%0A/g, '\n').replace(/%0D/g, '\r').replace(/%3A/g, ':').replace(/%2C/g, ',').replace(/%25/g, '%')

describe('annotations', () => {
  test('an error per failed step and per red run, a warning per inconclusive step, nothing for passed or skipped; only under GITHUB_ACTIONS=true', () => {
    const r = report([
      step('argv', 'passed', 'ok'),
      step('probe.vision', 'skipped', '-'),
      step('health', 'inconclusive', '503 for 15m'),
      step('meter', 'failed', 'stayed at 0'),
    ])
    const lines = githubAnnotations({ GITHUB_ACTIONS: 'true' }, [{ report: r }])
    expect(lines.map((l) => l.split('::').slice(0, 2).join('::'))).toEqual([
      '::warning title=armproof llm-7%3A health inconclusive',
      '::error title=armproof llm-7%3A meter failed',
      '::error title=armproof llm-7%3A red',
    ])
    expect(decodeAnnotation(lines[1]!.split('::')[2]!)).toBe(
      'expected: the meter holds\nobserved: stayed at 0\nwhere: GET http://gpu-7:8000/metrics\nnext: look at argv',
    )
    expect(lines[2]).toContain('meter failed')
    expect(githubAnnotations({}, [{ report: r }])).toEqual([])
    expect(githubAnnotations({ GITHUB_ACTIONS: 'false' }, [{ report: r }])).toEqual([])
    expect(annotations(report([step('argv', 'passed', 'ok')], 'green'))).toEqual([])
  })

  test('hostile text from an endpoint never becomes a command of its own (seeded property test)', () => {
    const random = prng(2601)
    const pieces = ['\n', '\r\n', '::', '%', '%0A', '::add-mask::', '::stop-commands::x', ',', ':', 'word', ' ', 'é', '\u2028']
    for (let i = 0; i < 300; i++) {
      const observed = Array.from({ length: 1 + Math.floor(random() * 12) }, () => pick(random, pieces)).join('')
      const label = Array.from({ length: 1 + Math.floor(random() * 4) }, () => pick(random, pieces)).join('')
      const lines = annotations(report([step('probe.exact', 'failed', observed)]), label)
      // Each command is one line, so one printed line per command: nothing after a newline can start another.
      const printed = lines.join('\n').split(/\r?\n/)
      expect(printed).toHaveLength(2)
      for (const l of printed) expect(l).toMatch(/^::(error|warning) title=[^:\r\n]*::[^\r\n]*$/)
      expect(decodeAnnotation(printed[0]!.replace(/^::error title=[^:]*::/, ''))).toContain(`observed: ${observed}`)
      expect(decodeAnnotation(/^::error title=([^:]*)::/.exec(printed[0]!)![1]!)).toBe(`armproof ${label}: probe.exact failed`)
    }
    expect(escapeData('100%\n::x')).toBe('100%25%0A::x')
  })
})
