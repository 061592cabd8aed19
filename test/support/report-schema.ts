// The published JSON Schemas (docs/schema/armproof-report-1.json, armproof-fleet-1.json), checked
// by a real validator (ajv, draft 2020-12, with its formats; compiled once, ./report-validators.ts): every report the tests read or
// build goes through `checked*`, so a report the schema would refuse, or one carrying a field it
// does not describe, fails the test that made it.
import { readFileSync } from 'node:fs'
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js'
import type { Report } from '../../helpers/report/json.ts'
import type { FleetReport } from '../../helpers/fleet/report.ts'
import { FLEET_SCHEMA_PATH, loadValidators, REPORT_SCHEMA_PATH } from './report-validators.ts'

export { FLEET_SCHEMA_PATH, REPORT_SCHEMA_PATH }

export const reportSchema = JSON.parse(readFileSync(REPORT_SCHEMA_PATH, 'utf8')) as Record<string, unknown>
export const fleetSchema = JSON.parse(readFileSync(FLEET_SCHEMA_PATH, 'utf8')) as Record<string, unknown>

// ajv's validators, compiled once for the whole run (./report-validators.ts).
const { report: validateReport, fleet: validateFleet } = loadValidators()

export type Json = Record<string, unknown>

/** The schema node `#/$defs/<name>` (of the report's schema), the report's schema by its $id, or the node itself. */
function resolveRef(node: Json): Json {
  const ref = node.$ref
  if (ref === reportSchema.$id) return reportSchema
  if (typeof ref !== 'string' || !ref.startsWith('#/$defs/')) return node
  return (reportSchema.$defs as Record<string, Json>)[ref.slice('#/$defs/'.length)]!
}

/** Whether `doc` meets an `if` made of consts on its properties (a step's id, a verdict). */
function meets(doc: unknown, condition: Json): boolean {
  const properties = condition.properties as Record<string, Json> | undefined
  if (!properties || doc === null || typeof doc !== 'object') return false
  return Object.entries(properties).every(([k, p]) => !('const' in p) || (doc as Json)[k] === p.const)
}

/** The schema nodes `doc` meets at `node`: the node, its oneOf options, and each allOf `then` whose `if` it meets (a step's evidence by its id). */
function nodesOf(doc: unknown, node: Json): Json[] {
  const schema = resolveRef(node)
  const options = [schema, ...((schema.oneOf as Json[] | undefined) ?? []).map(resolveRef)]
  const conditional = ((schema.allOf as Json[] | undefined) ?? [])
    .filter((c) => c.if && c.then && meets(doc, c.if as Json))
    .flatMap((c) => nodesOf(doc, c.then as Json))
  return [...options, ...conditional]
}

/** Every key path of `doc` the schema does not name (objects described as free-form, like a record of labels, are not walked). */
export function undocumented(doc: unknown, node: Json | Json[], path: string): string[] {
  const nodes = (Array.isArray(node) ? node : [node]).flatMap((n) => nodesOf(doc, n))
  if (Array.isArray(doc)) {
    const items = nodes.flatMap((o) => (o.items ? [o.items as Json] : []))
    return items.length ? doc.flatMap((d, i) => undocumented(d, items, `${path}[${i}]`)) : []
  }
  if (doc === null || typeof doc !== 'object') return []
  const described = nodes.flatMap((o) => (o.properties ? [o.properties as Record<string, Json>] : []))
  if (described.length === 0) return []
  return Object.entries(doc).flatMap(([k, v]) => {
    const named = described.flatMap((p) => (p[k] ? [p[k]!] : []))
    return named.length ? undocumented(v, named, `${path}.${k}`) : [`${path}.${k}`]
  })
}

function problems(errors: readonly ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .map((e) => `${e.instancePath || '/'} ${e.message ?? ''}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`)
    .join('; ')
}

/** Why `doc` does not fit the schema, or undefined when it does. */
export function schemaProblems(validate: 'report' | 'fleet', doc: unknown): string | undefined {
  const fn: ValidateFunction = validate === 'report' ? validateReport : validateFleet
  return fn(doc) ? undefined : problems(fn.errors)
}

/**
 * `doc`, after the schema of a one-target report accepted it and described every field it carries
 * (a step's evidence too: the schema cannot fall behind the report); throws with ajv's words, or
 * the fields not described, when not.
 */
export function checkedReport<T = Report>(doc: T): T {
  const why = schemaProblems('report', doc)
  if (why) throw new Error(`the report does not fit docs/schema/armproof-report-1.json: ${why}`)
  const unnamed = undocumented(doc, reportSchema, '')
  if (unnamed.length)
    throw new Error(`the report carries fields docs/schema/armproof-report-1.json does not describe: ${unnamed.join(', ')}`)
  return doc
}

/** As checkedReport, for a fleet report (each target's report checked by the one-target schema). */
export function checkedFleetReport<T = FleetReport>(doc: T): T {
  const why = schemaProblems('fleet', doc)
  if (why) throw new Error(`the fleet report does not fit docs/schema/armproof-fleet-1.json: ${why}`)
  const unnamed = undocumented(doc, fleetSchema, '')
  if (unnamed.length)
    throw new Error(`the fleet report carries fields docs/schema/armproof-fleet-1.json does not describe: ${unnamed.join(', ')}`)
  return doc
}

/** The JSON file at `path`, parsed and checked as a report (a fleet's when its format says so). */
export function readCheckedReport<T = Report>(path: string): T {
  const doc = JSON.parse(readFileSync(path, 'utf8')) as { format?: unknown }
  return (doc.format === 'armproof-fleet/1' ? checkedFleetReport(doc) : checkedReport(doc)) as T
}
