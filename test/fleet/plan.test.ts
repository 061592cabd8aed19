// The fleet's plan, in-process: the targets file (YAML and JSON, hostile files refused), each
// target validated with every problem of every target at once, the precedence of entry, command
// line, defaults: and env, shards that cover every target exactly once, and the combined outputs.
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { execa } from 'execa'
import { describe, expect, test } from 'vitest'
import { planFleet } from '../../helpers/fleet/plan.ts'
import { fleetMarkdown, fleetReport, fleetTable, worstVerdict } from '../../helpers/fleet/report.ts'
import { parseShard, shardOf } from '../../helpers/fleet/shard.ts'
import { MAX_TARGETS_FILE_BYTES, parseTargetsFile, targetArgv } from '../../helpers/fleet/targets-file.ts'
import { junitFleetXml } from '../../helpers/report/junit.ts'
import type { Report } from '../../helpers/report/json.ts'
import { STEP_IDS } from '../../helpers/steps/registry.ts'
import type { RunVerdict } from '../../helpers/steps/verdict.ts'
import { tempDir } from '../support/temp-dir.ts'

function fileWith(text: string): { dir: string; path: string } {
  const dir = tempDir('armproof-plan-')
  const path = join(dir, 'targets.yaml')
  writeFileSync(path, text)
  return { dir, path }
}

const plan = (text: string, argv: string[] = [], env: Record<string, string> = {}) => {
  const { dir, path } = fileWith(text)
  return planFleet({ argv: ['--targets', path, ...argv], env: { VERIFY_NO_DOTENV: '1', ...env }, cwd: dir })
}

const TWO = `defaults:
  knob: PREFILL_INTERLEAVE
  value: 1
targets:
  - svc: gpu-7
    base-url: http://gpu-7:8000
  - svc: gpu-8
    base-url: http://gpu-8:8000
    value: "0"
`

