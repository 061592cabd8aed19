// The published JSON Schemas (docs/schema/armproof-report-1.json, armproof-fleet-1.json), checked
// by a real validator (ajv, draft 2020-12, with its formats): every report the tests read or
// build goes through `checked*`, so a report the schema would refuse fails the test that made it.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import type { Report } from '../../helpers/report/json.ts'
import type { FleetReport } from '../../helpers/fleet/report.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020

export const REPORT_SCHEMA_PATH = join(ROOT, 'docs/schema/armproof-report-1.json')
export const FLEET_SCHEMA_PATH = join(ROOT, 'docs/schema/armproof-fleet-1.json')

export const reportSchema = JSON.parse(readFileSync(REPORT_SCHEMA_PATH, 'utf8')) as Record<string, unknown>
export const fleetSchema = JSON.parse(readFileSync(FLEET_SCHEMA_PATH, 'utf8')) as Record<string, unknown>

const ajv = addFormats(new Ajv2020({ allErrors: true, strict: true }))
ajv.addSchema(reportSchema)
const validateReport = ajv.compile(reportSchema)
const validateFleet = ajv.compile(fleetSchema)

function problems(errors: readonly ErrorObject[] | null | undefined): string {
  return (errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`).join('; ')
}

/** Why `doc` does not fit the schema, or undefined when it does. */
export function schemaProblems(validate: 'report' | 'fleet', doc: unknown): string | undefined {
  const fn: ValidateFunction = validate === 'report' ? validateReport : validateFleet
  return fn(doc) ? undefined : problems(fn.errors)
}

/** `doc`, after the schema of a one-target report accepted it; throws with ajv's words when not. */
export function checkedReport<T = Report>(doc: T): T {
  const why = schemaProblems('report', doc)
  if (why) throw new Error(`the report does not fit docs/schema/armproof-report-1.json: ${why}`)
  return doc
}

/** As checkedReport, for a fleet report (each target's report checked by the one-target schema). */
export function checkedFleetReport<T = FleetReport>(doc: T): T {
  const why = schemaProblems('fleet', doc)
  if (why) throw new Error(`the fleet report does not fit docs/schema/armproof-fleet-1.json: ${why}`)
  return doc
}

/** The JSON file at `path`, parsed and checked as a report (a fleet's when its format says so). */
export function readCheckedReport<T = Report>(path: string): T {
  const doc = JSON.parse(readFileSync(path, 'utf8')) as { format?: unknown }
  return (doc.format === 'armproof-fleet/1' ? checkedFleetReport(doc) : checkedReport(doc)) as T
}
