// The published JSON Schemas of the reports (docs/schema/), checked by ajv: the committed
// recordings' reports and a fresh live run's fit them, every field a report carries is described
// in them (so the schema cannot fall behind the report), and they refuse what is not a report.
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { REPORT_FORMAT } from '../../helpers/report/head.ts'
import { FLEET_FORMAT, type FleetReport } from '../../helpers/fleet/report.ts'
import type { Report } from '../../helpers/report/json.ts'
import { cleanup, ROOT, runVerify, armedArgs } from '../support/run-verify.ts'
import {
  checkedFleetReport,
  checkedReport,
  fleetSchema,
  reportSchema,
  schemaProblems,
  undocumented,
  type Json,
} from '../support/report-schema.ts'
import { writeTargets } from '../support/fleet.ts'
import { armedEngine } from '../support/armed-engine.ts'

describe('the committed recordings replay to reports that fit the schema', () => {
  test.concurrent.each([
    ['demo', 'green'],
    ['demo-ignored', 'red'],
  ])('fixtures/%s: a %s report, every field described', async (svc, verdict) => {
    const run = await runVerify(['--svc', svc, '--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--mode', 'replay'])
    // runVerify has already put it through the schema (test/support/run-verify.ts); once more, here, by name.
    const report = checkedReport(run.report!)
    expect([report.format, report.verdict, report.mode, report.host]).toEqual([REPORT_FORMAT, verdict, 'replay', 'local'])
    expect(report.recording?.digest).toMatch(/^[0-9a-f]{64}$/)
    expect(undocumented(report, reportSchema, '')).toEqual([])
    cleanup(run)
  })
})

describe('a fleet run', () => {
  test("replayed from the committed recordings: its report fits the fleet schema, and every field it carries (fleet.run, each target's index and report) is described", async () => {
    const file = writeTargets(
      { knob: 'PREFILL_INTERLEAVE', value: '1' },
      ['demo', 'demo-ignored'].map((svc) => ({ svc, fixtures: join(ROOT, `fixtures/${svc}/PREFILL_INTERLEAVE`) })),
    )
    const run = await runVerify(['--targets', file, '--mode', 'replay'])
    expect(run.exitCode, run.stdout + run.stderr).toBe(1)
    const fleet = checkedFleetReport(run.report as unknown as FleetReport)
    expect(fleet.fleet.run?.targets).toHaveLength(2)
    expect(fleet.targets.map((t) => [t.name, t.index])).toEqual([
      ['demo', 0],
      ['demo-ignored', 1],
    ])
    expect(undocumented(fleet, fleetSchema, '')).toEqual([])
    cleanup(run)
  })
})

describe('a fresh live run', () => {
  const armed = armedEngine('schema-live', 'rschema-live')

  test('writes a report that fits the schema, names its endpoint and host at the top, and has no field the schema does not describe', async () => {
    const engine = armed()
    const run = await runVerify(armedArgs(engine), { engine })
    expect(run.exitCode, run.stdout + run.stderr).toBe(0)
    const report = run.report!
    expect(Object.keys(report).slice(0, 4)).toEqual(['format', 'endpoint', 'host', 'svc'])
    expect([report.format, report.endpoint, report.host]).toEqual([REPORT_FORMAT, engine.baseUrl, 'local'])
    expect(undocumented(report, reportSchema, '')).toEqual([])
    cleanup(run)
  })
})