describe('the targets file', () => {
  test('YAML with defaults: and targets:, every scalar kept as written', () => {
    const r = parseTargetsFile('defaults:\n  knob: PREFILL_INTERLEAVE\n  value: 0.10\ntargets:\n  - svc: a\n    no-dropin-check: true\n')
    expect('file' in r && r.file.defaults.get('value')).toBe('0.10')
    expect('file' in r && r.file.targets[0]!.get('no-dropin-check')).toBe('true')
  })

  test('JSON is accepted as YAML', () => {
    const r = plan(
      JSON.stringify({ defaults: { knob: 'PREFILL_INTERLEAVE', value: 1 }, targets: [{ svc: 'gpu-7', 'base-url': 'http://gpu-7:8000' }] }),
    )
    expect(r.ok && r.plan.targets.map((t) => [t.label, t.target.value, t.target.baseUrl])).toEqual([['gpu-7', '1', 'http://gpu-7:8000']])
  })

  test('every problem of every target at once, the key in the file refused and never shown', () => {
    const r = plan(`defaults:
  knob: PREFILL_INTERLEAVE
targets:
  - svc: gpu-7
    base-url: http://gpu-7:8000
    api-key: sk-live-SECRET123
  - svc: "bad svc"
    base-urll: http://gpu-8:8000
  - svc: gpu-9
    knob: NOT_A_KNOB
    base-url: http://gpu-9:8000
    report: out.json
  - svc: gpu-10
    base-url: ftp://gpu-10
    no-dropin-check: maybe
`)
    expect(r.ok).toBe(false)
    const messages = !r.ok ? r.problems.map((p) => p.message) : []
    const text = messages.join('\n')
    expect(text).not.toContain('SECRET123')
    // Behaviour changed on purpose (issue 26): every problem at its file:line, the entry named with
    // its svc, the file's shape and each target's values in one answer, in the file's order.
    const file = /^(.*targets\.yaml):\d+: /.exec(messages[0] ?? '')?.[1]
    expect(file, text).toBeDefined()
    expect(
      messages.map((m) =>
        m
          .slice(file!.length + 1)
          .replace(
            /(unknown knob "NOT_A_KNOB"|did you mean base-url\?|a switch: true or false|API key never sits in the targets file|for the whole run|must match|got ftp:).*$/,
            '$1',
          ),
      ),
    ).toEqual([
      '6: targets[0] ("gpu-7"): "api-key": an API key never sits in the targets file',
      '7: targets[1] ("bad svc"): svc: "bad svc" must match',
      '8: targets[1] ("bad svc"): unknown key "base-urll"; did you mean base-url?',
      '10: targets[2] ("gpu-9"): knob: unknown knob "NOT_A_KNOB"',
      '12: targets[2] ("gpu-9"): report is for the whole run',
      '14: targets[3] ("gpu-10"): base-url: must be http:// or https://, got ftp:',
      '15: targets[3] ("gpu-10"): no-dropin-check is a switch: true or false',
    ])
    // A key the entry misspelt is said once, with its "did you mean", not again as "--base-url is required".
    expect(text).not.toMatch(/targets\[1\].*--base-url .*is required/)
    const second = plan(
      `defaults:\n  knob: PREFILL_INTERLEAVE\ntargets:\n  - svc: "bad svc"\n    base-url: http://gpu-8:8000\n  - svc: gpu-9\n    knob: NOT_A_KNOB\n    base-url: http://gpu-9:8000\n  - svc: gpu-10\n    base-url: ftp://gpu-10\n  - svc: gpu-11\n`,
    )
    const all = !second.ok ? second.problems.map((p) => p.message.replace(/^.*targets\.yaml:/, '')) : []
    expect(all.some((m) => m.startsWith('4: targets[0] ("bad svc"): ') && m.includes('must match'))).toBe(true)
    expect(all.some((m) => m.startsWith('7: targets[1] ("gpu-9"): ') && m.includes('unknown knob'))).toBe(true)
    expect(all.some((m) => m.startsWith('10: targets[2] ("gpu-10"): ') && m.includes('http:// or https://'))).toBe(true)
    // A key the entry lacks is said at the entry's own line.
    expect(all.some((m) => m.startsWith('11: targets[3] ("gpu-11"): ') && m.includes('--base-url'))).toBe(true)
    // Said in the file's words where the value came from it; a command-line value's problem once.
    expect(all).toContain('10: targets[2] ("gpu-10"): base-url: must be http:// or https://, got ftp:')
    // A value from defaults: is said at its line there.
    const fromDefaults = plan(
      'defaults:\n  knob: PREFILL_INTERLEAVE\n  meter-window: soon\ntargets:\n  - svc: a\n    base-url: http://a:1\n',
    )
    expect(!fromDefaults.ok && fromDefaults.problems.map((p) => p.message.replace(/^.*targets\.yaml:/, ''))).toEqual([
      '3: targets[0] ("a"): defaults.meter-window: "soon" is not a duration like 90s, 5m, 1h30m',
    ])
    const cli = plan(TWO, ['--meter-window', 'soon'])
    expect(!cli.ok && cli.problems.map((p) => p.message)).toEqual(['--meter-window: "soon" is not a duration like 90s, 5m, 1h30m'])
  })

  test('each problem of the file carries its file, line and key as data, wherever in the file the value was written', () => {
    const { dir, path } = fileWith(
      'defaults:\n  knob: PREFILL_INTERLEAVE\n  meter-window: soon\ntargets:\n  - svc: a\n    base-url: ftp://a\n  - svc: b\n    base-url: http://b:1\n    bogus: 1\n  - svc: c\n',
    )
    const r = planFleet({ argv: ['--targets', path], env: { VERIFY_NO_DOTENV: '1' }, cwd: dir })
    expect(r.ok).toBe(false)
    const problems = r.ok ? [] : r.problems
    expect(problems.map((p) => p.at)).toEqual([
      // defaults:' value, one problem per target that takes it, at its line there
      { file: path, line: 3, key: 'defaults.meter-window' },
      { file: path, line: 3, key: 'defaults.meter-window' },
      { file: path, line: 3, key: 'defaults.meter-window' },
      // an entry's value at its own line; an unknown key at its line; a key the entry lacks at the entry's line
      { file: path, line: 6, key: 'base-url' },
      { file: path, line: 9, key: 'bogus' },
      { file: path, line: 10, key: 'base-url' },
    ])
    for (const p of problems) expect(p.message.startsWith(`${p.at!.file}:${p.at!.line}: `), p.message).toBe(true)
    // A command-line value's problem belongs to no line of the file.
    const cli = plan(TWO, ['--meter-window', 'soon'])
    expect(!cli.ok && cli.problems.map((p) => p.at)).toEqual([undefined])
  })

  test('the same target twice, and an empty or shapeless file, are refused', () => {
    const dup = plan(
      'targets:\n  - {svc: a, knob: PREFILL_INTERLEAVE, base-url: "http://h:1"}\n  - {svc: a, knob: PREFILL_INTERLEAVE, base-url: "http://h:1/"}\n',
    )
    expect(!dup.ok && dup.problems.map((p) => p.message).join()).toMatch(
      /targets\.yaml:3: targets\[1\] \("a"\): the same target as targets\[0\]/,
    )
    // Two targets recording into one fixtures folder: the clash of the run's path set, said at the later entry's fixtures: line.
    const folder = plan(
      'targets:\n  - {svc: a, knob: PREFILL_INTERLEAVE, base-url: "http://h:1", fixtures: rec}\n  - svc: b\n    knob: PREFILL_INTERLEAVE\n    base-url: "http://h:2"\n    fixtures: rec\n',
      ['--mode', 'record'],
    )
    expect(!folder.ok && folder.problems.map((p) => p.message)).toEqual([
      expect.stringMatching(/targets\.yaml:6: targets\[0\] fixtures and targets\[1\] fixtures: both name "rec"/),
    ])
    for (const text of ['', 'targets: []\n', '- a\n- b\n', 'targets:\n  - svc: a\nextra: 1\n']) expect(plan(text).ok, text).toBe(false)
  })

  // No clock here (speed is pnpm perf's): a parser that expanded the bomb would not return within the test's timeout.
  test('hostile YAML is refused, never expanded: an alias bomb, tags, deep nesting, duplicate keys, a huge file', () => {
    const bomb = [
      'a: &a [x,x,x,x,x,x,x,x,x]',
      ...'bcdefgh'.split('').map((c, i) => `${c}: &${c} [${Array(9).fill(`*${'abcdefgh'[i]}`).join(',')}]`),
      'targets: [*h]',
    ].join('\n')
    const cases = [
      bomb,
      'targets:\n  - !!python/object:os.system {svc: a}\n',
      'targets:\n  - svc: !custom a\n',
      `targets: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`,
      'targets:\n  - svc: a\n    svc: b\n',
    ]
    for (const text of cases) {
      const r = parseTargetsFile(text)
      expect('problems' in r, text.slice(0, 60)).toBe(true)
      expect(r.problems.length, text.slice(0, 60)).toBeGreaterThan(0)
    }
    // The bomb is refused for what it is, by the parser's alias limit, before any expansion.
    expect(
      parseTargetsFile(bomb)
        .problems.map((p) => p.message)
        .join(),
    ).toMatch(/alias/i)
    const huge = plan(`targets:\n${'  - svc: a\n'.repeat(MAX_TARGETS_FILE_BYTES / 10)}`)
    expect(!huge.ok && huge.problems[0]!.message).toMatch(/larger than 1024 KiB/)
    // A named pipe nobody writes to is an empty file, never a hang; an endless device is cut.
    const dir = tempDir('armproof-fifo-')
    execFileSync('mkfifo', [join(dir, 'fifo')])
    const fifo = planFleet({ argv: ['--targets', join(dir, 'fifo')], env: {}, cwd: dir })
    expect(!fifo.ok && fifo.problems.map((p) => p.message).join()).toMatch(/the file must be a mapping with targets:/)
    const zero = planFleet({ argv: ['--targets', '/dev/zero'], env: {}, cwd: dir })
    expect(!zero.ok && zero.problems[0]!.message).toMatch(/larger than 1024 KiB/)
  })
})

