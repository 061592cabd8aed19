import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { loadConfig, type Target } from '../../helpers/config/load.ts'
import { CRASH_NEXT, STEP_TITLES, crashedStep, stepsFromTestCases, type CaseLike } from '../../helpers/report/collect.ts'
import { ReplayMiss } from '../../helpers/seams/replay.ts'
import { buildReport, reportJson, writeJson, type Report } from '../../helpers/report/json.ts'
import { junitXml } from '../../helpers/report/junit.ts'
import { markdownSummary } from '../../helpers/report/markdown.ts'
import { RunbookReporter } from '../../helpers/report/reporter.ts'
import { finalLine, header, sparkline, stepDetail, stepLine } from '../../helpers/report/terminal.ts'
import { STEP_IDS, stepResult, type StepFields, type StepId, type StepResult, type StepVerdict } from '../../helpers/steps/verdict.ts'
import type { StepEvidence } from '../../helpers/steps/evidence.ts'
import { checkedReport } from '../support/report-schema.ts'
import { DEMO_ARM } from '../support/demo-args.ts'

const API_KEY = 'sk-live-7f3a9c2e51'
const ROLLBACK = 'PREFILL_INTERLEAVE=0 then redeploy --service demo'
const METER = 'radiance:engine_steps_held_total'
const T0 = new Date('2025-05-01T10:00:00.000Z')
const T1 = new Date('2025-05-01T10:02:30.000Z')

function makeTarget(extra: string[] = []): Target {
  const argv = [...DEMO_ARM, '--previous', '0', '--base-url', 'http://gpu-7:8000', ...extra]
  const r = loadConfig({ argv, env: { VERIFY_API_KEY: API_KEY } })
  if (!r.ok) throw new Error(r.problems.map((p) => p.message).join('\n'))
  return r.target
}

/**
 * A step as the reports receive it. Its evidence here is partial (only what a test is about) or
 * hostile (keys and values a judge never writes): the reports must cope with both, so it is taken
 * as any record and handed on as the step's evidence type.
 */
function step(
  id: StepId,
  verdict: StepVerdict = 'passed',
  over: Partial<Omit<StepFields, 'verdict'>> & { evidence?: Record<string, unknown> } = {},
): StepResult {
  const { title = STEP_TITLES[id], durationMs = 1500, evidence = {}, ...rest } = over
  return stepResult(
    id,
    title,
    {
      verdict,
      expected: `${id} expected`,
      observed: `${id} observed`,
      where: `${id} where`,
      ...(verdict === 'passed' ? {} : { next: `${id} next` }),
      evidence: evidence as StepEvidence,
      ...rest,
    },
    durationMs,
  )
}

const movedMeter = {
  meter: { name: METER, labels: {}, first: 0, last: 3, movedAt: '2025-05-01T10:02:10.400Z', movedAfterMs: 400 },
  series: [
    { t: 0, v: 0 },
    { t: 200, v: 0 },
    { t: 400, v: 3 },
  ],
}
const flatMeter = {
  meter: { name: METER, labels: {}, first: 0, last: 0, movedAt: null, movedAfterMs: null },
  series: [
    { t: 0, v: 0 },
    { t: 1000, v: null },
    { t: 2000, v: 0 },
  ],
}
const RED_OBSERVED = `${METER} stayed at 0 for 5m 00s while 42 request(s) reached the engine`
const RED_NEXT =
  'the arm did nothing: the engine ignores --prefill-interleave; roll back with PREFILL_INTERLEAVE=0 and redeploy --service demo'

const greenSteps = STEP_IDS.map((id) => step(id, 'passed', id === 'meter' ? { evidence: movedMeter } : {}))
const redSteps = STEP_IDS.map((id) =>
  id === 'meter'
    ? step(id, 'failed', {
        expected: `${METER} leaves 0 within 5m 00s`,
        observed: RED_OBSERVED,
        where: 'GET http://gpu-7:8000/metrics',
        next: RED_NEXT,
        evidence: flatMeter,
      })
    : step(id),
)
const inconclusiveSteps = STEP_IDS.map((id) =>
  id === 'health'
    ? step(id, 'inconclusive', { observed: 'connection refused (loading) for 15m 00s', next: 'check the unit is up, then run again' })
    : step(id),
)

