import { describe, expect, test } from 'vitest'
import { formatProblems, loadConfig } from '../../helpers/config/load.ts'
import { OPTIONS } from '../../helpers/config/options.ts'
import { parseEffectArgs } from '../../helpers/effect/config.ts'
import { readFileSync } from 'node:fs'

const base = ['--svc', 'demo', '--knob', 'PREFILL_INTERLEAVE', '--base-url', 'http://127.0.0.1:8000']

function problems(argv: string[], env: Record<string, string> = {}, dotenv?: string): string[] {
  const r = loadConfig({ argv, env, ...(dotenv ? { dotenv } : {}) })
  return r.ok ? [] : r.problems.map((p) => p.message)
}

describe('configuration', () => {
  test('a complete command line gives a target with the contract defaults', () => {
    const r = loadConfig({ argv: base, env: {} })
    expect(r.ok).toBe(true)
    if (!r.ok) return
    expect(r.target).toMatchObject({
      svc: 'demo',
      knob: 'PREFILL_INTERLEAVE',
      value: null,
      previous: null,
      host: { kind: 'local' },
      process: 'radiance',
      ledgerCmd: 'podman logs --tail 100000 {svc}',
      helpCmd: 'podman exec {svc} radiance --help',
      unit: 'demo',
      dropinCheck: true,
      healthBudgetMs: 15 * 60_000,
      meterWindowMs: 5 * 60_000,
      mode: 'live',
      fixtures: 'fixtures/demo/PREFILL_INTERLEAVE',
      baseUrl: 'http://127.0.0.1:8000',
    })
  })

  test("a URL's credentials (user:password@) reach no message, whatever else is wrong with it", () => {
    const urls = [
      'http://ops:hunter2@gpu-7:8000/v1',
      'ops:hunter2@gpu-7:8000',
      'http://ops:hunter2@gpu-7:8000:9/',
      'http://ops:hunter2@gpu-7:8000/?x=1',
      'ftp://ops:hunter2@gpu-7',
      'http://ops:hun@ter2@gpu-7:8000/v1',
      'http://ops:hunter2@gpu-7:8000',
    ]
    for (const url of urls) {
      for (const [flag, env] of [
        ['--base-url', {}],
        ['--prometheus-url', {}],
      ] as const) {
        const found = problems(flag === '--base-url' ? [...base.slice(0, 4), flag, url] : [...base, flag, url], env)
        expect(found.length, `${flag} ${url}`).toBeGreaterThan(0)
        expect(found.join('\n'), `${flag} ${url}`).not.toMatch(/hunter2|ter2|hun\b/)
      }
      // pnpm effect takes both URLs too (its result JSON names the endpoint).
      for (const flag of ['--base-url', '--prometheus-url']) {
        const r = parseEffectArgs(
          [
            '--svc',
            'llm-7',
            '--knob',
            'PREFILL_INTERLEAVE',
            '--armed-at',
            '2026-03-03T09:00:00Z',
            '--prometheus-url',
            'http://prometheus:9090',
            flag,
            url,
          ],
          {},
          undefined,
          '/',
        )
        expect(r.ok, `effect ${flag} ${url}`).toBe(false)
        expect(r.ok ? '' : r.problems.join('\n'), `effect ${flag} ${url}`).not.toMatch(/hunter2|ter2|hun\b/)
      }
    }
  })

  test('every problem is reported at once', () => {
    const found = problems(['--svc', 'a;b', '--knob', 'NOPE', '--health-budget', 'soon', '--mode', 'fast'])
    expect(found).toHaveLength(5)
    expect(found.join('\n')).toMatch(/--svc: "a;b" must match/)
    expect(found.join('\n')).toMatch(
      /unknown knob "NOPE"; known knobs: PREFILL_INTERLEAVE, BUSY_PREFILL_CHUNK, CHECKPOINT_POLICY, CHECKPOINT_SLOTS/,
    )
    expect(found.join('\n')).toMatch(/--health-budget: "soon" is not a duration/)
    expect(found.join('\n')).toMatch(/invalid mode "fast"; must be one of: live, record, replay/)
    expect(found.join('\n')).toMatch(/--base-url \(or VERIFY_BASE_URL\) is required in live mode/)
  })

  test('a flag beats env, and env beats .env', () => {
    const r = loadConfig({
      argv: [...base, '--value', '3'],
      env: { VERIFY_VALUE: '2', VERIFY_PREVIOUS: '1' },
      dotenv: 'VERIFY_PREVIOUS=9\nVERIFY_MODEL=m-from-dotenv\n',
    })
    expect(r.ok && r.target).toMatchObject({ value: '3', previous: '1', model: 'm-from-dotenv' })
  })

  test('a no-op arm (--value the same as --previous, as the knob reads them) is refused before contact; a rollback proof without --previous is not', () => {
    const same = problems([...base, '--value', '1', '--previous', '1'])
    expect(same).toEqual([
      '--value: "1" and --previous "1" are the same PREFILL_INTERLEAVE: this arm changes nothing, and its rollback line would roll back nothing; give --previous the value the endpoint ran before this deploy (or leave it out for the default)',
    ])
    // Compared as the knob reads them (canonical), from env as from flags, with "" as the default.
    expect(problems([...base, '--value', '01', '--previous', '1'])).toHaveLength(1)
    expect(problems(base, { VERIFY_VALUE: '2', VERIFY_PREVIOUS: '2' }).join('\n')).toContain(
      'VERIFY_VALUE: "2" and VERIFY_PREVIOUS "2" are the same',
    )
    expect(problems([...base, '--value', '', '--previous', '0']).join('\n')).toContain(
      '"" (the default, 0) and --previous "0" are the same',
    )
    expect(
      problems(['--svc', 's', '--knob', 'CHECKPOINT_POLICY', '--value', 'never', '--previous', 'never', '--base-url', 'http://h:1']),
    ).toHaveLength(1)
    expect(
      problems(['--svc', 's', '--knob', 'CHECKPOINT_POLICY', '--value', '', '--previous', '', '--base-url', 'http://h:1']).join('\n'),
    ).toContain('"" (the default) and --previous "" (the default) are the same')
    // Not a no-op: different values; a rollback to the default without --previous; an enum default only --help knows.
    for (const argv of [
      [...base, '--value', '1', '--previous', '0'],
      base,
      [...base, '--value', '0'],
      [...base, '--value', '1'],
      ['--svc', 's', '--knob', 'CHECKPOINT_POLICY', '--value', '', '--previous', 'never', '--base-url', 'http://h:1'],
    ]) {
      expect(problems(argv), argv.join(' ')).toEqual([])
    }
    // A value that does not fit is said once, not again as a no-op.
    expect(problems([...base, '--value', '-1', '--previous', '-1'])).toHaveLength(2)
  })

  test('the suites run straight from env', () => {
    const r = loadConfig({
      env: {
        VERIFY_SVC: 'demo',
        VERIFY_KNOB: 'BUSY_PREFILL_CHUNK',
        VERIFY_VALUE: '512',
        VERIFY_BASE_URL: 'http://h:1',
        VERIFY_DROPIN_CHECK: '0',
      },
    })
    expect(r.ok && r.target).toMatchObject({ knob: 'BUSY_PREFILL_CHUNK', value: '512', dropinCheck: false })
  })

  test.each([
    ['PREFILL_INTERLEAVE', '-1', /does not fit PREFILL_INTERLEAVE: must be a whole number ≥ 0/],
    ['PREFILL_INTERLEAVE', '1.5', /must be a whole number/],
    ['BUSY_PREFILL_CHUNK', 'lots', /must be a whole number ≥ 0 \(tokens\)/],
    ['CHECKPOINT_SLOTS', '0', /must be ≥ 1/],
    ['CHECKPOINT_SLOTS', 'manual', /must be "auto" or a whole number ≥ 1/],
    ['CHECKPOINT_POLICY', 'floor; rm -rf /', /must be one word/],
  ])('%s=%s is refused because the value does not fit the knob', (knobName, value, message) => {
    expect(problems(['--svc', 's', '--knob', knobName, '--value', value, '--base-url', 'http://h:1']).join('\n')).toMatch(message)
  })

  test('an enum value is left for --help to judge, and integers are canonical', () => {
    const r = loadConfig({ argv: ['--svc', 's', '--knob', 'CHECKPOINT_POLICY', '--value', 'floor', '--base-url', 'http://h:1'], env: {} })
    expect(r.ok && r.target.value).toBe('floor')
    const n = loadConfig({ argv: [...base, '--value', '007'], env: {} })
    expect(n.ok && n.target.value).toBe('7')
  })

  test.each([
    ['--svc', 'x$(reboot)'],
    ['--svc', "x'y"],
    ['--svc', 'a\nb'],
    ['--svc', '-oProxyCommand=x'],
    ['--svc', 'ä'],
    ['--svc', 'x'.repeat(300) + ';'],
    ['--host', 'root@h;reboot'],
    ['--host', '-oProxyCommand=sh'],
    ['--host', 'h:99999'],
    ['--host', 'a b'],
    ['--process', 'radiance;id'],
    ['--process', '-x'],
    ['--deploy-user', 'Root$'],
    ['--unit', 'x y'],
    ['--pid-cmd', 'cat /run/{container}.pid'],
    ['--pid-cmd', 'cat /run/x.pid\nreboot'],
    ['--ledger-cmd', 'podman logs {svc}\nreboot'],
    ['--help-cmd', 'podman exec {container} radiance --help'],
    ['--ssh-opts', '-i key; reboot'],
    ['--ssh-opts', '-o "unterminated'],
    ['--ssh-opts', '$(id)'],
    ['--base-url', 'http://user:secret@h:1'],
    ['--base-url', 'ftp://h'],
    ['--base-url', 'not a url'],
    ['--api-key', 'two words'],
    ['--value', '1;reboot'],
    ['--model', 'a b'],
  ])('a hostile %s %j is refused', (flag, value) => {
    const args = [...base.filter((_, i) => base[i - 1] !== flag && base[i] !== flag), flag, value]
    const found = problems(args)
    expect(found.length).toBeGreaterThan(0)
    for (const line of found) expect(line).not.toMatch(/[\n\r]/)
    if (flag === '--base-url') expect(found.join('\n')).not.toContain('secret')
  })

  test('--pid-cmd (or VERIFY_PID_CMD) takes {svc}, {unit} and {port}; unset it is null', () => {
    const given = loadConfig({ argv: [...base, '--pid-cmd', 'cat /run/{svc}-{port}.pid'], env: {} })
    expect(given.ok && given.target.pidCmd).toBe('cat /run/{svc}-{port}.pid')
    const env = loadConfig({ argv: base, env: { VERIFY_PID_CMD: 'systemctl show -p MainPID --value {unit}' } })
    expect(env.ok && env.target.pidCmd).toBe('systemctl show -p MainPID --value {unit}')
    const none = loadConfig({ argv: base, env: {} })
    expect(none.ok && none.target.pidCmd).toBeNull()
    expect(problems([...base, '--pid-cmd', 'x {host}'])).toEqual([
      '--pid-cmd: "x {host}" unknown placeholder {host}; known: {svc}, {unit}, {port}',
    ])
  })

  test('an unknown option and a stray argument are problems too', () => {
    // A near miss of a flag is named with the flag meant, and its value is taken with it.
    expect(problems([...base, '--knobb', 'X', 'extra'])).toEqual([
      'unknown option "--knobb"; did you mean --knob?',
      'unexpected argument "extra"; options start with --',
    ])
    expect(problems([...base, '--frobnicate', 'X'])).toEqual([
      'unknown option "--frobnicate"; see --help',
      'unexpected argument "X"; options start with --',
    ])
  })

  test('host specs parse user, host and port', () => {
    const r = loadConfig({
      argv: [...base, '--host', 'deploy@gpu-7.lab:2222', '--ssh-opts', `-i "/keys/my key" -o StrictHostKeyChecking=yes`],
      env: {},
    })
    expect(r.ok && r.target.host).toEqual({ kind: 'ssh', user: 'deploy', host: 'gpu-7.lab', port: 2222 })
    expect(r.ok && r.target.sshOpts).toEqual(['-i', '/keys/my key', '-o', 'StrictHostKeyChecking=yes'])
  })

  test('the refusal text counts the problems and says nothing was contacted', () => {
    expect(
      formatProblems([
        { option: 'a', message: 'one' },
        { option: 'b', message: 'two' },
      ]),
    ).toBe('armproof: 2 configuration problems; nothing was contacted.\n  - one\n  - two')
  })

  test('.env.example documents every VERIFY_ variable', () => {
    const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8')
    for (const o of OPTIONS) expect(example, o.env).toMatch(new RegExp(`^#?\\s*${o.env}=`, 'm'))
  })
})
