// The compiled validators of the published JSON Schemas (./report-schema.ts checks every report
// against them): ajv compiles the two schemas into code once, here, and that code is kept under
// node_modules/.cache/armproof, named by what it was made from (both schemas' text, ajv's and
// ajv-formats' versions, the options). Compiling took some 250 ms of CPU in each test worker that
// checks a report; `pnpm test`'s global setup makes the file before the workers start, and each
// worker then loads it. The code is ajv's own standalone output of the same compilation (the same
// options, formats and error objects); a file that is missing, short or unreadable is made again.
import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
export const REPORT_SCHEMA_PATH = join(ROOT, 'docs/schema/armproof-report-1.json')
export const FLEET_SCHEMA_PATH = join(ROOT, 'docs/schema/armproof-fleet-1.json')
/** Where the code is kept: under the checkout's node_modules, so its require() of ajv's runtime finds it. */
export const CACHE_DIR = join(ROOT, 'node_modules/.cache/armproof')

const OPTIONS = { allErrors: true, strict: true } as const
const PREFIX = 'report-validators-'

export interface Validators {
  report: ValidateFunction
  fleet: ValidateFunction
}

const version = (pkg: string): string => (createRequire(import.meta.url)(`${pkg}/package.json`) as { version: string }).version

/** Where the code compiled from these schema texts is kept (in `dir`). */
export function validatorsFile(reportText: string, fleetText: string, dir: string = CACHE_DIR): string {
  const key = createHash('sha256')
    .update(JSON.stringify([reportText, fleetText, version('ajv'), version('ajv-formats'), OPTIONS]))
    .digest('hex')
    .slice(0, 16)
  return join(dir, `${PREFIX}${key}.cjs`)
}

/** ajv's standalone code for both schemas (`module.exports.report`, `.fleet`). */
export function compileValidators(reportText: string, fleetText: string): string {
  // ajv itself is loaded only to compile (a worker that loads the kept code never loads it).
  const require = createRequire(import.meta.url)
  const { Ajv2020: Ajv } = require('ajv/dist/2020.js') as { Ajv2020: typeof Ajv2020 }
  const addFormats = require('ajv-formats') as (ajv: Ajv2020) => Ajv2020
  const standaloneCode = require('ajv/dist/standalone/index.js') as typeof import('ajv/dist/standalone/index.js').default
  const report = JSON.parse(reportText) as { $id: string }
  const fleet = JSON.parse(fleetText) as { $id: string }
  const ajv = addFormats(new Ajv({ ...OPTIONS, code: { source: true } }))
  ajv.addSchema(report)
  ajv.addSchema(fleet)
  return standaloneCode(ajv, { report: report.$id, fleet: fleet.$id })
}

/** The file's validators as it is now (never a copy an earlier require() kept), or undefined when it does not load. */
function loadFile(file: string): Validators | undefined {
  const require = createRequire(import.meta.url)
  try {
    delete require.cache[require.resolve(file)]
    const mod = require(file) as Partial<Validators>
    return typeof mod.report === 'function' && typeof mod.fleet === 'function' ? (mod as Validators) : undefined
  } catch {
    return undefined
  }
}

/** The validators of the schemas as they are now, from the kept file (in `dir`), which is made first when it is missing or does not load. */
export function ensureValidators(dir: string = CACHE_DIR): { file: string; validators: Validators } {
  const reportText = readFileSync(REPORT_SCHEMA_PATH, 'utf8')
  const fleetText = readFileSync(FLEET_SCHEMA_PATH, 'utf8')
  const file = validatorsFile(reportText, fleetText, dir)
  const kept = loadFile(file)
  if (kept) return { file, validators: kept }
  mkdirSync(dir, { recursive: true })
  // Written aside and renamed: a worker never loads half a file.
  const aside = `${file}.${process.pid}.tmp`
  try {
    writeFileSync(aside, compileValidators(reportText, fleetText))
    renameSync(aside, file)
  } finally {
    rmSync(aside, { force: true })
  }
  // Only the schemas as they are now are ever read: the code of earlier ones goes.
  for (const name of readdirSync(dir)) if (name.startsWith(PREFIX) && join(dir, name) !== file) rmSync(join(dir, name), { force: true })
  const made = loadFile(file)
  if (!made) throw new Error(`the compiled report validators at ${file} do not load`)
  return { file, validators: made }
}

/** The validators of the schemas as they are now: the kept code, made first when it is not there. */
export function loadValidators(): Validators {
  return ensureValidators().validators
}

/** vitest's global setup: the file made once, before the workers start. */
export default function setup(): void {
  ensureValidators()
}
