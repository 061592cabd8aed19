// Step `argv` (helpers/steps/argv/judge.ts) called directly, its host a made-up /proc
// (test/support/fake-proc.ts): each verdict with its expected, observed, where and next, and the
// engine process it hands to the meter (held or not). The command line is read as the engine's
// parser reads it; random command lines (seeded) are green exactly when the occurrence the parser
// keeps, the last one, carries the value.
import { describe, expect, test } from 'vitest'
import { checkArgv } from '../../../helpers/steps/argv/judge.ts'
import type { InputsOf } from '../../../helpers/steps/context.ts'
import { fakeProcHost, type FakeHostState } from '../../support/fake-proc.ts'
import { pick, prng } from '../../support/prng.ts'
import { stepContext, stepTarget } from '../../support/step-context.ts'

const PROC = '(pid 4242 holds the listening socket of port 8000 (0.0.0.0))'
const WHERE = "local: tr '\\0' ' ' < /proc/4242/cmdline"
/** The build's flags as step help read them from the reference engine's --help. */
const BUILD_FLAGS = ['--port', '--prefill-interleave', '--busy-prefill-chunk', '--served-model-name'].map((name) => ({
  name,
  takesValue: true,
}))

const engine = (argv: string[]): FakeHostState => ({
  procs: [{ pid: '4242', name: 'radiance', argv: ['/usr/bin/radiance', '--port', '8000', ...argv], sockets: [{ port: 8000 }] }],
})

async function judge(args: string[], state: FakeHostState, inputs: InputsOf<'argv'> = {}) {
  return checkArgv(stepContext(stepTarget(['--knob', 'PREFILL_INTERLEAVE', ...args]), fakeProcHost(state)), inputs)
}

