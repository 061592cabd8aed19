// The report schemas' validators as the tests use them (test/support/report-validators.ts): ajv's
// compiled code, kept between runs, judges every document as a fresh ajv compilation of the same
// schemas does (the same verdict and the same errors), and a kept file that is short or broken is
// made again.
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import { describe, expect, test } from 'vitest'
import {
  CACHE_DIR,
  ensureValidators,
  FLEET_SCHEMA_PATH,
  loadValidators,
  REPORT_SCHEMA_PATH,
  validatorsFile,
} from '../support/report-validators.ts'
import { cleanup, runVerify } from '../support/run-verify.ts'

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020
const reportText = readFileSync(REPORT_SCHEMA_PATH, 'utf8')
const fleetText = readFileSync(FLEET_SCHEMA_PATH, 'utf8')

/** The schemas compiled afresh, as report-schema.ts compiled them before the code was kept. */
function fresh() {
  const ajv = addFormats(new Ajv2020({ allErrors: true, strict: true }))
  const report = JSON.parse(reportText)
  ajv.addSchema(report)
  return { report: ajv.compile(report), fleet: ajv.compile(JSON.parse(fleetText)) }
}

describe('the kept validators', () => {
  test("judge a report, and reports broken in five ways (no verdict, an unknown verdict, a step's verdict unknown, steps no list, null), with the verdict and the errors of a fresh compilation", async () => {
    // The committed demo recording's report, replayed.
    const run = await runVerify(['--svc', 'demo', '--knob', 'PREFILL_INTERLEAVE', '--value', '1', '--mode', 'replay'])
    cleanup(run)
    const demo = JSON.parse(JSON.stringify(run.report)) as Record<string, unknown>
    const kept = loadValidators()
    const compiled = fresh()
    const { verdict: _v, ...noVerdict } = demo
    const steps = demo.steps as Array<Record<string, unknown>>
    const docs: unknown[] = [
      demo,
      noVerdict,
      { ...demo, verdict: 'purple' },
      { ...demo, steps: [{ ...steps[0], verdict: 'maybe' }, ...steps.slice(1)] },
      { ...demo, steps: 'all' },
      null,
    ]
    const judged = docs.map((doc) => {
      const ours = kept.report(doc)
      const theirs = compiled.report(doc)
      return { ours, theirs, sameErrors: JSON.stringify(kept.report.errors) === JSON.stringify(compiled.report.errors) }
    })
    expect(judged).toEqual([true, false, false, false, false, false].map((ok) => ({ ours: ok, theirs: ok, sameErrors: true })))
    expect([kept.fleet({ format: 'no fleet' }), compiled.fleet({ format: 'no fleet' })]).toEqual([false, false])
    expect(JSON.stringify(kept.fleet.errors)).toBe(JSON.stringify(compiled.fleet.errors))
  })

  test('are named by the schemas they were made from, kept while they load, and made again when the kept file is broken (the code of earlier schemas removed)', () => {
    // A folder of its own beside the kept code (its require() of ajv's runtime must resolve).
    const dir = join(CACHE_DIR, `test-${process.pid}-${Date.now()}`)
    try {
      const { file } = ensureValidators(dir)
      expect(file).toBe(validatorsFile(reportText, fleetText, dir))
      expect(validatorsFile(`${reportText} `, fleetText, dir)).not.toBe(file)
      const made = readFileSync(file, 'utf8')
      const before = statSync(file)
      expect(ensureValidators(dir).file).toBe(file)
      expect([statSync(file).ino, statSync(file).mtimeMs]).toEqual([before.ino, before.mtimeMs])
      writeFileSync(file, made.slice(0, 100))
      // The code of earlier schemas, left from before: removed when the file is made again.
      const earlier = join(dir, 'report-validators-0000000000000000.cjs')
      writeFileSync(earlier, made)
      // Made again, whole: the same code, and it judges.
      const again = ensureValidators(dir)
      expect([again.file, readFileSync(file, 'utf8') === made, again.validators.report(null)]).toEqual([file, true, false])
      expect(readdirSync(dir)).toEqual([basename(file)])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