describe('precedence per target: the entry, then the command line, then defaults:, then env', () => {
  test('each layer beats the ones below it', () => {
    const r = plan(TWO, ['--value', '2', '--meter-window', '90s'], {
      VERIFY_VALUE: '3',
      VERIFY_PROCESS: 'from-env',
      VERIFY_METER_WINDOW: '7m',
    })
    expect(r.ok).toBe(true)
    if (!r.ok) return
    const [a, b] = r.plan.targets
    expect(a!.target.value).toBe('2') // command line over defaults: and env
    expect(b!.target.value).toBe('0') // the entry over the command line
    expect(a!.target.process).toBe('from-env') // env where nothing else says
    expect(a!.target.meterWindowMs).toBe(90_000)
  })

  test("a switch set false in an entry drops the command line's and defaults' switch", () => {
    const argv = targetArgv(new Map([['no-dropin-check', 'true']]), ['--no-dropin-check'], new Map([['no-dropin-check', 'false']]))
    expect(argv).not.toContain('--no-dropin-check')
    // The same rule where the plan reads the layers themselves: the entry's false wins over both.
    const r = plan(
      'defaults:\n  knob: PREFILL_INTERLEAVE\n  no-dropin-check: true\ntargets:\n  - svc: a\n    base-url: http://a:1\n    no-dropin-check: false\n  - svc: b\n    base-url: http://b:1\n',
      ['--no-dropin-check'],
    )
    expect(r.ok && r.plan.targets.map((t) => t.target.dropinCheck)).toEqual([true, false])
  })

  test('a switch set false in an entry beats its env twin too: the drop-in gate and the output guard stay on where the entry asks', () => {
    const file =
      'defaults:\n  knob: PREFILL_INTERLEAVE\ntargets:\n  - svc: a\n    base-url: http://a:1\n    no-dropin-check: false\n    force: false\n  - svc: b\n    base-url: http://b:1\n'
    const r = plan(file, [], { VERIFY_DROPIN_CHECK: '0', VERIFY_FORCE: '1' })
    expect(r.ok && r.plan.targets.map((t) => [t.label, t.target.dropinCheck, t.target.force])).toEqual([
      ['a', true, false],
      ['b', false, true],
    ])
    // A twin that is neither 0 nor 1 is refused, named where it came from.
    const bad = plan(file.replace('    force: false\n', ''), [], { VERIFY_FORCE: 'maybe' })
    expect(bad.ok ? [] : bad.problems.map((p) => p.message.replace(/^.*\): /, ''))).toEqual([
      'VERIFY_FORCE: "maybe" must be 0 or 1',
      'VERIFY_FORCE: "maybe" must be 0 or 1',
    ])
  })

  test('one key file for every target, read once: a pipe (--api-key-file <(pass show endpoint)) keys the whole fleet', async () => {
    const { path } = fileWith(TWO)
    const script = `const { planFleet } = await import(${JSON.stringify(new URL('../../helpers/fleet/plan.ts', import.meta.url).href)})
      const r = planFleet({ argv: process.argv.slice(1), env: { VERIFY_NO_DOTENV: '1' }, cwd: process.cwd() })
      process.stdout.write(r.ok ? r.plan.targets.map((t) => t.target.apiKey === 'sk-piped' ? 'keyed' : 'other').join(' ') : r.problems.map((p) => p.message).join('; '))`
    const r = await execa(
      'bash',
      [
        '-c',
        `"$0" --input-type=module -e "$1" -- --targets "$2" --api-key-file <(printf '%s\\n' sk-piped)`,
        process.execPath,
        script,
        path,
      ],
      { reject: false, timeout: 30_000 },
    )
    expect(String(r.stdout), String(r.stderr)).toBe('keyed keyed')
  })

  test("fleet outputs and knobs are the run's: the per-target report, junit and summary are never set; the paths are the operator's folder's", () => {
    const r = plan(TWO, ['--report', 'r.json', '--junit', 'j.xml', '--summary', 's.md', '--concurrency', '3'])
    expect(r.ok).toBe(true)
    if (!r.ok) return
    const dir = dirname(r.plan.file)
    expect([r.plan.report, r.plan.junit, r.plan.summary, r.plan.concurrency]).toEqual([
      join(dir, 'r.json'),
      join(dir, 'j.xml'),
      join(dir, 's.md'),
      3,
    ])
    expect(r.plan.targets.every((t) => t.target.report === null && t.target.junit === null && t.target.summary === null)).toBe(true)
    expect(plan(TWO, [], { VERIFY_SUMMARY: 'e.md' }).ok && true).toBe(true)
    // --summary is checked before anything is contacted, as one target's; and it is never a file's key.
    const bad = plan(TWO, ['--summary', '.']) // a folder, not a file
    expect(bad.ok ? [] : bad.problems.map((p) => p.option)).toEqual(['--summary'])
    const inFile = plan(`${TWO}  - svc: gpu-9\n    base-url: http://gpu-9:8000\n    summary: s.md\n`)
    expect(inFile.ok).toBe(false)
    for (const c of ['0', '-1', 'x', '999999']) expect(plan(TWO, ['--concurrency', c]).ok, c).toBe(false)
  })
})