function fakeCase(name: string, meta: ReturnType<CaseLike['meta']>, state = 'passed', errors?: Array<{ message: string }>): CaseLike {
  return { name, meta: () => meta, result: () => ({ state, errors }) }
}
const crashed = stepsFromTestCases(
  [
    ...greenSteps.filter((s) => s.id !== 'argv' && s.id !== 'ledger').map((s) => fakeCase(s.title, { armproof: s, armproofStep: s.id })),
    fakeCase('the command line carries the flag', { armproofStep: 'argv' }, 'failed', [{ message: 'boom: cmdline had no NUL' }]),
  ],
  [{ message: 'socket hang up in afterAll' }],
)

const runs = [
  { name: 'green', steps: greenSteps, verdict: 'green', exitCode: 0 },
  { name: 'red at meter', steps: redSteps, verdict: 'red', exitCode: 1 },
  { name: 'inconclusive at health', steps: inconclusiveSteps, verdict: 'inconclusive', exitCode: 3 },
  { name: 'crashed at argv', steps: crashed.steps, verdict: 'inconclusive', exitCode: 3 },
] as const

function report(steps: readonly StepResult[], extra: Partial<Parameters<typeof buildReport>[0]> = {}): Report {
  return buildReport({ target: makeTarget(), steps, startedAt: T0, finishedAt: T1, ...extra })
}

const ELEMENT: Record<StepVerdict, string | null> = { passed: null, failed: 'failure', inconclusive: 'error', skipped: 'skipped' }

describe('JUnit XML', () => {
  test.each(runs)('the $name run has one testcase per step id, each with the element of its verdict', ({ steps }) => {
    const xml = junitXml(report(steps))
    const cases = [...xml.matchAll(/<testcase name="([^"]*)" classname="armproof\.demo" time="([\d.]+)">([\s\S]*?)<\/testcase>/g)]
    expect(cases.map((m) => m[1])).toEqual([...STEP_IDS])
    expect(xml.match(/<testsuite /g)).toHaveLength(1)
    expect(xml).toContain('<testsuite name="armproof demo PREFILL_INTERLEAVE" tests="10"')
    steps.forEach((s, i) => {
      const inner = cases[i]![3]!
      expect(cases[i]![2]).toBe((s.durationMs / 1000).toFixed(3))
      for (const [verdict, element] of Object.entries(ELEMENT)) {
        if (element) expect(inner.includes(`<${element} `), `${s.id} ${verdict}`).toBe(s.verdict === verdict)
      }
    })
    const count = (v: StepVerdict) => steps.filter((s) => s.verdict === v).length
    expect(xml).toContain(`failures="${count('failed')}" errors="${count('inconclusive')}" skipped="${count('skipped')}"`)
  })

  test('a failed step carries expected, observed, where and next in its failure', () => {
    const xml = junitXml(report(redSteps))
    expect(xml).toContain(
      `<failure message="${RED_OBSERVED}" type="failed">expected: ${METER} leaves 0 within 5m 00s\nobserved: ${RED_OBSERVED}\nwhere:    GET http://gpu-7:8000/metrics\nnext:     ${RED_NEXT}</failure>`,
    )
  })

  test('markup characters are escaped and characters illegal in XML are removed', () => {
    const nasty = `a <b> & "c" 'd'\x00\x07\x1b[31m\uFFFE\uD800 end\tx\ny`
    const xml = junitXml(report(STEP_IDS.map((id) => (id === 'help' ? step(id, 'inconclusive', { observed: nasty }) : step(id)))))
    expect(xml).toContain(`<error message="a &lt;b&gt; &amp; &quot;c&quot; &apos;d&apos;[31m end&#9;x&#10;y" type="inconclusive">`)
    expect(xml).toContain(`observed: a &lt;b&gt; &amp; "c" 'd'[31m end\tx\ny`)
    expect(xml).not.toMatch(/[\x00-\x08\x0b\x0c\x0e-\x1f\uFFFE\uD800]/)
  })

  test('a skipped step becomes a skipped element with its reason', () => {
    const xml = junitXml(
      report(
        STEP_IDS.map((id) =>
          id === 'dropins' ? step(id, 'skipped', { observed: 'skipped by --no-dropin-check', intendedSkip: true }) : step(id),
        ),
      ),
    )
    expect(xml).toContain('<skipped message="skipped by --no-dropin-check"/>')
  })
})