describe('step argv, against the engine process serving the base URL', () => {
  test('the flag with the value is green; the process it read goes to the meter as held', async () => {
    const j = await judge(['--value', '1'], engine(['--prefill-interleave', '1']))
    expect([j.verdict, j.expected, j.observed, j.where, j.next]).toEqual([
      'passed',
      '--prefill-interleave 1',
      `--prefill-interleave 1 ${PROC}`,
      WHERE,
      undefined,
    ])
    expect(j.gives?.engineProcess).toEqual({
      pid: '4242',
      argvHeld: true,
      startTimeSeconds: 1764500010,
      startTimeResolution: 0.01,
      foundBy: 'listener',
      listenerTied: true,
    })
  })

  test('at its default, a flag passed only when not the default must be absent: absent is green, present is red', async () => {
    const absent = await judge(['--value', '0'], engine([]))
    expect([absent.verdict, absent.expected, absent.observed]).toEqual([
      'passed',
      'no --prefill-interleave (unset means default 0)',
      `no --prefill-interleave in argv: unset means default 0 ${PROC}`,
    ])
    expect(absent.gives?.engineProcess?.argvHeld).toBe(true)
    const present = await judge(['--value', '0'], engine(['--prefill-interleave', '0']))
    expect([present.verdict, present.observed, present.where]).toEqual(['failed', 'argv carries --prefill-interleave 0', WHERE])
    expect(present.next).toBe(
      'the serve script passes --prefill-interleave only when it differs from 0, yet argv has it: the running engine was not started by the serve script you deployed, or PREFILL_INTERLEAVE is not 0; redeploy --service llm-7',
    )
    expect(present.gives?.engineProcess?.argvHeld).toBe(false)
  })

  test('the flag missing is red: it did not reach the engine, with the command line seen', async () => {
    const j = await judge(['--value', '1'], engine([]))
    expect([j.verdict, j.observed, j.where]).toEqual(['failed', 'no --prefill-interleave in argv: /usr/bin/radiance --port 8000', WHERE])
    expect(j.next).toBe(
      "the flag did not reach the engine: check PREFILL_INTERLEAVE=1 in llm-7's env, that the serve script passes --prefill-interleave (it adds it only when the value is not 0), and redeploy --service llm-7",
    )
  })

  test('another value is red, and the occurrence the parser keeps (the last, _ read as -) is named', async () => {
    const j = await judge(['--value', '1'], engine(['--prefill-interleave', '1', '--prefill_interleave', '2']))
    expect([j.verdict, j.where]).toEqual(['failed', WHERE])
    expect(j.observed).toBe(
      'argv carries --prefill-interleave 1, --prefill_interleave 2 (_ read as -); the parser keeps --prefill_interleave 2: the engine runs with --prefill-interleave 2',
    )
    expect(j.next).toBe(
      "the engine runs with --prefill-interleave 2, not 1: check PREFILL_INTERLEAVE in llm-7's env and every place the serve script or a config file sets --prefill-interleave, and redeploy --service llm-7",
    )
  })

  test("a unique prefix is the flag only against the build's flags: without them, inconclusive; with them, read", async () => {
    const unknown = await judge(['--value', '1'], engine(['--prefill', '1']))
    expect([unknown.verdict, unknown.observed]).toEqual([
      'inconclusive',
      `cannot tell whether --prefill names --prefill-interleave: the build's flag list is unknown (step help did not read it) ${PROC}`,
    ])
    expect(unknown.next).toBe("make step help read the build's --help (check --help-cmd), so a unique prefix can be told from another flag")
    const known = await judge(['--value', '1'], engine(['--prefill', '1']), { buildFlags: BUILD_FLAGS })
    expect([known.verdict, known.observed]).toEqual(['passed', `--prefill 1 (a unique prefix) ${PROC}`])
  })

  test("a command line the engine's parser would refuse is inconclusive: that engine cannot have started so", async () => {
    const j = await judge(['--value', '1'], engine(['--prefill-interleave']))
    expect([j.verdict, j.observed]).toEqual([
      'inconclusive',
      `the engine's parser would refuse this command line: argument --prefill-interleave: expected one argument ${PROC}`,
    ])
    expect(j.next).toContain('check that --help-cmd runs the same build as the engine')
  })

  test('no engine process is red (not running), with what was looked at and how to find it', async () => {
    const j = await judge(['--value', '1'], { procs: [] })
    expect([j.verdict, j.expected]).toEqual(['failed', 'the one engine process serving http://127.0.0.1:8000'])
    expect(j.observed).toBe(
      'engine not running: pidof radiance found no process, no container answers for llm-7, and no process here listens on port 8000',
    )
    expect(j.where).toBe('local: pidof radiance; /proc/net/tcp{,6}; /proc/<pid>/{fd,stat,cmdline}')
    expect(j.next).toContain('set --process if it runs under another name')
    expect(j.gives).toEqual({})
  })

  test('an unreadable command line, an unreachable host, or no value to expect: inconclusive, and no process handed on unread', async () => {
    const hidden = await judge(['--value', '1'], { procs: [{ pid: '4242', name: 'radiance', argv: [], sockets: [{ port: 8000 }] }] })
    expect([hidden.verdict, hidden.observed, hidden.where]).toEqual([
      'inconclusive',
      `could not read /proc/4242/cmdline of the engine ${PROC}`,
      WHERE,
    ])
    expect(hidden.next).toContain('hidepid')
    expect(hidden.gives).toEqual({})
    const unreachable = await judge(['--value', '1'], { procs: [], failure: 'unreachable' })
    expect([unreachable.verdict, unreachable.expected, unreachable.observed]).toEqual([
      'inconclusive',
      '--prefill-interleave 1',
      'could not run the command (unreachable, exit 255): ssh: connect to host gpu-7 port 22: Connection refused',
    ])
    expect(unreachable.next).toBe('ssh could not reach the host; check --host and --ssh-opts (port, key), then retry')
    // Where is one line naming the lookup's reads, not the survey's many-line script.
    expect(unreachable.where).not.toContain('\n')
    expect(unreachable.where).toMatch(/pidof .*\/proc\/net\/tcp/)
    // An enum knob without --value whose default --help did not print.
    const policy = await checkArgv(stepContext(stepTarget(['--knob', 'CHECKPOINT_POLICY']), fakeProcHost(engine([]))), {})
    expect([policy.verdict, policy.expected, policy.observed, policy.next]).toEqual([
      'inconclusive',
      '--checkpoint-policy as the build default',
      'no --checkpoint-policy',
      'the expected value is the build default, which --help did not print: pass --value',
    ])
  })

  test('property: green exactly when the last occurrence, in any spelling, carries the value; other flags change nothing (seeded)', async () => {
    const spell = (random: () => number, v: string): string[] =>
      pick(random, [['--prefill-interleave', v], [`--prefill-interleave=${v}`], ['--prefill_interleave', v], ['--prefill-inter', v]])
    const DECOYS = [
      ['--busy-prefill-chunk', '1'],
      ['--served-model-name', 'prefill-interleave-1'],
      ['--port', '8000'],
      ['--busy-prefill-chunk=2'],
    ]
    for (let seed = 1; seed <= 150; seed++) {
      const random = prng(seed)
      const want = pick(random, ['1', '2'])
      const argv: string[] = []
      let last: string | undefined
      for (let i = Math.floor(random() * 5); i > 0; i--) {
        if (random() < 0.5) argv.push(...pick(random, DECOYS))
        else argv.push(...spell(random, (last = pick(random, ['0', '1', '2', '3']))))
      }
      const j = await judge(['--value', want], engine(argv), { buildFlags: BUILD_FLAGS })
      const why = `seed ${seed}: want ${want}, argv ${argv.join(' ')}`
      expect(j.verdict, why).toBe(last === want ? 'passed' : 'failed')
      expect(j.gives?.engineProcess?.argvHeld, why).toBe(last === want)
    }
  })
})