describe('the schemas refuse what is not a report', () => {
  const base = (): Report =>
    ({
      format: REPORT_FORMAT,
      endpoint: 'http://gpu-7:8000',
      host: 'deploy@gpu-7',
      svc: 'llm-7',
      knob: 'PREFILL_INTERLEAVE',
      expected: '1',
      previous: '0',
      mode: 'live',
      verdict: 'red',
      startedAt: '2026-11-30T02:30:00.000Z',
      finishedAt: '2026-11-30T02:31:05.120Z',
      steps: [
        {
          id: 'meter',
          title: 't',
          verdict: 'failed',
          expected: 'e',
          observed: 'o',
          where: 'GET http://gpu-7:8000/metrics',
          next: 'n',
          evidence: {},
          durationMs: 3,
        },
      ],
      meter: { name: 'radiance:engine_steps_held_total', first: 0, last: 0, movedAt: null, movedAfterMs: null, labels: {}, proof: null },
      rollback: 'PREFILL_INTERLEAVE=0 then redeploy --service llm-7',
      error: null,
      notes: [],
      exitCode: 1,
      tool: { name: 'armproof', version: '0.1.0' },
    }) as Report

  test('a minimal red report fits; each broken field is named; a field the schema does not describe is found', () => {
    expect(schemaProblems('report', base())).toBeUndefined()
    const extra = { ...base(), pid: 7, meter: { ...base().meter!, unit: 'steps' }, steps: [{ ...base().steps[0]!, weight: 1 }] }
    expect(undocumented(extra, reportSchema, '')).toEqual(['.steps[0].weight', '.meter.unit', '.pid'])
    // A step's evidence is described by its id: a meter field is known on the meter step only.
    const evidence = {
      ...base(),
      steps: [
        { ...base().steps[0]!, evidence: { scrapes: 3, word: 'x', prometheus: { url: 'u', polls: 1, shards: 2 } } },
        { ...base().steps[0]!, id: 'probe.exact', evidence: { word: 'x', scrapes: 3 } },
      ],
    }
    expect(undocumented(evidence, reportSchema, '')).toEqual([
      '.steps[0].evidence.word',
      '.steps[0].evidence.prometheus.shards',
      '.steps[1].evidence.scrapes',
    ])
    const broken: Array<[string, (r: Json) => void, RegExp]> = [
      ['no format', (r) => delete r.format, /required property 'format'/],
      ['another format', (r) => (r.format = 'armproof-report/2'), /\/format must be equal to constant/],
      ['a verdict word the contract lacks', (r) => (r.verdict = 'mostly-green'), /\/verdict must be equal to one of the allowed values/],
      ['green with a non-zero exit', (r) => ((r.verdict = 'green'), (r.exitCode = 1)), /\/exitCode must be equal to constant/],
      ['an unknown step id', (r) => ((r.steps as Json[])[0]!.id = 'vibes'), /\/steps\/0\/id must be equal to one of the allowed values/],
      ['a time that is no time', (r) => (r.finishedAt = 'yesterday'), /\/finishedAt must match format "date-time"/],
      ['an endpoint that is no http URL', (r) => (r.endpoint = 'gpu-7:8000'), /\/endpoint must match pattern/],
      [
        'a replay recording without recordedAt',
        (r) => (r.recording = { fixtures: 'f', digest: 'a'.repeat(64), recordedAt: '2026-11-30T00:00:00.000Z', recordedVerdict: 'green' }),
        /must have property recordedAt when property recording is present/,
      ],
    ]
    for (const [what, spoil, says] of broken) {
      const r = base() as unknown as Json
      spoil(r)
      expect(schemaProblems('report', r), what).toMatch(says)
    }
  })

  test("the fleet schema checks each target's report with the one-target schema", () => {
    const fleet = {
      format: FLEET_FORMAT,
      verdict: 'red',
      exitCode: 1,
      startedAt: '2026-11-30T02:30:00.000Z',
      finishedAt: '2026-11-30T02:31:05.120Z',
      fleet: { file: 'fleet.yaml', total: 1, shards: null, concurrency: 8 },
      targets: [{ name: 'llm-7', report: base() }],
      tool: { name: 'armproof', version: '0.1.0' },
    }
    expect(schemaProblems('fleet', fleet)).toBeUndefined()
    expect(schemaProblems('fleet', { ...fleet, targets: [{ name: 'llm-7', report: { ...base(), steps: 'nine' } }] })).toMatch(
      /\/targets\/0\/report\/steps must be array/,
    )
    expect(schemaProblems('fleet', { ...fleet, format: REPORT_FORMAT })).toMatch(/\/format must be equal to constant/)
    expect(fleetSchema.$id).not.toBe(reportSchema.$id)
  })
})