describe('shards', () => {
  test("the run's own name: --run-id, else VERIFY_RUN_ID, else the CI's run id; part of the run identity; one word; never per target", () => {
    const idOf = (argv: string[], env: Record<string, string> = {}) => {
      const r = plan(TWO, argv, env)
      if (!r.ok) throw new Error(r.problems.map((p) => p.message).join('\n'))
      return r.plan.run
    }
    expect(idOf([]).instance).toBeUndefined()
    expect(idOf([], { GITHUB_RUN_ID: '8812' }).instance).toBe('8812')
    expect(idOf([], { CI_PIPELINE_ID: '77', VERIFY_RUN_ID: 'job-uid-1' }).instance).toBe('job-uid-1')
    expect(idOf(['--run-id', 'a'], { GITHUB_RUN_ID: '8812' }).instance).toBe('a')
    // The same file and options: another run only by its name.
    expect(idOf([], { GITHUB_RUN_ID: '1' }).id).not.toBe(idOf([], { GITHUB_RUN_ID: '2' }).id)
    expect(idOf([], { GITHUB_RUN_ID: '1' }).targets).toEqual(idOf([], { GITHUB_RUN_ID: '2' }).targets)
    const bad = plan(TWO, ['--run-id', 'a b;c'])
    expect(!bad.ok && bad.problems.map((p) => p.message)).toEqual([
      '--run-id: "a b;c" must be one word of [A-Za-z0-9._:@-], at most 128 characters',
    ])
    const perTarget = plan(TWO.replace('    base-url: http://gpu-7:8000', '    base-url: http://gpu-7:8000\n    run-id: x'))
    expect(!perTarget.ok && perTarget.problems.map((p) => p.message).join('\n')).toContain('run-id is for the whole run, not one target')
  })

  const ids = (n: number, seed = 'x') => Array.from({ length: n }, (_, i) => `svc-${seed}-${i} PREFILL_INTERLEAVE http://gpu-${i}:8000`)

  test('the shards of a fleet cover every target exactly once, in slices that differ by at most one', () => {
    for (const size of [1, 2, 7, 20, 101]) {
      for (const count of [1, 2, 3, 4, 7]) {
        if (count > size) continue
        const list = ids(size, `${size}`)
        const slices = Array.from({ length: count }, (_, k) => shardOf(list, { index: k + 1, count }))
        const all = slices.flat().sort((a, b) => a - b)
        expect(all).toEqual(list.map((_, i) => i))
        const sizes = slices.map((s) => s.length)
        expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1)
      }
    }
  })

  test('stable: reordering the file moves nothing, adding a target moves few', () => {
    const list = ids(40)
    const shardOfId = (l: string[], count: number) =>
      new Map(Array.from({ length: count }, (_, k) => shardOf(l, { index: k + 1, count }).map((i) => [l[i]!, k] as const)).flat())
    const before = shardOfId(list, 4)
    const reversed = shardOfId([...list].reverse(), 4)
    for (const id of list) expect(reversed.get(id)).toBe(before.get(id))
    const grown = shardOfId([...list, 'svc-new PREFILL_INTERLEAVE http://gpu-new:8000'], 4)
    const moved = list.filter((id) => grown.get(id) !== before.get(id)).length
    expect(moved).toBeLessThanOrEqual(4)
  })

  test('--shard i/n is checked, and more shards than targets is refused', () => {
    expect(parseShard('2/4')).toEqual({ index: 2, count: 4 })
    for (const bad of ['0/4', '5/4', '1/0', 'a/b', '1-4', '']) expect(typeof parseShard(bad), bad).toBe('string')
    expect(plan(TWO, ['--shard', '3/3']).ok).toBe(false)
    const a = plan(TWO, ['--shard', '1/2'])
    const b = plan(TWO, ['--shard', '2/2'])
    expect(a.ok && b.ok && [...a.plan.targets, ...b.plan.targets].map((t) => t.label).sort()).toEqual(['gpu-7', 'gpu-8'])
  })
})

