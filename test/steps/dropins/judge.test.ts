// Step `dropins` (helpers/steps/dropins/judge.ts) called directly, its host answering as systemd
// would: each verdict with its expected, observed, where and next. A drop-in is read from
// systemctl's own line (`DropInPaths=` followed by space-separated paths), never from text that
// merely mentions it; random outputs (seeded) are judged red exactly when that line lists a path.
import { describe, expect, test } from 'vitest'
import { checkDropins } from '../../../helpers/steps/dropins/judge.ts'
import type { HostRun } from '../../../helpers/seams/host.ts'
import { answeringHost, stepContext, stepTarget, type HostAnswer } from '../../support/step-context.ts'
import { pick, prng } from '../../support/prng.ts'

const KNOB = ['--knob', 'PREFILL_INTERLEAVE', '--value', '1']
const COMMAND = 'systemctl show llm-7 -p DropInPaths'
const WHERE = `local: ${COMMAND}`
const EXPECTED = 'DropInPaths of llm-7 is empty'

async function judge(answer: HostAnswer, args: string[] = []) {
  const host = answeringHost(() => answer)
  const j = await checkDropins(stepContext(stepTarget([...KNOB, ...args]), host))
  return { j, calls: host.calls.map((c: HostRun) => c.script) }
}

describe('step dropins, against what systemctl answers', () => {
  test('an empty DropInPaths= is green, and the one command run is the one shown', async () => {
    const { j, calls } = await judge({ stdout: 'DropInPaths=\n' })
    expect(j).toEqual({ verdict: 'passed', expected: EXPECTED, observed: 'DropInPaths= (empty)', where: WHERE, evidence: { dropins: [] } })
    expect(calls).toEqual([COMMAND])
  })

  test('a drop-in left behind is red: it is named, with how to remove it and redeploy', async () => {
    const { j } = await judge({
      stdout: 'DropInPaths=/etc/systemd/system/llm-7.service.d/bench.conf /run/systemd/system/llm-7.service.d/50-env.conf\n',
    })
    expect([j.verdict, j.expected, j.where]).toEqual(['failed', EXPECTED, WHERE])
    expect(j.observed).toBe('DropInPaths=/etc/systemd/system/llm-7.service.d/bench.conf /run/systemd/system/llm-7.service.d/50-env.conf')
    expect(j.next).toBe(
      'a drop-in overrides the unit (often left by a bench): review and remove /etc/systemd/system/llm-7.service.d/bench.conf, /run/systemd/system/llm-7.service.d/50-env.conf, run systemctl daemon-reload, redeploy --service llm-7, then verify again',
    )
    expect(j.evidence).toEqual({
      dropins: ['/etc/systemd/system/llm-7.service.d/bench.conf', '/run/systemd/system/llm-7.service.d/50-env.conf'],
    })
  })

  test('systemctl failing, or answering without the line, is inconclusive, never green: its words are shown', async () => {
    const { j } = await judge({ stdout: '', stderr: 'Failed to connect to bus: No medium found\n', exitCode: 1 })
    expect([j.verdict, j.expected, j.where]).toEqual(['inconclusive', EXPECTED, WHERE])
    expect(j.observed).toBe('systemctl exited 1 without a DropInPaths= line: Failed to connect to bus: No medium found')
    expect(j.next).toBe('run it on the host; if the engine is not a systemd unit there, pass --unit <unit> or --no-dropin-check')
    expect(j.evidence).toEqual({ exitCode: 1, stdout: '', stderr: 'Failed to connect to bus: No medium found\n' })
    // Exit 0 with another property only (an old systemd, a wrapper that filtered the line).
    const other = await judge({ stdout: 'Id=llm-7.service\n' })
    expect([other.j.verdict, other.j.observed]).toEqual([
      'inconclusive',
      'systemctl exited 0 without a DropInPaths= line: Id=llm-7.service',
    ])
    // The line printed but the command failed after it: not believed.
    expect((await judge({ stdout: 'DropInPaths=\n', exitCode: 3 })).j.verdict).toBe('inconclusive')
    expect((await judge({ stdout: '', exitCode: 1 })).j.observed).toBe('systemctl exited 1 without a DropInPaths= line: (no output)')
  })

  test('a host that cannot be reached is inconclusive with the ssh fix, not a red of the engine', async () => {
    const { j } = await judge({
      stdout: '',
      stderr: 'ssh: connect to host gpu-7 port 22: Connection refused\n',
      exitCode: 255,
      failure: 'unreachable',
    })
    expect([j.verdict, j.expected, j.where]).toEqual(['inconclusive', EXPECTED, WHERE])
    expect(j.observed).toBe('could not run the command (unreachable, exit 255): ssh: connect to host gpu-7 port 22: Connection refused')
    expect(j.next).toBe('ssh could not reach the host; check --host and --ssh-opts (port, key), then retry')
  })

  test('--no-dropin-check: skipped on purpose, nothing run, and the command to run by hand is given', async () => {
    const { j, calls } = await judge({ stdout: 'DropInPaths=/etc/x.conf\n' }, ['--no-dropin-check'])
    expect(j).toEqual({
      verdict: 'skipped',
      intendedSkip: true,
      expected: EXPECTED,
      observed: 'not checked: --no-dropin-check (VERIFY_DROPIN_CHECK=0) was given',
      where: WHERE,
      next: `check by hand before trusting the result: ${COMMAND}`,
      evidence: {},
    })
    expect(calls).toEqual([])
  })

  test('the unit --unit names is the one read, and the one where and expected name', async () => {
    const host = answeringHost(() => ({ stdout: 'DropInPaths=\n' }))
    const j = await checkDropins(stepContext(stepTarget([...KNOB, '--unit', 'radiance@llm-7.service']), host))
    expect([j.verdict, host.calls[0]?.script, j.where, j.expected]).toEqual([
      'passed',
      'systemctl show radiance@llm-7.service -p DropInPaths',
      'local: systemctl show radiance@llm-7.service -p DropInPaths',
      'DropInPaths of radiance@llm-7.service is empty',
    ])
    expect(host.calls[0]?.timeoutMs).toBe(stepTarget(KNOB).hostTimeoutMs)
  })

  test("property: red exactly when systemctl's own DropInPaths= line lists a path; other lines that mention it change nothing (seeded)", async () => {
    const PATHS = [
      '/etc/systemd/system/llm-7.service.d/override.conf',
      '/run/systemd/system/llm-7.service.d/bench.conf',
      '/usr/lib/systemd/system/llm-7.service.d/10-env.conf',
      '/etc/systemd/system/service.d/limits.conf',
    ]
    const DECOYS = [
      'Id=llm-7.service',
      'Description=DropInPaths=/etc/decoy.conf',
      ' DropInPaths=/etc/indented.conf',
      'XDropInPaths=/etc/prefixed.conf',
      'Environment=DROPIN=1',
      '',
    ]
    for (let seed = 1; seed <= 200; seed++) {
      const random = prng(seed)
      const paths = Array.from({ length: Math.floor(random() * 4) }, () => pick(random, PATHS))
      const gap = () => pick(random, [' ', '  ', '\t'])
      const line = `DropInPaths=${paths.map((p, i) => (i === 0 ? p : `${gap()}${p}`)).join('')}${pick(random, ['', ' ', '\t'])}`
      const before = Array.from({ length: Math.floor(random() * 3) }, () => pick(random, DECOYS))
      const after = Array.from({ length: Math.floor(random() * 3) }, () => pick(random, DECOYS))
      const stdout = [...before, line, ...after].join('\n')
      const { j } = await judge({ stdout })
      expect(j.verdict, `seed ${seed}: ${JSON.stringify(stdout)}`).toBe(paths.length === 0 ? 'passed' : 'failed')
      expect(j.evidence, `seed ${seed}`).toEqual({ dropins: paths })
    }
  })
})
