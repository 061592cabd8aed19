// Step `help` (helpers/steps/help/judge.ts) called directly, its host answering with the reference
// engine's own `radiance --help` (engine/help.ts), or with what a broken image prints: each verdict
// with its expected, observed, where and next, and what it hands to argv and the meter (the build's
// flags, default and choices).
import { describe, expect, test } from 'vitest'
import { helpText } from '../../../engine/help.ts'
import { FLAGS } from '../../../engine/flags.ts'
import { checkHelp } from '../../../helpers/steps/help/judge.ts'
import type { HostClient } from '../../../helpers/seams/host.ts'
import { answeringHost, stepContext, stepTarget, type HostAnswer } from '../../support/step-context.ts'
import { fakeProcHost, type FakeHostState } from '../../support/fake-proc.ts'

const HELP = helpText(new Set())
const COMMAND = '{ podman exec llm-7 radiance --help ; } 2>&1'
const WHERE = `local: ${COMMAND}`

async function judge(args: string[], answer: HostAnswer) {
  const host = answeringHost(() => answer)
  const j = await checkHelp(stepContext(stepTarget(args), host))
  return { j, calls: host.calls }
}

describe('step help, against what the pinned build prints', () => {
  test("a flag the build lists is green, with its entry; the build's flags and default go to the later steps", async () => {
    const { j, calls } = await judge(['--knob', 'PREFILL_INTERLEAVE', '--value', '1'], { stdout: HELP })
    expect([j.verdict, j.expected, j.where]).toEqual(['passed', "--prefill-interleave is listed by the pinned build's --help", WHERE])
    expect(j.observed).toBe('--prefill-interleave PREFILL_INTERLEAVE Hold up to N decode steps to interleave prefill. (default: 0)')
    expect(j.next).toBeUndefined()
    // Run as the deploy user, output and errors together (containers log to both).
    expect(calls).toMatchObject([{ script: COMMAND, asDeployUser: true }])
    expect(j.gives?.buildDefault).toBe('0')
    // Every flag the reference engine defines, each taking a value, plus argparse's own -h/--help.
    const listed = j.gives?.buildFlags?.map((f) => f.name)
    for (const f of FLAGS) expect(listed).toContain(f.flag)
    expect(j.gives?.buildFlags?.find((f) => f.name === '--prefill-interleave')?.takesValue).toBe(true)
  })

  test('a flag the build does not define is red: this build lacks the knob, with its help line count', async () => {
    const older = helpText(new Set(['help_missing_flag']))
    const { j } = await judge(['--knob', 'PREFILL_INTERLEAVE', '--value', '1'], { stdout: older })
    expect([j.verdict, j.expected, j.where]).toEqual(['failed', "--prefill-interleave is listed by the pinned build's --help", WHERE])
    expect(j.observed).toBe(`--help (${older.split('\n').length} lines) does not define --prefill-interleave`)
    expect(j.next).toBe(
      "this build does not have the knob: do not promise it; check the image tag pinned for llm-7, or a newer build's --help",
    )
    expect(j.evidence).toEqual({ helpLines: older.split('\n').length })
    // argv still gets the build's flags (a prefix is read against them), never a default the build lacks.
    expect(j.gives).toEqual({ buildFlags: expect.arrayContaining([{ name: '--port', takesValue: true }]) })
  })

  test('a help command that fails is inconclusive with its output and the way to run it, never red', async () => {
    const { j } = await judge(['--knob', 'PREFILL_INTERLEAVE', '--value', '1'], { stdout: 'sh: 1: radiance: not found\n', exitCode: 127 })
    expect([j.verdict, j.where]).toEqual(['inconclusive', WHERE])
    expect(j.observed).toBe('the help command exited 127: sh: 1: radiance: not found')
    expect(j.next).toBe('run the help command on the host by hand; set --help-cmd if the image is started differently')
    expect(j.evidence).toEqual({ exitCode: 127, output: 'sh: 1: radiance: not found\n' })
    // The runtime's own words give the next step (podman's per-user storage).
    const gone = await judge(['--knob', 'PREFILL_INTERLEAVE', '--value', '1'], {
      stdout: 'Error: no such container llm-7\n',
      exitCode: 125,
    })
    expect(gone.j.verdict).toBe('inconclusive')
    expect(gone.j.next).toContain('podman')
  })

  test('a host that cannot be reached is inconclusive with the ssh fix', async () => {
    const { j } = await judge(['--knob', 'PREFILL_INTERLEAVE', '--value', '1'], {
      stderr: 'Permission denied (publickey).\n',
      exitCode: 255,
      failure: 'auth',
    })
    expect([j.verdict, j.observed, j.where]).toEqual([
      'inconclusive',
      'could not run the command (auth, exit 255): Permission denied (publickey).',
      WHERE,
    ])
    expect(j.next).toBe('ssh refused the key; check --ssh-opts "-i <key>" and the user in --host user@host')
  })

  describe('an enum knob: the value must be one of the choices the build prints', () => {
    const POLICY = ['--knob', 'CHECKPOINT_POLICY']
    test('a choice is green, with the choices and the default printed', async () => {
      const { j } = await judge([...POLICY, '--value', 'on_evict'], { stdout: HELP })
      expect([j.verdict, j.expected, j.observed, j.where]).toEqual([
        'passed',
        "on_evict is one of --checkpoint-policy's choices",
        '--checkpoint-policy {always,on_evict,never} (default: always)',
        WHERE,
      ])
      expect(j.gives).toMatchObject({ buildDefault: 'always', buildChoices: ['always', 'on_evict', 'never'] })
    })

    test('no --value: the default the build prints is the expected one', async () => {
      const { j } = await judge(POLICY, { stdout: HELP })
      expect([j.verdict, j.expected]).toEqual(['passed', "always is one of --checkpoint-policy's choices"])
    })

    test('a value that is not a choice is red: the engine would refuse it at boot', async () => {
      const { j } = await judge([...POLICY, '--value', 'sometimes'], { stdout: HELP })
      expect([j.verdict, j.expected, j.observed, j.where]).toEqual([
        'failed',
        "sometimes is one of --checkpoint-policy's choices",
        'sometimes is not a choice; the build lists {always,on_evict,never}',
        WHERE,
      ])
      expect(j.next).toBe('config_parse would refuse sometimes at boot: pick one of always, on_evict, never and fix the service env')
    })

    test('an entry without choices, or no default and no --value, is inconclusive with what to pass', async () => {
      const noChoices = HELP.replaceAll('--checkpoint-policy {always,on_evict,never}', '--checkpoint-policy CHECKPOINT_POLICY')
      const a = (await judge([...POLICY, '--value', 'never'], { stdout: noChoices })).j
      expect([a.verdict, a.expected, a.where]).toEqual(['inconclusive', '--checkpoint-policy lists its choices', WHERE])
      expect(a.observed).toBe(
        '--checkpoint-policy is defined but lists no choices: --checkpoint-policy CHECKPOINT_POLICY Prefix snapshot policy. (default: always)',
      )
      expect(a.next).toBe("read the build's source or docs for the legal values of --checkpoint-policy before arming never")
      const noDefault = HELP.replace('Prefix snapshot policy. (default: always)', 'Prefix snapshot policy.')
      const b = (await judge(POLICY, { stdout: noDefault })).j
      expect([b.verdict, b.observed, b.next]).toEqual([
        'inconclusive',
        'no default printed for --checkpoint-policy; choices always, on_evict, never',
        'pass --value <one of always, on_evict, never>',
      ])
      expect(b.gives).toMatchObject({ buildDefault: null, buildChoices: ['always', 'on_evict', 'never'] })
    })
  })
})