describe('step argv, where the engine was found by its name while another process holds the port', () => {
  // A loading vLLM found by its script (its port not bound), and nginx on the base URL's port.
  const state = (): FakeHostState => ({
    procs: [
      {
        pid: '50',
        name: 'vllm',
        argv: ['/opt/venv/bin/python3', '/opt/venv/bin/vllm', 'serve', 'm', '--port', '8000', '--max-num-seqs', '8'],
      },
      { pid: '3', name: 'nginx', argv: ['nginx: master process'], sockets: [{ port: 8000 }] },
    ],
  })
  const judgeVllm = (knob: string, value: string) =>
    checkArgv(stepContext(stepTarget(['--engine', 'vllm', '--knob', knob, '--value', value]), fakeProcHost(state())), {})

  test("a knob without a counter is inconclusive: nothing could tie the endpoint to the pid, so its probes would be another process's", async () => {
    const j = await judgeVllm('MAX_NUM_SEQS', '8')
    expect(j.verdict).toBe('inconclusive')
    expect(j.observed).toMatch(
      /^--max-num-seqs 8 \(pid 50 .*\); but port 8000 is served by pid 3 \(nginx: master process\) on 0\.0\.0\.0, not by pid 50, and MAX_NUM_SEQS has no counter whose page could tie the endpoint to it/,
    )
    expect(j.next).toBe(
      "point --base-url at the engine's own port (where pid 50 listens once loaded), or give --pid-cmd naming the process that serves it; then run again",
    )
    // What it read is still handed on (the meter is not watched for a run that is not green anyway).
    expect(j.gives?.engineProcess).toMatchObject({ pid: '50', foundBy: 'pidof', listenerTied: false })
  })

  test('a knob with a counter passes: step meter binds its page by process_start_time_seconds (a proxy in front of this very engine is green there)', async () => {
    const j = await judgeVllm('ENABLE_PREFIX_CACHING', 'true')
    expect(j.verdict, j.observed).not.toBe('inconclusive')
  })
})