describe('combined outputs', () => {
  const report = (svc: string, verdict: RunVerdict): Report =>
    ({
      format: 'armproof-report/1',
      endpoint: `http://${svc}:8000`,
      host: 'local',
      svc,
      knob: 'PREFILL_INTERLEAVE',
      expected: '1',
      previous: '0',
      mode: 'live',
      verdict,
      startedAt: '2026-01-01T00:00:00.000Z',
      finishedAt: '2026-01-01T00:00:05.000Z',
      steps: STEP_IDS.map((id) => ({
        id,
        title: id,
        verdict: verdict === 'red' && id === 'meter' ? 'failed' : verdict === 'inconclusive' && id === 'health' ? 'inconclusive' : 'passed',
        expected: 'e',
        observed: `o ${svc}`,
        where: 'w',
        ...(verdict !== 'green' ? { next: 'n' } : {}),
        evidence: {},
        durationMs: 1,
      })),
      meter: null,
      rollback: 'PREFILL_INTERLEAVE=0 then redeploy --service x',
      error: verdict === 'error' ? 'bad' : null,
      notes: [],
      exitCode: 0,
      tool: { name: 'armproof', version: '0' },
    }) as Report

  test('the exit code is the worst verdict: 2, then 1, then 3, then 0', () => {
    expect(worstVerdict(['green', 'inconclusive', 'red'])).toBe('red')
    expect(worstVerdict(['green', 'inconclusive'])).toBe('inconclusive')
    expect(worstVerdict(['red', 'error', 'inconclusive'])).toBe('error')
    expect(worstVerdict(['green', 'green'])).toBe('green')
    const f = (vs: RunVerdict[]) =>
      fleetReport({
        startedAt: '',
        finishedAt: '',
        fleet: { file: 't', total: vs.length, shards: null, concurrency: 8 },
        targets: vs.map((v, i) => ({ name: `t${i}`, report: report(`t${i}`, v) })),
      }).exitCode
    expect([f(['green', 'red', 'inconclusive']), f(['green', 'inconclusive']), f(['red', 'error']), f(['green']), f([])]).toEqual([
      1, 3, 2, 0, 2,
    ])
  })

  test('JUnit holds a testsuite per target, the table and the summary a row per target', () => {
    const r = fleetReport({
      startedAt: '',
      finishedAt: '',
      fleet: { file: 't', total: 3, shards: null, concurrency: 8 },
      targets: [
        ['a', 'green'],
        ['b', 'red'],
        ['c', 'inconclusive'],
      ].map(([n, v]) => ({ name: n!, report: report(n!, v as RunVerdict) })),
    })
    const xml = junitFleetXml(r.targets, 5000)
    expect(xml.match(/<testsuite /g)).toHaveLength(3)
    expect(xml).toContain('tests="30" failures="1" errors="1"')
    expect(xml).toMatch(/<testsuite name="armproof b PREFILL_INTERLEAVE"/)
    const table = fleetTable(r).split('\n')
    expect(table).toHaveLength(4)
    // b failed at meter; its one-flag step, after the meter, passed.
    expect(table[2]).toMatch(/^b .*✗ +✓ +RED/)
    const md = fleetMarkdown(r)
    expect(md).toMatch(/armproof fleet RED: 3 target\(s\)/)
    expect(md.split('\n').filter((l) => /^\| [abc] \|/.test(l))).toHaveLength(3)
  })
})