describe('under --runtime process: --help asked of the binary the engine process runs ({engine})', () => {
  const PROCESS = ['--runtime', 'process', '--ledger-cmd', 'cat /var/log/radiance.log', '--knob', 'PREFILL_INTERLEAVE', '--value', '1']
  const VENV = '/opt/venv/bin'
  const engine = {
    pid: '42',
    name: 'radiance',
    argv: [`${VENV}/python3`, `${VENV}/radiance`, '--prefill-interleave', '1'],
    sockets: [{ port: 8000 }],
  }
  /** The lookup's reads from a made-up /proc, the binary read as `exe` says, and the help command as `help` says. */
  function processHost(state: FakeHostState, exe: string, help: HostAnswer = { stdout: HELP }) {
    const procs = fakeProcHost(state)
    const calls: string[] = []
    const host: HostClient = {
      where: 'local',
      async run(req) {
        calls.push(req.script)
        if (req.script.includes('readlink /proc/')) {
          const argv0 = exe.replace(/ \(deleted\)$/, '')
          return {
            command: req.script,
            stdout: `@@armproof exe\n${exe}\n@@armproof cwd\n/srv\n@@armproof argv0\n${argv0}\n`,
            stderr: '',
            exitCode: 0,
            durationMs: 1,
          }
        }
        if (req.script.startsWith('{ ')) return { command: req.script, stdout: '', stderr: '', exitCode: 0, durationMs: 1, ...help }
        return procs.run(req)
      },
    }
    return { host, calls }
  }

  test('the interpreter and the script it runs are asked, as the process runs them, and the evidence names that binary', async () => {
    expect(stepTarget(PROCESS).helpCmd).toBe('{engine} --help')
    const { host, calls } = processHost({ procs: [engine] }, '/usr/bin/python3.11')
    const j = await checkHelp(stepContext(stepTarget(PROCESS), host))
    const command = `{ ${VENV}/python3 ${VENV}/radiance --help ; } 2>&1`
    expect([j.verdict, j.where]).toEqual(['passed', `local: ${command}`])
    expect(calls.at(-1)).toBe(command)
    expect(j.observed).toContain(`(asked ${VENV}/python3 running ${VENV}/radiance, as pid 42 runs it (/proc/42/exe: /usr/bin/python3.11))`)
    expect(j.evidence).toMatchObject({
      binary: { pid: '42', exe: '/usr/bin/python3.11', script: `${VENV}/radiance`, asked: [`${VENV}/python3`, `${VENV}/radiance`] },
    })
  })

  test('a binary replaced on disk since the engine started is asked as /proc/<pid>/exe, the running build; a build lacking the flag is red, naming it', async () => {
    const native = { ...engine, argv: ['/opt/radiance/bin/radiance', '--prefill-interleave', '1'] }
    const older = helpText(new Set(['help_missing_flag']))
    const { host, calls } = processHost({ procs: [native] }, '/opt/radiance/bin/radiance (deleted)', { stdout: older })
    const j = await checkHelp(stepContext(stepTarget(PROCESS), host))
    expect(calls.at(-1)).toBe('{ /proc/42/exe --help ; } 2>&1')
    expect(j.verdict).toBe('failed')
    expect(j.observed).toContain('(asked /proc/42/exe, as pid 42 runs it (/proc/42/exe: /opt/radiance/bin/radiance (deleted)))')
    expect(j.evidence).toMatchObject({ binary: { replaced: true, asked: ['/proc/42/exe'] } })
  })

  test("no engine process: inconclusive with the lookup's words, and no help of some other binary is asked", async () => {
    const { host, calls } = processHost({ procs: [] }, '/usr/bin/python3.11')
    const j = await checkHelp(stepContext(stepTarget(PROCESS), host))
    expect(j.verdict).toBe('inconclusive')
    expect(j.observed).toMatch(
      /^--help is asked of the binary the engine process runs, and no one engine process was found: engine not running/,
    )
    expect(j.next).toContain('or give --help-cmd')
    expect(calls.some((c) => c.startsWith('{ '))).toBe(false)
  })

  test("its exe cannot be read (another user's process, no sudo): inconclusive, naming the rights it needs", async () => {
    const procs = fakeProcHost({ procs: [engine] })
    const host: HostClient = {
      where: 'local',
      run: (req) =>
        req.script.includes('readlink /proc/')
          ? Promise.resolve({
              command: req.script,
              stdout: '@@armproof exe\n@@armproof cwd\n',
              stderr: 'readlink: /proc/42/exe: Permission denied\n',
              exitCode: 1,
              durationMs: 1,
            })
          : procs.run(req),
    }
    const j = await checkHelp(stepContext(stepTarget(PROCESS), host))
    expect(j).toMatchObject({ verdict: 'inconclusive', where: 'local: readlink /proc/42/exe' })
    expect(j.observed).toBe(
      'could not tell which binary pid 42 runs: readlink /proc/42/exe printed nothing (readlink: /proc/42/exe: Permission denied)',
    )
    expect(j.next).toContain('the rights to read /proc/42/exe')
  })

  test('a --help-cmd of the operator is run as given: no lookup', async () => {
    const { host, calls } = processHost({ procs: [engine] }, '/usr/bin/python3.11')
    const j = await checkHelp(stepContext(stepTarget([...PROCESS, '--help-cmd', '/opt/radiance/bin/radiance --help']), host))
    expect(j.verdict).toBe('passed')
    expect(calls).toEqual(['{ /opt/radiance/bin/radiance --help ; } 2>&1'])
  })
})
