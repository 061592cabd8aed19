// The one-flag law after deploys of the reference engine: a service deployed at PREFILL_INTERLEAVE=0
// (its first record: step one-flag skipped, saying why), then redeployed on the same port with the
// knob armed, alone (green), or with a second change: another flag, the served model, the binary
// (a bare process's /proc/<pid>/exe), the image (a docker container's) — each red at one-flag,
// naming the change with both values. The baseline is the earlier green report
// (--baseline-report) or the vault entry writeback wrote of it (--vault), read back.
import { copyFileSync, linkSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { freePort, startEngine, type EngineOptions } from '../../engine/launch.ts'
import { imageId } from '../../engine/runtime-objects.ts'
import { recordDigest } from '../../helpers/config/arm-record.ts'
import { writeback } from '../../helpers/writeback/command.ts'
import { checkReport } from '../../helpers/writeback/report.ts'
import { refuseSecondChange, secondChange, secondChangeLines } from '../../helpers/effect/second-change.ts'
import type { EffectResult } from '../../helpers/effect/result.ts'
import { stepOf, type StepResult } from '../../helpers/steps/verdict.ts'
import type { Report } from '../../helpers/report/json.ts'
import { proveInProcess } from '../support/prove-in-process.ts'
import { FAST, runVerify } from '../support/run-verify.ts'
import type { FleetReport } from '../../helpers/fleet/report.ts'
import { tempDir } from '../support/temp-dir.ts'
import { scrubLocalPaths } from '../../helpers/seams/record.ts'

const dir = tempDir('armproof-one-flag-')
const NAME = `rof-${process.pid % 100_000}`
let port = 0

/** One deploy of service `svc`: the engine started on the service's port, verified, stopped. */
async function deploy(
  svc: string,
  args: readonly string[],
  verifyArgs: readonly string[],
  engine: Partial<EngineOptions> = {},
): Promise<{ report: Report; step: StepResult<'one-flag'> }> {
  const e = await startEngine({ svc, processName: NAME, port, args, ...engine })
  try {
    // PREFILL_INTERLEAVE is passed only when not its default 0: an engine without the flag runs at 0.
    const value = args.includes('--prefill-interleave') ? args[args.indexOf('--prefill-interleave') + 1]! : '0'
    const run = await proveInProcess(
      [
        '--svc',
        svc,
        '--base-url',
        e.baseUrl,
        '--process',
        NAME,
        '--host',
        'local',
        '--knob',
        'PREFILL_INTERLEAVE',
        '--value',
        value,
        ...(value === '0' ? [] : ['--previous', '0']),
        ...FAST,
        ...verifyArgs,
      ],
      { engine: e },
    )
    return { report: run.report, step: stepOf(run.report.steps, 'one-flag')! }
  } finally {
    await e.stop()
  }
}

const saved = (name: string, report: Report): string => {
  const path = join(dir, name)
  writeFileSync(path, JSON.stringify(report))
  return path
}

let bareBaseline: string
let first: Awaited<ReturnType<typeof deploy>>
beforeAll(async () => {
  port = await freePort()
  first = await deploy('of-bare', [], [])
  bareBaseline = saved('bare.json', first.report)
}, 60_000)
afterAll(() => {})

describe('the one-flag law after a deploy', () => {
  test('no earlier record: skipped, saying why, on purpose (the run is green), and this run recorded as the next baseline', () => {
    expect(first.report.verdict, JSON.stringify(first.report.steps.filter((s) => s.verdict !== 'passed'))).toBe('green')
    expect(first.step).toMatchObject({ verdict: 'skipped', intendedSkip: true })
    expect(first.step.observed).toBe('no earlier record of of-bare to compare with: neither --baseline-report nor --vault was given')
    expect(first.step.next).toContain('--baseline-report')
    const record = first.step.evidence.record!
    expect(record.flags).toEqual({ '--port': String(port) })
    expect(record.image).toBeNull()
    expect(record.model).toBe('radiance-ref-8b')
    expect(record.binary).toMatchObject({ path: expect.stringMatching(/^\//), size: expect.any(Number), mtime: expect.any(Number) })
  })

  test('only the knob armed since the baseline report: green, saying so', async () => {
    const { report, step } = await deploy('of-bare', ['--prefill-interleave', '1'], ['--baseline-report', bareBaseline])
    expect(report.verdict, step.observed).toBe('green')
    expect(step.verdict).toBe('passed')
    expect(step.observed).toContain('only the knob differs from the last green record (--baseline-report')
    expect(step.observed).toContain(': absent → --prefill-interleave=1; command line, binary and model radiance-ref-8b as then')
    expect(step.evidence.knob).toEqual({ before: 'absent', now: '--prefill-interleave=1' })
    expect(step.evidence.changes).toEqual([])
  }, 60_000)

  test('a second flag changed: red at one-flag, naming the flag with both values', async () => {
    const { report, step } = await deploy(
      'of-bare',
      ['--prefill-interleave', '1', '--stager-depth', '3'],
      ['--baseline-report', bareBaseline],
    )
    expect(report.verdict).toBe('red')
    expect(report.steps.filter((s) => s.verdict === 'failed').map((s) => s.id)).toEqual(['one-flag'])
    expect(step.observed).toMatch(/^two changes: the arm cannot be credited\./)
    expect(step.evidence.changes).toEqual([{ what: '--stager-depth', before: 'absent', now: '--stager-depth=3' }])
    expect(step.observed).toContain('--stager-depth: absent → --stager-depth=3')
    expect(step.next).toContain('--stager-depth')
  }, 60_000)

  test('the binary changed: red, naming both paths', async () => {
    const other = join(dir, 'bin', 'node')
    mkdirSync(join(dir, 'bin'), { recursive: true })
    try {
      linkSync(process.execPath, other)
    } catch {
      copyFileSync(process.execPath, other)
    }
    const { report, step } = await deploy('of-bare', ['--prefill-interleave', '1'], ['--baseline-report', bareBaseline], {
      executable: other,
    })
    expect(report.verdict).toBe('red')
    const change = step.evidence.changes!.find((c) => c.what === 'binary')!
    expect(change.before).toContain(first.step.evidence.record!.binary!.path)
    expect(change.now).toContain(other)
    expect(step.evidence.changes!.map((c) => c.what)).toEqual(['binary'])
  }, 60_000)

  test('effect refuses to credit an arm whose record shows a second change: its failed one-flag step, or its record against the entry before it', async () => {
    const vault = join(dir, 'vault-effect')
    mkdirSync(vault, { recursive: true })
    writeFileSync(join(vault, 'of-bare.md'), '# of-bare\n\n## Knob log\n')
    const code = await writeback({
      rawArgs: ['--report', bareBaseline, '--vault', vault],
      env: {},
      cwd: dir,
      out: { write: () => true },
      err: { write: () => true },
    })
    expect(code).toBe(0)
    const page = join(vault, 'of-bare.md')
    // Verified without a baseline: green, its one-flag step skipped; the vault holds the record before it.
    const unchecked = await deploy('of-bare', ['--prefill-interleave', '1', '--stager-depth', '3'], [])
    expect(unchecked.report.verdict).toBe('green')
    const checked = (r: Report) => checkReport(JSON.parse(JSON.stringify(r)), 'report.json').report!
    const second = await secondChange(checked(unchecked.report), page)
    expect(second?.changes).toEqual([{ what: '--stager-depth', before: 'absent', now: '--stager-depth=3' }])
    expect(second?.said).toContain('two changes, the arm cannot be credited: --stager-depth: absent → --stager-depth=3')
    // The clean arm against the same entry: nothing to refuse.
    const clean = await deploy('of-bare', ['--prefill-interleave', '1'], [])
    expect(await secondChange(checked(clean.report), page)).toBeNull()
    // A report whose one-flag step failed names its own changes.
    const red = await deploy('of-bare', ['--prefill-interleave', '1', '--stager-depth', '3'], ['--baseline-report', bareBaseline])
    expect((await secondChange(checked(red.report), null))?.said).toMatch(/^the verify report's step one-flag: two changes/)
    // The effect's verdict, whatever the traffic said, is inconclusive (exit 3), the change named.
    const better = { verdict: 'better', exitCode: 0, metrics: [] } as unknown as EffectResult
    const refused = refuseSecondChange(better, second)
    expect([refused.verdict, refused.exitCode]).toEqual(['inconclusive', 3])
    expect(secondChangeLines(refused)[0]).toContain('--stager-depth: absent → --stager-depth=3')
    expect(refuseSecondChange(better, null)).toBe(better)
  }, 90_000)

  test('writeback records the engine beside the entry; the model changed since that entry is red, read from the vault page', async () => {
    const vault = join(dir, 'vault')
    mkdirSync(vault, { recursive: true })
    writeFileSync(join(vault, 'of-bare.md'), '---\nservice: of-bare\n---\n# of-bare\n\n## Knob log\n')
    let err = ''
    const code = await writeback({
      rawArgs: ['--report', bareBaseline, '--vault', vault],
      env: {},
      cwd: dir,
      out: { write: () => true },
      err: { write: (t: string) => ((err += t), true) },
    })
    expect(code, err).toBe(0)
    const page = (await import('node:fs')).readFileSync(join(vault, 'of-bare.md'), 'utf8')
    expect(page).toContain(`:record=${recordDigest(first.step.evidence.record!)} -->`)
    expect(page).toMatch(
      /\n {2}engine: model `radiance-ref-8b` · image none · binary `\/[^`]+` \d+ bytes, modified \S+ · command line `\S+ --port=\d+`\n/,
    )
    const { report, step } = await deploy('of-bare', ['--prefill-interleave', '1', '--served-model-name', 'other-8b'], ['--vault', vault])
    expect(report.verdict).toBe('red')
    expect(step.evidence.baseline!.from).toMatch(/^--vault \S+ \(of-bare\.md, the entry of line \d+\)$/)
    expect(step.evidence.changes).toEqual([
      { what: 'served model', before: 'radiance-ref-8b', now: 'other-8b' },
      { what: '--served-model-name', before: 'absent', now: '--served-model-name=other-8b' },
    ])
  }, 60_000)

  test('a recording carries the step: its replay reaches the same one-flag verdict without the baseline file (the recording holds it)', async () => {
    const folder = join(dir, 'fixtures')
    const copy = join(dir, 'baseline-copy.json')
    writeFileSync(copy, JSON.stringify(first.report))
    const e = await startEngine({ svc: 'of-bare', processName: NAME, port, args: ['--prefill-interleave', '1'] })
    const common = ['--svc', 'of-bare', '--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--previous', '0', '--fixtures', folder]
    let recorded
    try {
      recorded = await runVerify(
        [...common, '--base-url', e.baseUrl, '--process', NAME, '--host', 'local', ...FAST, '--mode', 'record', '--baseline-report', copy],
        { engine: e },
      )
    } finally {
      await e.stop()
    }
    expect(recorded.exitCode, recorded.stdout).toBe(0)
    const step = (r: Report) => stepOf(r.steps, 'one-flag')!
    expect(step(recorded.report as Report).verdict).toBe('passed')
    ;(await import('node:fs')).rmSync(copy)
    const replayed = await runVerify([...common, '--mode', 'replay'])
    expect(replayed.exitCode, replayed.stdout + replayed.stderr).toBe(0)
    // The same judgement, the baseline's path as the recording keeps it (this machine's temp folder as <tmp>).
    expect(step(replayed.report as Report)).toMatchObject({
      verdict: 'passed',
      observed: scrubLocalPaths(step(recorded.report as Report).observed),
    })
    expect(step(replayed.report as Report).observed).toContain('--baseline-report <tmp>/')
  }, 90_000)

  test('a fleet carries the step like the others: a target with a second change is red at one-flag, in its report and the fleet table', async () => {
    const e = await startEngine({ svc: 'of-bare', processName: NAME, port, args: ['--prefill-interleave', '1', '--stager-depth', '3'] })
    const file = join(dir, 'fleet.yaml')
    writeFileSync(
      file,
      [
        'defaults:',
        '  knob: PREFILL_INTERLEAVE',
        "  value: '1'",
        "  previous: '0'",
        '  host: local',
        'targets:',
        '  - svc: of-bare',
        `    base-url: ${e.baseUrl}`,
        `    process: ${NAME}`,
        `    baseline-report: ${bareBaseline}`,
        '',
      ].join('\n'),
    )
    let run
    try {
      run = await runVerify(['--targets', file, ...FAST], { engine: e })
    } finally {
      await e.stop()
    }
    expect(run.exitCode, run.stdout + run.stderr).toBe(1)
    const fleet = run.report as unknown as FleetReport
    const target = fleet.targets[0]!.report
    expect(target.steps.filter((s) => s.verdict === 'failed').map((s) => s.id)).toEqual(['one-flag'])
    expect(stepOf(target.steps, 'one-flag')!.evidence.changes).toEqual([
      { what: '--stager-depth', before: 'absent', now: '--stager-depth=3' },
    ])
    expect(run.stdout).toMatch(/one-flag/)
  }, 90_000)

  test('the image changed under docker: red, naming both image ids', async () => {
    const docker = ['--runtime', 'docker']
    const base = await deploy('of-docker', [], docker, { image: 'registry.example/radiance:1.4.0' })
    expect(base.report.verdict).toBe('green')
    expect(base.step.evidence.record!.image).toBe(imageId('registry.example/radiance:1.4.0'))
    const path = saved('docker.json', base.report)
    const { report, step } = await deploy('of-docker', ['--prefill-interleave', '1'], [...docker, '--baseline-report', path], {
      image: 'registry.example/radiance:1.5.0',
    })
    expect(report.verdict).toBe('red')
    expect(step.evidence.changes).toEqual([
      { what: 'image', before: imageId('registry.example/radiance:1.4.0'), now: imageId('registry.example/radiance:1.5.0') },
    ])
  }, 90_000)
})