describe('the CI examples of a sharded fleet', () => {
  test.each(['github-actions-fleet.yml', 'gitlab-ci-fleet.yml'])(
    'examples/ci/%s shards the fleet, merges the shards and writes back from the merged report',
    async (name) => {
      const { readFile } = await import('node:fs/promises')
      const text = await readFile(new URL(`../../examples/ci/${name}`, import.meta.url), 'utf8')
      // The installed command (the packed tool or the image), no longer pnpm in a checkout of armproof.
      expect(text).toMatch(/armproof verify --targets fleet\/targets\.yaml --shard "\$[A-Z_]+\/(4|\$CI_NODE_TOTAL)"/)
      expect(text).toMatch(/armproof merge-reports --out reports\/fleet\.json [^\n]*reports\/shard-\*\.json/)
      expect(text).toMatch(/armproof writeback --report reports\/fleet\.json --vault vault/)
      // The key reaches verify as env only, never as a flag or a file entry.
      expect(text).not.toMatch(/--api-key[ =]/)
      expect(text).not.toMatch(/^\s+api-key:/m)
    },
  )
})

describe('the --concurrency gate', () => {
  test('at most n holders at once, each waiter served in turn, a double release gives back one slot', async () => {
    const { slots } = await import('../../helpers/fleet/suite.ts')
    const gate = slots(2)
    let inFlight = 0
    let peak = 0
    const order: number[] = []
    await Promise.all(
      Array.from({ length: 7 }, async (_, i) => {
        const release = await gate.acquire()
        inFlight++
        peak = Math.max(peak, inFlight)
        order.push(i)
        await new Promise((r) => setTimeout(r, 5))
        inFlight--
        release()
        release()
      }),
    )
    expect(peak).toBe(2)
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6])
    expect(gate.inUse()).toBe(0)
  })

  test('a waiter that asks to be first (a read the targets of a host share) is served before the others, in turn among its kind', async () => {
    const { slots } = await import('../../helpers/seams/slots.ts')
    const gate = slots(1)
    const order: string[] = []
    const holder = await gate.acquire()
    const asks = [
      ['a', false],
      ['b', false],
      ['shared-1', true],
      ['c', false],
      ['shared-2', true],
    ] as const
    const done = asks.map(([name, first]) => gate.acquire(first).then((release) => (order.push(name), release())))
    expect(gate.waiting()).toBe(5)
    holder()
    await Promise.all(done)
    expect(order).toEqual(['shared-1', 'shared-2', 'a', 'b', 'c'])
  })
})