describe('JSON report', () => {
  test.each(runs)('the $name run has the contract fields, its verdict and exit code', ({ steps, verdict, exitCode }) => {
    const r = report(steps)
    // Changed on purpose (issue 26), additively: the format tag, endpoint and host come first, then the contract's fields in their order.
    expect(Object.keys(r)).toEqual([
      'format',
      'endpoint',
      'host',
      'svc',
      'knob',
      'expected',
      'previous',
      'mode',
      'verdict',
      'startedAt',
      'finishedAt',
      'steps',
      'meter',
      'rollback',
      'error',
      'notes',
      'exitCode',
      'tool',
      'profile',
      'run',
    ])
    expect(r.format).toBe('armproof-report/1')
    // Added (issue 35): the profile the engine was read by, and whether a real build's output backs it.
    expect(r.profile).toMatchObject({
      name: 'radiance',
      verifiedAgainst: null,
      unverified: expect.stringContaining('not verified against a real build'),
    })
    expect(checkedReport(r)).toBe(r)
    // Added: the run's identity (mode, declared skips, the options it was judged with) and its digest.
    expect(r.run).toMatchObject({ mode: 'live', skips: [], target: { svc: 'demo', knob: 'PREFILL_INTERLEAVE', value: '1' } })
    expect(r.run!.id).toMatch(/^[0-9a-f]{64}$/)
    expect(r).toMatchObject({
      svc: 'demo',
      knob: 'PREFILL_INTERLEAVE',
      expected: '1',
      previous: '0',
      mode: 'live',
      verdict,
      exitCode,
      startedAt: T0.toISOString(),
      finishedAt: T1.toISOString(),
      tool: { name: 'armproof' },
    })
    expect(r.rollback).toBe(ROLLBACK)
    expect(r.steps.map((s) => s.id)).toEqual([...STEP_IDS])
    expect(Object.keys(r.steps[0]!)).toEqual(['id', 'title', 'verdict', 'expected', 'observed', 'where', 'evidence', 'durationMs'])
  })

  test('the meter comes from the meter step: first, last and when it moved', () => {
    expect(report(greenSteps).meter).toMatchObject({ name: METER, first: 0, last: 3, movedAt: '2025-05-01T10:02:10.400Z' })
    expect(report(redSteps).meter).toMatchObject({ name: METER, first: 0, last: 0, movedAt: null })
  })

  test('the meter says what proved a passed step: a rise, or above zero since before this run; a step that did not pass proved nothing', () => {
    expect(report(greenSteps).meter!.proof).toBeNull()
    const before = {
      meter: { name: METER, labels: {}, first: 7, last: 7, movedAt: null, movedAfterMs: null, proof: 'before-run' },
      series: [
        { t: 0, v: 7 },
        { t: 300, v: 7 },
      ],
    }
    const r = report(STEP_IDS.map((id) => step(id, 'passed', id === 'meter' ? { evidence: before } : {})))
    expect(r.meter).toMatchObject({ first: 7, last: 7, proof: 'before-run' })
    expect(finalLine(r)).toContain('proven on demo (meter 7 → 7, above 0 since before this run in the process argv read)')
    const rose = report(
      STEP_IDS.map((id) =>
        step(id, 'passed', id === 'meter' ? { evidence: { ...movedMeter, meter: { ...movedMeter.meter, proof: 'rose' } } } : {}),
      ),
    )
    expect(rose.meter!.proof).toBe('rose')
    expect(
      report(
        STEP_IDS.map((id) => step(id, 'passed', id === 'meter' ? { evidence: { meter: { ...movedMeter.meter, proof: 'anything' } } } : {})),
      ).meter!.proof,
    ).toBeNull()
  })

  test('a knob without a meter has meter null, and the rollback falls back to the catalog default', () => {
    const target = { ...makeTarget(), knob: 'CHECKPOINT_SLOTS' as const, value: '4', previous: null }
    const r = buildReport({ target, steps: greenSteps, startedAt: T0, finishedAt: T1 })
    expect(r.meter).toBeNull()
    expect(r.rollback).toBe('CHECKPOINT_SLOTS=auto then redeploy --service demo')
  })

  test('an enum knob takes its default from --help when the catalog has none', () => {
    const target = { ...makeTarget(), knob: 'CHECKPOINT_POLICY' as const, value: null, previous: null }
    const r = buildReport({ target, steps: greenSteps, startedAt: T0, finishedAt: T1, defaultFromHelp: 'keep' })
    expect(r).toMatchObject({ expected: 'keep', previous: 'keep', rollback: 'CHECKPOINT_POLICY=keep then redeploy --service demo' })
  })

  test('the API key appears nowhere, even when a step echoed it', () => {
    const leaky = STEP_IDS.map((id) =>
      id === 'probe.tools'
        ? step(id, 'failed', {
            observed: `401 for Authorization: Bearer ${API_KEY}`,
            evidence: { headers: { authorization: `Bearer ${API_KEY}` }, [API_KEY]: [API_KEY] },
          })
        : step(id),
    )
    const r = report(leaky)
    const text = reportJson(r) + junitXml(r) + markdownSummary(r) + finalLine(r)
    expect(text).not.toContain(API_KEY)
    expect(r.steps[6]!.observed).toBe('401 for Authorization: Bearer [redacted]')
    expect(JSON.stringify(r)).not.toMatch(/apiKey/)
  })

  test('verdict error only when an error is passed, and a note keeps a green run from green', () => {
    expect(report(greenSteps).verdict).toBe('green')
    expect(report(greenSteps, { error: 'vitest did not start' })).toMatchObject({
      verdict: 'error',
      exitCode: 2,
      error: 'vitest did not start',
    })
    expect(report(greenSteps, { unhandled: ['unhandled error: EPIPE'] })).toMatchObject({
      verdict: 'inconclusive',
      exitCode: 3,
      notes: ['unhandled error: EPIPE'],
    })
  })

  test('writeJson creates the folder and leaves no temp file behind', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'armproof-report-'))
    try {
      const path = join(dir, 'nested', 'deeper', 'report.json')
      await writeJson(path, report(greenSteps))
      expect(JSON.parse(await readFile(path, 'utf8'))).toEqual(report(greenSteps))
      expect(await readdir(join(dir, 'nested', 'deeper'))).toEqual(['report.json'])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

describe('collecting steps from test cases', () => {
  test('a crashed step is inconclusive with the error, a missing step is not run, unhandled errors are returned', () => {
    const argv = crashed.steps[2]!
    expect(argv).toMatchObject({
      id: 'argv',
      verdict: 'inconclusive',
      observed: 'armproof error: boom: cmdline had no NUL',
      next: CRASH_NEXT,
    })
    expect(crashed.steps[3]).toMatchObject({ id: 'ledger', verdict: 'inconclusive', observed: 'not run' })
    expect(crashed.steps.map((s) => s.id)).toEqual([...STEP_IDS])
    expect(crashed.unhandled).toEqual(['unhandled error: socket hang up in afterAll'])
  })

  test('a replay miss is read from its fields as vitest hands the error over, never from its message', () => {
    // A fixtures folder whose name holds the message's own separator: splitting the message would cut it.
    const miss = new ReplayMiss(
      'No recorded response for GET /health in fx. Re-record: odd/http.json',
      "pnpm verify --svc demo --mode record --fixtures 'fx. Re-record: odd'",
    )
    const asVitestHandsIt = Object.fromEntries(
      Object.getOwnPropertyNames(miss).map((k) => [k, (miss as unknown as Record<string, unknown>)[k]]),
    ) as { message: string; name?: string }
    expect(asVitestHandsIt).not.toBeInstanceOf(Error)
    const step = crashedStep('health', {
      name: 'health',
      meta: () => ({ armproofStep: 'health' }),
      result: () => ({ state: 'failed', errors: [{ ...asVitestHandsIt, name: 'ReplayMiss' }] }),
    })
    expect(step).toMatchObject({
      verdict: 'inconclusive',
      observed: 'replay miss: No recorded response for GET /health in fx. Re-record: odd/http.json',
      next: "re-record: pnpm verify --svc demo --mode record --fixtures 'fx. Re-record: odd'",
      where: 'the fixtures (--fixtures)',
    })
    expect(step.evidence.error).toEqual({ name: 'ReplayMiss', message: miss.message, stack: null })
    // One without a command (an effect replay): the generic next step.
    const bare = crashedStep('health', {
      name: 'health',
      meta: () => ({}),
      result: () => ({ state: 'failed', errors: [new ReplayMiss('the replay read the clock more often than the recording')] }),
    })
    expect(bare).toMatchObject({
      observed: 'replay miss: the replay read the clock more often than the recording',
      next: 're-record the run with --mode record',
    })
  })

  test('a module error explains the steps that never ran', () => {
    const { steps } = stepsFromTestCases([], [], [{ message: 'connect ECONNREFUSED', name: 'HttpError' }])
    expect(steps.every((s) => s.verdict === 'inconclusive' && s.observed === 'not run: HttpError: connect ECONNREFUSED')).toBe(true)
  })
})

function terminalOutput(steps: readonly StepResult[], color = false): string {
  const lines = steps.flatMap((s, i) => [stepLine(s, i, { color }), stepDetail(s, { color })].filter(Boolean))
  return [...lines, finalLine(report(steps), { color, reportPath: 'out/r.json' })].join('\n')
}

describe('terminal output', () => {
  test('a red run shows the failed step in full, and the final line says RED and the next step', () => {
    const out = terminalOutput(redSteps)
    expect(out).toContain(` 9 ✗ meter        ${STEP_TITLES.meter}  — ${RED_OBSERVED.slice(0, 40)}`)
    for (const part of [
      `expected: ${METER} leaves 0 within 5m 00s`,
      `observed: ${RED_OBSERVED}`,
      'where:    GET http://gpu-7:8000/metrics',
      `next:     ${RED_NEXT}`,
    ])
      expect(out).toContain(part)
    expect(out.split('\n').at(-1)).toBe(`RED · meter failed: ${RED_OBSERVED} · next: ${RED_NEXT}`)
  })

  test('a green run ends with the proof, the writeback command and the rollback', () => {
    expect(finalLine(report(greenSteps), { reportPath: 'out/r.json' })).toBe(
      `GREEN · PREFILL_INTERLEAVE=1 proven on demo (meter 0 → 3, moved after 400ms) · next: pnpm writeback --report out/r.json --vault <dir> · rollback: ${ROLLBACK}`,
    )
  })

  test('an inconclusive run names the step that could not be observed', () => {
    expect(finalLine(report(inconclusiveSteps))).toBe(
      'INCONCLUSIVE · health: connection refused (loading) for 15m 00s · next: check the unit is up, then run again',
    )
  })

  test.each(runs)('the $name run has no ANSI escapes without colour, and has them with colour', ({ steps }) => {
    expect(terminalOutput(steps)).not.toMatch(/\x1b/)
    expect(terminalOutput(steps, true)).toMatch(/\x1b\[\d+m/)
  })

  test('a long observed value is cut to the width in the step line, never in the detail', () => {
    const long = step('ledger', 'failed', { observed: `resolved ${'x'.repeat(300)} end` })
    const line = stepLine(long, 3, { width: 80 })
    expect([...line]).toHaveLength(80)
    expect(line.endsWith('…')).toBe(true)
    expect(stepDetail(long)).toContain(`observed: resolved ${'x'.repeat(300)} end`)
  })

  test('the sparkline renders a known series, with gaps for missing values', () => {
    expect(sparkline([0, 0, 1, 3, null, 7].map((v) => ({ v })))).toBe('▁▁▂▄ █')
    expect(sparkline([{ v: 5 }, { v: 5 }])).toBe('▁▁')
    expect(stepDetail(redSteps[8]!)).toContain('meter:    ▁ ▁  0 → 0, never moved')
    expect(stepDetail(step('meter', 'inconclusive', { evidence: movedMeter }))).toContain('meter:    ▁▁█  0 → 3, moved after 400ms')
  })

  test('the header names service, knob change, mode, endpoint and host', () => {
    expect(header(makeTarget(['--host', 'ops@gpu-7:2222'])).split('\n')).toEqual([
      'armproof · demo · PREFILL_INTERLEAVE 0 → 1 · live · http://gpu-7:8000 · host ops@gpu-7:2222',
      // radiance's profile has no captured real output behind it: said under the header of every run.
      expect.stringMatching(/^ {2}note: the radiance profile is not verified against a real build: /),
    ])
    // A profile a real build's corpus backs says nothing more.
    expect(header(makeTarget(['--engine', 'llama.cpp', '--knob', 'PARALLEL', '--value', '2', '--previous', '3']))).not.toContain('\n')
  })
})

describe('Markdown summary', () => {
  test('a red run has the verdict heading, one row per step, the next step and the rollback', () => {
    const md = markdownSummary(report(STEP_IDS.map((id) => (id === 'meter' ? { ...redSteps[8]!, observed: 'a | b\nc' } : step(id)))))
    expect(md.split('\n')[0]).toBe('### ❌ armproof RED: PREFILL_INTERLEAVE=1 on demo')
    expect(md.match(/^\| `[a-z.-]+` \|/gm)).toHaveLength(10)
    expect(md).toContain('| `meter` | ✗ failed | a \\| b c |')
    expect(md).toContain(`**Next:** ${RED_NEXT}`)
    expect(md).toContain(`**Rollback:** \`${ROLLBACK}\``)
  })
})

describe('RunbookReporter', () => {
  function drive(live: boolean) {
    const log: string[] = []
    const reporter = new RunbookReporter({
      target: makeTarget(),
      out: { write: (s: string) => log.push(`out:${s}`) },
      err: { write: (s: string) => log.push(`err:${s}`) },
      color: false,
      live,
    })
    const cases = new Map(
      redSteps.map((s) => [s.id, fakeCase(s.title, { armproof: s, armproofStep: s.id }, s.verdict === 'passed' ? 'passed' : 'failed')]),
    )
    reporter.onTestRunStart()
    for (const id of ['dropins', 'help', 'argv', 'ledger', 'health', 'probe.vision', 'probe.exact', 'probe.tools'] as const)
      reporter.onTestCaseResult(cases.get(id)!)
    reporter.onUserConsoleLog()
    reporter.onTestCaseAnnotate(cases.get('meter'), { type: 'armproof:progress', message: `watching ${METER} = 0 · 5s of 5m` })
    reporter.onTestCaseAnnotate(cases.get('meter'), { type: 'notice', message: 'not progress' })
    reporter.onTestCaseResult(cases.get('meter')!)
    const module = { children: { allTests: () => cases.values() }, errors: () => [] }
    reporter.onTestRunEnd([module], [{ message: 'EPIPE' }], 'failed')
    return { log, reporter }
  }

  test('prints the header, then the step lines in arrival order numbered by step id, with detail under the failed step', () => {
    const { log, reporter } = drive(false)
    const out = log
      .filter((l) => l.startsWith('out:'))
      .map((l) => l.slice(4))
      .join('')
    expect(out.startsWith('armproof · demo · PREFILL_INTERLEAVE 0 → 1')).toBe(true)
    const numbers = [...out.matchAll(/^ ?(\d) [✓✗?–] (\S+)/gm)].map((m) => `${m[1]} ${m[2]}`)
    expect(numbers).toEqual([
      '1 dropins',
      '2 help',
      '3 argv',
      '4 ledger',
      '5 health',
      '8 probe.vision',
      '6 probe.exact',
      '7 probe.tools',
      '9 meter',
    ])
    expect(out).toMatch(/9 ✗ meter.*\n {5}expected: /)
    expect(out).toContain('  ! unhandled error: EPIPE')
    expect(reporter.steps().map((s) => s.id)).toEqual([...STEP_IDS])
    expect(reporter.unhandled()).toEqual(['unhandled error: EPIPE'])
  })

  test('shows progress on err: one rewritten line when live, cleared before the next step line; plain lines in a log', () => {
    // Without a terminal (CI, a pipe): a plain line, never a carriage return or an escape.
    expect(drive(false).log.filter((l) => l.startsWith('err:'))).toEqual([`err:  … watching ${METER} = 0 · 5s of 5m\n`])
    const { log } = drive(true)
    // The spinner turns at each redraw (helpers/report/live-line.ts); the text is the step's.
    const shown = log.indexOf(`err:\r\x1b[K  ⠋ watching ${METER} = 0 · 5s of 5m`)
    expect(shown).toBeGreaterThan(0)
    expect(log[shown + 1]).toBe('err:\r\x1b[K')
    expect(log[shown + 2]).toMatch(/^out: 9 ✗ meter/)
    expect(log.filter((l) => l.includes('not progress'))).toEqual([])
  })
})

describe('a step that says passed while its test failed', () => {
  test('is not counted as passed', async () => {
    const { stepFromTestCase } = await import('../../helpers/report/collect.ts')
    const passed = {
      id: 'argv',
      title: 't',
      verdict: 'passed',
      expected: 'e',
      observed: 'o',
      where: 'w',
      evidence: {},
      durationMs: 1,
    } as const
    const step = stepFromTestCase({
      name: 't',
      meta: () => ({ armproof: { ...passed }, armproofStep: 'argv' }),
      result: () => ({ state: 'failed', errors: [{ message: 'afterEach hook threw' }] }),
    } as never)
    expect(step?.verdict).toBe('inconclusive')
    expect(step?.observed).toContain('afterEach hook threw')
  })
})
