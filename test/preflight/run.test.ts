// The checks' runner: in order, each timed, and a check that waits says so in a plain line at
// least once a period (a log has a line at least every 15 s), with what it waits for.
import { expect, test } from 'vitest'
import { createHost } from '../../helpers/seams/host.ts'
import type { HostRun } from '../../helpers/seams/host.ts'
import { PREFLIGHT_STEP_IDS } from '../../helpers/steps/preflight/registry.ts'
import { PROGRESS_EVERY_MS, runPreflight } from '../../helpers/steps/preflight/run.ts'
import { answeringHost, stepContext, stepTarget } from '../support/step-context.ts'
import { tempDir } from '../support/temp-dir.ts'

test('a slow --help says preflight.help is waiting, and every check is judged in order', async () => {
  const answer = answeringHost((req: HostRun) => ({ stdout: req.script.includes('--help') ? '' : 'DropInPaths=\n' }))
  const host = {
    ...answer,
    async run(req: HostRun) {
      if (req.script.includes('--help')) await new Promise((r) => setTimeout(r, 450))
      return answer.run(req)
    },
  }
  const ctx = stepContext(stepTarget(['--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--help-cmd', 'radiance --help']), host)
  const lines: string[] = []
  const results = await runPreflight(ctx, {
    value: { raw: '1', from: '--value' },
    checkout: tempDir('armproof-pf-run-'),
    envFile: null,
    local: createHost({ host: { kind: 'local' }, sshOpts: [], deployUser: null }),
    progress: (line) => lines.push(line),
    progressEveryMs: 100,
  })
  expect(results.map((r) => r.id)).toEqual(PREFLIGHT_STEP_IDS)
  expect(
    lines.some((l) => /^preflight\.help: waiting · \d/.test(l)),
    lines.join('\n'),
  ).toBe(true)
  // The help printed nothing: the flag is not listed, red; an int's value is judged by the catalog
  // alone (an enum's would wait for the choices); what the engine runs is not judged.
  expect(results.map((r) => r.verdict).slice(0, 3)).toEqual(['failed', 'passed', 'skipped'])
  expect(PROGRESS_EVERY_MS).toBeLessThanOrEqual(15_000)
})
